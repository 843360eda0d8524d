// SPDX-License-Identifier: GPL-3.0-or-later

import GaendTestSupport
import ENCore
import KeyFiles
import Testing

/// Key metadata Google's matching tolerates never drops a key.
@Suite(.ownThreads) struct KeyMetadataTests {
    /// Keys written as a server with other ideas would write them, read back.
    func readBack(_ keys: [DiagnosisKey]) throws -> KeyExport {
        let writer = try Signer(id: "310").writer
        var export = Signer.export
        export.keys = keys
        return try ExportBinary.parse(writer.exportBinary(export))
    }

    func key(_ byte: UInt8, risk: Int32 = 0, days: Int32? = nil) throws -> DiagnosisKey {
        DiagnosisKey(
            key: try TemporaryExposureKey(
                keyData: Bytes16([byte] + [UInt8](repeating: 0, count: 15))!, rollingStartIntervalNumber: ENIntervalNumber(rawValue: 2_700_000)),
            transmissionRiskLevel: risk, daysSinceOnsetOfSymptoms: days)
    }

    @Test func daysSinceOnsetBeyondFourteenAreKeptAsTheyAre() throws {
        let export = try readBack([key(1, days: 15), key(2, days: -20), key(3, days: 14), key(4, days: .min)])
        #expect(export.dropped.isEmpty)
        #expect(Set(export.keys.compactMap(\.daysSinceOnsetOfSymptoms)) == [15, -20, 14, .min])
    }

    @Test func transmissionRiskLevelsOutsideZeroToEightAreClamped() throws {
        let export = try readBack([key(1, risk: 9), key(2, risk: -3), key(3, risk: .max), key(4, risk: 5)])
        #expect(export.dropped.isEmpty)
        let levels = Dictionary(uniqueKeysWithValues: export.keys.map { ($0.key.keyData.bytes[0], $0.transmissionRiskLevel) })
        #expect(levels == [1: 8, 2: 0, 3: 8, 4: 5])
    }
}
