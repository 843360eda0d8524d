// SPDX-License-Identifier: GPL-3.0-or-later

package import Foundation
import ZIPFoundation

/// Experiment 34's camera tracks (`computer-vision/N_name.zip`, read as they are): every subject's
/// floor position (metres) in every frame, or nothing in a frame where the cameras lost them. The
/// subjects' keys are the phones' ids (SOURCES.md: the positions' distances reproduce every
/// `ground_truth_distance` of the sqlite files).
package struct CameraTracks: Sendable {
    /// The cameras' rate (23.98 frames a second).
    package static let framesPerSecond = 23.98

    package var frames: Int
    package var positions: [String: [SIMD2<Float>?]]

    package struct Unreadable: Error, CustomStringConvertible {
        package var description: String
    }

    /// Reads the one track file of `zip` (its `.json` entry, not `homography.json` nor macOS's
    /// `__MACOSX` copies).
    package init(zip path: String) throws {
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        guard
            let entry = archive.first(where: {
                $0.type == .file && $0.path.hasSuffix(".json") && !$0.path.hasSuffix("homography.json") && !$0.path.hasPrefix("__MACOSX")
            })
        else { throw Unreadable(description: "\(path): no track file") }
        var data = Data()
        _ = try archive.extract(entry) { data.append($0) }
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let times = object["datetime"] as? [Any] else {
            throw Unreadable(description: "\(path): not an object of tracks with a datetime list")
        }
        frames = times.count
        var positions = [String: [SIMD2<Float>?]]()
        for (subject, value) in object where subject != "datetime" {
            guard let track = value as? [Any], track.count == frames else {
                throw Unreadable(description: "\(path): subject \(subject) has not one position per frame")
            }
            positions[subject] = track.map { point in
                guard let coordinates = point as? [Any], coordinates.count >= 2, let x = (coordinates[0] as? NSNumber)?.floatValue,
                    let y = (coordinates[1] as? NSNumber)?.floatValue
                else { return nil }
                return SIMD2(x, y)
            }
        }
        self.positions = positions
    }

    /// Minutes the two were closer than `distance` metres (strictly, as DP-3T computes it), over
    /// the frames where the cameras had both: a frame where one is lost is unknown, not far.
    package func minutes(_ a: String, _ b: String, closerThan distance: Float) -> Double {
        guard let first = positions[a], let second = positions[b] else { return 0 }
        var count = 0
        for frame in 0..<frames {
            guard let p = first[frame], let q = second[frame] else { continue }
            let difference = p - q
            if (difference * difference).sum() < distance * distance { count += 1 }
        }
        return Double(count) / Self.framesPerSecond / 60
    }
}
