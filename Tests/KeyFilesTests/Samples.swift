// SPDX-License-Identifier: GPL-3.0-or-later

import ENCrypto
import Foundation
@testable import KeyFiles
import Testing

/// Where the key file samples are: the project's fixtures, or ../shared/keyfiles beside the project.
enum Samples {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"), "fixture \(name)")
        return [UInt8](try Data(contentsOf: url))
    }

    /// `../shared/keyfiles` beside the package root, if it is there.
    static let sharedDirectory: String? = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Tests/KeyFilesTests/Samples.swift → package root
        let shared = url.deletingLastPathComponent().appendingPathComponent("shared/keyfiles").path
        return FileManager.default.fileExists(atPath: shared) ? shared : nil
    }()

    static func shared(_ name: String) throws -> [UInt8] {
        let directory = try #require(sharedDirectory)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
    }

    /// export.bin and export.sig of an archive `KeyFileArchive` refuses for its other entries,
    /// read past the refusal with the internal `ZipDirectory`, to say what the pair itself holds.
    static func pair(_ zip: [UInt8]) throws -> (binary: [UInt8], signature: [UInt8], export: KeyExport) {
        let directory = try ZipDirectory(zip)
        func entry(_ name: String) throws -> [UInt8] {
            let found = try #require(directory.entries.first { $0.path == name }, "\(name) in the archive")
            return try directory.contents(of: found) { _ in nil }
        }
        let binary = try entry(KeyFileArchive.binaryName)
        return (binary, try entry(KeyFileArchive.signatureName), try ExportBinary.parse(binary))
    }

    static func key(_ pem: String, id: String, version: String, shared: Bool = false) throws -> VerificationKey {
        let bytes = shared ? try Self.shared(pem) : try fixture(pem)
        return try VerificationKey(keyID: id, keyVersion: version, pem: String(decoding: bytes, as: UTF8.self))
    }
}
