// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import Storage

/// `gaenctl tools parse-adv`: decode advertising data as gaend's scanner does.
struct ParseAdvTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse-adv",
        abstract: "Decode advertising data into AD structures and the GAEN service data, if any.",
        discussion: "Malformed data (a length running past the end, GAEN service data of the wrong size) exits 2.")

    @Argument(help: "The advertising data as hex.")
    var data: String

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let bytes = try ArgumentParsing.hex(data, argument: "<data>")
        let parsed: AdvertisingData
        let payload: ExposureNotificationPayload?
        do {
            parsed = try AdvertisingData(parsing: bytes)
            payload = try ExposureNotificationPayload(advertisingData: parsed)
        } catch {
            throw UsageError("<data>", "\(error)")
        }
        if json {
            var members: [(String, JSONValue)] = [
                ("length", .int(Int64(bytes.count))),
                (
                    "structures",
                    .array(
                        zip(parsed.structures, parsed.offsets).map { structure, offset in
                            .object([
                                ("offset", .int(Int64(offset))),
                                ("type", .int(Int64(structure.type.rawValue))),
                                ("name", .string(structure.type.description)),
                                ("data", .string(Hex.encode(structure.data))),
                            ])
                        })
                ),
            ]
            if let payload {
                members.append(
                    ("gaen", .object([("rpi", .string(payload.rpi.description)), ("aem", .string(payload.aem.description))]))
                )
            } else {
                members.append(("gaen", .null))
            }
            print(JSONValue.object(members).serialized())
            return
        }
        print("\(bytes.count) bytes, \(parsed.structures.count) AD structures")
        for (structure, offset) in zip(parsed.structures, parsed.offsets) {
            let type = "0x" + Hex.encode([structure.type.rawValue])
            print("  offset \(pad(String(offset), 3)) type \(type) \(pad(structure.type.description, 40)) \(Hex.encode(structure.data))")
        }
        if let payload {
            print("Exposure Notification (0x\(ExposureNotificationPayload.serviceUUIDHex))")
            print("  RPI  \(payload.rpi)")
            print("  AEM  \(payload.aem)")
        } else {
            print("no Exposure Notification service data")
        }
    }
}
