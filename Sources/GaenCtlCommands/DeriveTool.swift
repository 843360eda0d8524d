// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import Storage
import ENCrypto

/// `gaenctl tools derive`: the values a TEK produces, for checking against other implementations.
struct DeriveTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive",
        abstract: "Derive RPIK, AEMK, and the RPI and AEM of each interval from a TEK.",
        discussion: """
            The metadata defaults to 50000000 (version 1.1, calibration confidence lowest, TX power \
            0 dBm). Each AEM is decrypted again and shown beside the RPI, as a receiver would read it.
            """)

    @Option(help: "The Temporary Exposure Key, 32 hex digits.")
    var tek: String

    @Option(parsing: .unconditional, help: "The first ENIntervalNumber (absolute: floor(unix seconds / 600)).")
    var interval: String

    @Option(help: "How many consecutive intervals to derive, 1...144.")
    var count: Int = 1

    @Option(help: "The 4-byte metadata to encrypt into each AEM, 8 hex digits.")
    var metadata: String = "50000000"

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let tek = try ArgumentParsing.bytes16(tek, argument: "--tek")
        let start = try ArgumentParsing.interval(interval, argument: "--interval")
        guard (1...ExposureKeyCrypto.maximumBatch).contains(count) else {
            throw UsageError("--count", "\(count) is outside 1...\(ExposureKeyCrypto.maximumBatch)")
        }
        guard UInt64(start.rawValue) + UInt64(count) - 1 <= UInt64(UInt32.max) else {
            throw UsageError("--count", "\(count) intervals from \(start) run past the largest interval number")
        }
        let metadata = BluetoothMetadata(try ArgumentParsing.hex(metadata, count: 4, argument: "--metadata"))!

        let crypto: ExposureKeyCrypto
        do {
            crypto = try ExposureKeyCrypto()
        } catch {
            throw OperationError("\(error)")
        }
        let (rpik, aemk) = crypto.keys(for: tek)
        let rpis = crypto.rpis(tek: tek, startingAt: start, count: count)
        let rows = rpis.enumerated().map { index, rpi in
            let aem = crypto.aem(for: metadata, aemk: aemk, rpi: rpi)
            return (
                interval: start.advanced(by: index), rpi: rpi, aem: aem,
                decrypted: crypto.metadata(from: aem, aemk: aemk, rpi: rpi)
            )
        }

        if json {
            let output = JSONValue.object([
                ("tek", .string(tek.hex)),
                ("rpik", .string(rpik.bytes.hex)),
                ("aemk", .string(aemk.bytes.hex)),
                ("metadata", .string(Hex.encode(metadata.array))),
                (
                    "intervals",
                    .array(
                        rows.map { row in
                            .object([
                                ("enin", .int(Int64(row.interval.rawValue))),
                                ("start", .string("\(row.interval.start)")),
                                ("rpi", .string(row.rpi.bytes.hex)),
                                ("aem", .string(row.aem.description)),
                                ("metadata", .string(Hex.encode(row.decrypted.array))),
                            ])
                        })
                ),
            ])
            print(output.serialized())
            return
        }
        print("TEK       \(tek.hex)")
        print("RPIK      \(rpik.bytes.hex)")
        print("AEMK      \(aemk.bytes.hex)")
        print("metadata  \(Hex.encode(metadata.array)) (\(metadata))")
        print("")
        print("ENIN      start (UTC)           RPI                               AEM       metadata")
        for row in rows {
            print("\(pad(row.interval.description, 9)) \(row.interval.start)  \(row.rpi.bytes.hex)  \(row.aem)  \(Hex.encode(row.decrypted.array))")
        }
    }
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}
