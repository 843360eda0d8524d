// SPDX-License-Identifier: GPL-3.0-or-later

import Detection
import ENCore
import Foundation
import Storage

/// `gaenctl tools score`'s inputs: an exposure configuration in any shape an authority served it,
/// and a windows file, read and scored together as the tool and the daemon score them. The first
/// two bytes are the configuration's length (big-endian); the configuration, then the windows.
enum ScoringFuzzing {
    static let today = UTCDay(daysSinceEpoch: 20_000)

    @Sendable static func configurationAndWindows(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let length = min(bytes.count - 2, Int(bytes[0]) << 8 | Int(bytes[1]))
        let configuration = (try? ExposureConfiguration(json: Data(bytes[2..<(2 + length)]))) ?? ExposureConfiguration(v2: V2Configuration())
        guard let file = try? WindowsFile(json: Data(bytes[(2 + length)...]), today: today) else { return }
        let scores = ExposureJudge.score(file.windows, configuration: configuration, today: today)
        _ = scores.verdict.classification
        _ = DetectionResult.json(scores.dailySummaries, verdict: scores.verdict).serialized()
    }
}
