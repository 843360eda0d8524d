// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Foundation
import GaendTestSupport
import Glibc
import Testing

/// What a connection accepts (issue 16): byte arrays kept as bytes, the decoding budget counting
/// every element and byte, and messages nothing routes refused from their header.
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct DBusLimitsTests {
    static func signal(_ body: [DBusValue]) -> DBusMessage {
        var message = DBusMessage.signal(path: "/org/gaend/Test", interface: "org.gaend.Test1", member: "Data", body)
        message.sender = ":1.7"
        return message
    }

    @Test func byteArraysAreBytesWhicheverWayTheyAreBuilt() throws {
        let boxed = DBusValue.array(element: .byte, [.byte(1), .byte(2), .byte(3)])
        #expect(boxed == .bytes([1, 2, 3]))
        #expect(boxed.hashValue == DBusValue.bytes([1, 2, 3]).hashValue)
        #expect(DBusValue.array(element: .byte, []) == .bytes([]))
        guard case .array(.byte, let elements) = boxed else {
            Issue.record("not an ay: \(boxed)")
            return
        }
        #expect(elements.bytes == [1, 2, 3])
        #expect(Array(elements) == [.byte(1), .byte(2), .byte(3)])
        #expect(boxed.arrayElements == [.byte(1), .byte(2), .byte(3)])
        #expect(DBusValue.strings(["a"]).arrayElements == [.string("a")])
        #expect(throws: DBusError.self) { try DBusValue.array(element: .string, [.byte(1)]).validate() }
    }

    @Test func aLargeByteArrayDecodesAsOneCopyOfBytes() throws {
        let payload = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let decoded = try DBusMessage(wireBytes: try Self.signal([.bytes(payload), .string("after")]).wireBytes())
        #expect(decoded.signature == "ays")
        guard case .array(.byte, let elements) = decoded.body[0] else {
            Issue.record("not an ay: \(decoded.signature)")
            return
        }
        // Stored as bytes: handed out without a conversion per byte.
        #expect(elements.bytes == payload)
        #expect(decoded.body[0].bytes == payload)
        #expect(decoded.body[1] == .string("after"))
    }

    @Test(arguments: [("large-ay-signal", "ay", 60_000), ("get-with-ay", "ssay", 32_768), ("many-values", "a(yyyyyyyy)", 7_000)])
    func theFuzzSeedsOfIssue16Load(_ name: String, _ signature: String, _ count: Int) throws {
        let path = BumbleFixture.root.appendingPathComponent("Tests/Fuzz/Corpus/dbus-message/\(name)").path
        let message = try DBusMessage(wireBytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(message.signature == signature)
        #expect(message.body.last?.arrayElements?.count == count)
    }

    @Test func theBudgetCountsEveryElementAndByte() throws {
        let limits = DBusLimits.standard
        func decode(_ body: [DBusValue]) throws -> DBusMessage { try DBusMessage(wireBytes: try Self.signal(body).wireBytes()) }
        func refused(_ body: [DBusValue]) -> Bool {
            do {
                _ = try decode(body)
                return false
            } catch {
                return (error as? DBusError)?.name == .limitsExceeded
            }
        }
        // Values: each element of an array counts, not the array as one.
        #expect(try decode([.array(element: .int32, (0..<limits.maximumDecodedValues - 1).map { .int32(Int32($0)) })]).body.count == 1)
        #expect(refused([.array(element: .int32, (0..<limits.maximumDecodedValues).map { .int32(Int32($0)) })]))
        #expect(refused([.array(element: .variant, (0..<limits.maximumDecodedValues / 2 + 1).map { _ in .variant(.byte(1)) })]))
        // Bytes: of byte arrays and strings together.
        #expect(try decode([.bytes(Array(repeating: 1, count: limits.maximumDecodedBytes))]).body.count == 1)
        #expect(refused([.bytes(Array(repeating: 1, count: limits.maximumDecodedBytes)), .string("x")]))
        #expect(refused([.strings(Array(repeating: String(repeating: "x", count: 1 << 20), count: 4)), .bytes([1])]))
    }

    @Test func whatNothingRoutesIsRefusedBeforeItsBodyIsDecoded() async throws {
        let bus = try DBusDaemonFixture()
        // A server that decodes at most 1 KB of bytes: a body it decodes past that is LimitsExceeded,
        // so any other answer to a larger body was given from the header.
        let server = try await DBusConnection.bus(address: bus.address, limits: DBusLimits(maximumDecodedBytes: 1024))
        let client = try await DBusConnection.bus(address: bus.address)
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: DBusBusTests.echoObject())
        let large = DBusValue.bytes(Array(repeating: 0xA5, count: 64 * 1024))
        func error(_ path: String, _ interface: String?, _ member: String, _ arguments: [DBusValue]) async -> DBusError.Name? {
            do {
                _ = try await client.call(destination: server.uniqueName, path: path, interface: interface, member: member, arguments)
                return nil
            } catch {
                return (error as? DBusError)?.name
            }
        }
        #expect(await error("/org/gaend/Nothing", DBusBusTests.echoInterface, "Echo", [large]) == .unknownObject)
        #expect(await error("/org/gaend/Echo", DBusBusTests.echoInterface, "Nope", [large]) == .unknownMethod)
        #expect(await error("/org/gaend/Echo", "org.gaend.Other1", "Echo", [large]) == .unknownInterface)
        #expect(await error("/org/gaend/Echo", DBusBusTests.echoInterface, "Upper", [large]) == .invalidArgs)
        #expect(
            await error("/org/gaend/Echo", "org.freedesktop.DBus.Properties", "Get", [.string(DBusBusTests.echoInterface), .string("Constant"), large])
                == .invalidArgs)
        // What is routed is decoded, within the budget.
        #expect(await error("/org/gaend/Echo", DBusBusTests.echoInterface, "Echo", [.variant(large)]) == .limitsExceeded)
        #expect(
            try await client.call(
                destination: server.uniqueName, path: "/org/gaend/Echo", interface: DBusBusTests.echoInterface, member: "Upper", [.string("a")]) == [
                    .string("A")
                ])

        // Signals: only a subscription's, and from its sender. Each batch ends with a small marker
        // signal, so when it arrives everything sent before has been seen or dropped.
        let stranger = try await DBusConnection.bus(address: bus.address)
        let subscription = try await server.subscribe(DBusMatchRule(sender: client.uniqueName, interface: "org.gaend.Test1"))
        var received = subscription.messages.makeAsyncIterator()
        func send(from connection: DBusConnection, _ member: String, _ body: [DBusValue]) throws {
            var message = DBusMessage.signal(path: "/org/gaend/Test", interface: "org.gaend.Test1", member: member, body)
            message.destination = server.uniqueName
            try connection.send(message)
        }
        try send(from: stranger, "Data", [.bytes([1, 2, 3])])
        try send(from: client, "Data", [.bytes([4, 5, 6])])
        let first = await received.next()
        #expect(first?.sender == client.uniqueName && first?.body == [.bytes([4, 5, 6])])
        // Past the budget: not delivered (dropped after decoding, as before), the next one is.
        try send(from: client, "Data", [large])
        try send(from: client, "Marker", [])
        #expect(await received.next()?.member == "Marker")
    }

    @Test func aMessageSizeLimitDisconnectsRatherThanSkips() async throws {
        // Why DBusLimits.maximumMessageSize is not set by default: libdbus treats a longer message
        // as a corrupt stream and closes the connection, so whoever can send to it can end it.
        let bus = try DBusDaemonFixture()
        let limited = try await DBusConnection.bus(address: bus.address, limits: DBusLimits(maximumMessageSize: 64 * 1024))
        let sender = try await DBusConnection.bus(address: bus.address)
        var message = DBusMessage.signal(
            path: "/org/gaend/Test", interface: "org.gaend.Test1", member: "Data", [.bytes(Array(repeating: 1, count: 128 * 1024))])
        message.destination = limited.uniqueName
        try sender.send(message)
        await limited.disconnected()
        #expect(!limited.isConnected)
        #expect(sender.isConnected)
    }
}
