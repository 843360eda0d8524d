// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Testing

/// The official GAEN v1.2 vectors (Fixtures/gaen-crypto-vectors.json; Fixtures/SOURCE.md says where
/// they come from).
struct Vectors: Decodable {
    struct Interval: Decodable {
        var index: Int
        var en_interval_number: UInt32
        var padded_data: String
        var rpi: String
        var aem: String
    }

    struct Metadata: Decodable {
        var plaintext: String
    }

    struct Verification: Decodable {
        var negative_check: String
    }

    var tek: String
    var rpik: String
    var aemk: String
    var metadata: Metadata
    var intervals: [Interval]
    var verification: Verification

    static func load() throws -> Vectors {
        let url = try #require(Bundle.module.url(forResource: "gaen-crypto-vectors", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }
}
