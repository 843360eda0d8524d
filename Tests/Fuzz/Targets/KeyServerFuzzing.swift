// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import ENCore
import ENCrypto
import Foundation
import KeyServer

/// The key server's request bodies through `KeyServerAPI.handle`, the function gaen-keyserver's
/// HTTP server calls, with SQLite stores in the scratch directory.
///
/// The first byte picks the route; the rest is the body. A publish needs a certificate signed by
/// the verification server, which no fuzzer can forge, so route 1 signs one: every `$CERT` in the
/// body becomes a certificate over the body's own keys and hmacKey, and the validator and the
/// store see what a device holding a real certificate can send.
enum KeyServerFuzzing {
    /// A fixed clock, so that the seed requests' key intervals stay within the server's window.
    static let now = UnixTime(seconds: 1_763_900_000)  // 2025-11-23 12:13:20 UTC
    static let deviceKey = "device-key"
    static let adminKey = "admin-key"
    static let healthAuthority = "fuzz.example"
    static let placeholder = Array("$CERT".utf8)
    /// GAEND_FUZZ_VERBOSE=1 prints each answer: how to see whether a seed gets where it should.
    static let verbose = getenv("GAEND_FUZZ_VERBOSE") != nil

    struct Server: Sendable {
        var api: KeyServerAPI
        var certificateKey: ECDSAPrivateKey
        var settings: Verifier.Settings
    }

    static let server: Server = {
        do {
            let directory = FuzzInput.scratchDirectory + "/keyserver"
            guard mkdir(directory, 0o700) == 0 else { fatalError("gaend-fuzz: cannot make \(directory)") }
            let certificateKey = try ECDSAPrivateKey()
            let verifier = try Verifier(path: directory + "/verification.sqlite", signingKey: certificateKey, codeKey: try CodeHMACKey.random())
            var settings = KeyServerAPI.Settings(healthAuthorities: [healthAuthority], deviceAPIKey: deviceKey, exportDirectory: directory + "/www")
            settings.adminAPIKey = adminKey
            let check = CertificateCheck(
                verifierKey: try ECDSAPublicKey(pem: certificateKey.publicKeyPEM), issuer: verifier.settings.issuer, audience: verifier.settings.audience)
            let api = KeyServerAPI(store: try KeyStore(path: directory + "/keys.sqlite"), verifier: verifier, check: check, settings: settings, clock: { now })
            return Server(api: api, certificateKey: certificateKey, settings: verifier.settings)
        } catch {
            fatalError("gaend-fuzz: the key server cannot start: \(error)")
        }
    }()

    static let routes: [(path: String, key: String)] = [
        ("/v1/publish", deviceKey), ("/v1/publish", deviceKey), ("/api/verify", deviceKey), ("/api/certificate", deviceKey),
        ("/admin/codes", adminKey),
    ]

    @Sendable static func request(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let route = Int(first) % routes.count
        var body = Array(bytes.dropFirst())
        if route == 1 { body = certified(body) }
        let request = KeyServerAPI.Request(
            method: "POST", path: routes[route].path, headers: ["X-API-Key": routes[route].key, "Content-Type": "application/json"], body: body)
        let response = wait { await server.api.handle(request) }
        if verbose { print("\(routes[route].path) \(response.status) \(String(decoding: response.body.prefix(300), as: UTF8.self))") }
        // Every answer is JSON: a response the server cannot serialize would be a bug too.
        guard (try? JSONSerialization.jsonObject(with: Data(response.body))) != nil else {
            fatalError("gaend-fuzz: a \(response.status) answer that is not JSON: \(String(decoding: response.body, as: UTF8.self))")
        }
    }

    /// `body` with each `$CERT` replaced by a certificate for its keys, when it parses as a publish.
    static func certified(_ body: [UInt8]) -> [UInt8] {
        guard let request = try? PublishRequest(json: body), let hmacKey = request.hmacKey, let secret = Data(base64Encoded: hmacKey) else { return body }
        // The reference verification server's HMAC: keys sorted by their text, key.start.period.risk.
        let text = request.keys.sorted { $0.key < $1.key }.map { "\($0.key).\($0.rollingStartNumber).\($0.rollingPeriod).\($0.transmissionRisk)" }
            .joined(separator: ",")
        let tekmac = Data(Digest.hmacSHA256(key: Array(secret), message: Array(text.utf8))).base64EncodedString()
        let claims: [String: Any] = [
            "iss": server.settings.issuer, "aud": server.settings.audience, "tekmac": tekmac, "reportType": "confirmed",
            "iat": now.seconds, "nbf": now.seconds - 60, "exp": now.seconds + 900,
        ]
        guard let certificate = try? JWT.sign(claims, keyID: server.settings.keyID, key: server.certificateKey) else { return body }
        var result = [UInt8]()
        var index = 0
        while index < body.count {
            if body[index...].starts(with: placeholder) {
                result += Array(certificate.utf8)
                index += placeholder.count
            } else {
                result.append(body[index])
                index += 1
            }
        }
        return result
    }

    /// Runs an async call to its end from the fuzzer's thread, which is not one of the pool's.
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = AnswerBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

/// The answer of `KeyServerFuzzing.wait`'s task: written once by the task, read after the
/// semaphore says it was.
final class AnswerBox<T: Sendable>: @unchecked Sendable {
    var value: T?
}
