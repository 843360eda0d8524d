// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Replay

/// A btsnoop capture as `gaenctl tools replay` and `tools log import` read one: written to a file
/// (the reader reads through a window), its own payloads and sightings taken, and made into rows
/// beside a second capture (a copy of itself under another receiver's name).
enum CaptureFuzzing {
    static let path = FuzzInput.scratchDirectory + "/capture.btsnoop"

    @Sendable static func capture(_ bytes: [UInt8]) {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { fatalError("gaend-fuzz: cannot write \(path)") }
        guard let first = try? CaptureSightings(path: path, receiver: "a"), let second = try? CaptureSightings(path: path, receiver: "b") else { return }
        let rows = CaptureReplay.rows([first, second], offsetSeconds: -7200)
        // Each receiver's sightings are those of its capture, less its own payloads' reflections.
        guard rows.filter({ $0.receiver == "a" }).count <= first.heard.count else { fatalError("more rows than sightings") }
    }
}
