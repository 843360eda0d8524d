// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore
import ENCrypto
import Foundation
import Storage

/// The secret verification codes are stored under. The tables hold HMAC-SHA512(key, code) in
/// unpadded URL-safe base64, never a code, as ENVS pkg/database/database.go (`allAllowedHMACs`):
/// a copy of the database, a backup or a replica's disk then gives away no code a person could
/// still use. Every server that reads the same tables needs the same key.
package struct CodeHMACKey: Sendable {
    /// A key that cannot be used, or a key file that cannot be read or made.
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
        package init(_ message: String) { self.message = message }
    }

    /// SHA-512's output: fewer key bytes than that weaken the HMAC; 32 is the least accepted.
    package static let minimumBytes = 32
    /// What `loadOrCreate` makes: 32 random bytes.
    static let createdBytes = 32
    /// The key file's name in gaen-keyserver's data directory.
    package static let fileName = "code-hmac.key"
    /// A key file is one line of base64; anything bigger is not one.
    static let fileLimit = 4096

    let bytes: [UInt8]

    /// A key of at least `minimumBytes` bytes.
    package init(bytes: [UInt8]) throws(Failure) {
        guard bytes.count >= Self.minimumBytes else {
            throw Failure("the key is \(bytes.count) bytes; at least \(Self.minimumBytes) are needed")
        }
        self.bytes = bytes
    }

    /// A key written as base64 (standard or URL-safe, padded or not), with surrounding whitespace
    /// ignored: the form of the key file, the credential and the environment variable.
    package init(base64 text: String) throws(Failure) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, let bytes = PublishValidator.decodeBase64(trimmed) else {
            throw Failure("the key is not base64 (of \(Self.minimumBytes) or more bytes)")
        }
        try self.init(bytes: bytes)
    }

    /// A new key of `createdBytes` bytes from libcrypto's CSPRNG.
    package static func random() throws(Failure) -> CodeHMACKey {
        let random = SystemRandom()
        var bytes = [UInt8]()
        do {
            // Sixteen bytes at a time through `bytes16`: a typed-throws closure around `fill`
            // crashes Swift 6.3.1's IR generation (as in the advertiser).
            while bytes.count < createdBytes { bytes += try random.bytes16().bytes }
        } catch {
            throw Failure("no random bytes for a new key: \(error)")
        }
        return try CodeHMACKey(bytes: bytes)
    }

    /// The key as its file holds it: standard base64 and a line end.
    var fileContents: [UInt8] { Array((Data(bytes).base64EncodedString() + "\n").utf8) }

    /// The key in the file at `path`; if there is none, a new random one written there first
    /// (mode 0600, created whole or not at all). Two servers starting together on one data
    /// directory end up with the same key: the second to create reads the first one's file.
    package static func loadOrCreate(path: String) throws(Failure) -> CodeHMACKey {
        if let key = try load(path) { return key }
        let key = try random()
        let created: Bool
        do {
            created = try AtomicFile.create(key.fileContents, at: path)
        } catch {
            throw Failure("\(path) cannot be created: \(error)")
        }
        if created { return key }
        guard let existing = try load(path) else { throw Failure("\(path) vanished while it was being created") }
        return existing
    }

    /// The key in the file at `path`, or nil if there is no file.
    static func load(_ path: String) throws(Failure) -> CodeHMACKey? {
        let contents: [UInt8]?
        do {
            contents = try AtomicFile.read(path, limit: fileLimit)
        } catch {
            throw Failure("\(path) cannot be read: \(error)")
        }
        guard let contents else { return nil }
        do {
            return try CodeHMACKey(base64: String(decoding: contents, as: UTF8.self))
        } catch {
            throw Failure("\(path): \(error.message)")
        }
    }

    /// How `code` is stored and looked up: HMAC-SHA512 under this key, unpadded URL-safe base64.
    func hmac(_ code: String) -> String {
        Base64URL.encode(Digest.hmacSHA512(key: bytes, message: Array(code.utf8)))
    }
}
