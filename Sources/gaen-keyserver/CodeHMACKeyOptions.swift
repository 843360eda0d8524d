// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import KeyServer

/// Where the key that verification codes are stored under comes from (`CodeHMACKey`), for the
/// commands that issue or verify codes.
struct CodeHMACKeyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A file holding the key verification codes are stored under: base64 of 32 or more random bytes.",
            discussion: """
                Else the systemd credential code-hmac-key, else $GAEN_KEYSERVER_CODE_HMAC_KEY, else \(CodeHMACKey.fileName) in --data-dir, \
                made on first use. With --database one of the first three is needed, the same on every replica.
                """), completion: .file())
    var codeHMACKeyFile: String?

    static let source = APIKeySource(option: "--code-hmac-key", credential: "code-hmac-key")
    static let environment = "GAEN_KEYSERVER_CODE_HMAC_KEY"

    /// The key given, or with SQLite the data directory's own (made there once, 0600). Replicas on
    /// one PostgreSQL database each have a data directory of their own, so there a key made by one
    /// would not verify the codes another issued: one must be given.
    func key(_ server: ServerOptions) throws -> CodeHMACKey {
        if let (text, origin) = try Self.source.resolveWithOrigin(value: nil, file: codeHMACKeyFile, environment: Self.environment) {
            do {
                return try CodeHMACKey(base64: text)
            } catch {
                throw ValidationError("\(origin): \(error.message)")
            }
        }
        guard server.database == nil else {
            throw ValidationError(
                "--code-hmac-key-file: with --database every replica must store codes under the same key; give it as a file, "
                    + "the credential code-hmac-key or $\(Self.environment) (base64 of 32 or more random bytes, e.g. head -c 32 /dev/urandom | base64)")
        }
        guard let dataDir = server.dataDir else { throw ValidationError("--data-dir: needed unless --database names a PostgreSQL database") }
        do {
            return try CodeHMACKey.loadOrCreate(path: dataDir + "/" + CodeHMACKey.fileName)
        } catch {
            throw ValidationError("--data-dir: \(error.message)")
        }
    }
}
