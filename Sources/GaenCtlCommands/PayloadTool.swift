// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import ENCore
import Storage

/// `gaenctl tools payload`: the advertising data gaend would broadcast for an RPI and AEM.
struct PayloadTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payload",
        abstract: "Build the GAEN advertising data for an RPI and an AEM.",
        discussion: "Prints the frame as hex: 02011a 03036ffd 17166ffd <RPI> <AEM>, 31 bytes.")

    @Option(help: "The Rolling Proximity Identifier, 32 hex digits.")
    var rpi: String

    @Option(help: "The Associated Encrypted Metadata, 8 hex digits.")
    var aem: String

    @Flag(help: "Leave out the Flags structure, as Android does (28 bytes).")
    var noFlags = false

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        let rpi = RollingProximityIdentifier(try ArgumentParsing.bytes16(rpi, argument: "--rpi"))
        let aem = AssociatedEncryptedMetadata(try ArgumentParsing.hex(aem, count: 4, argument: "--aem"))!
        let frame = ExposureNotificationPayload(rpi: rpi, aem: aem).advertisingData(includingFlags: !noFlags)
        if json {
            print(
                JSONValue.object([
                    ("advertising_data", .string(Hex.encode(frame))), ("length", .int(Int64(frame.count))),
                ]).serialized())
        } else {
            print(Hex.encode(frame))
        }
    }
}
