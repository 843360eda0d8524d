// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import GaendTestSupport
import Testing

/// The system's D-Bus clients as peers: they parse the introspection XML and marshal with their own
/// libraries (sd-bus for busctl, GDBus for gdbus).
@Suite(.ownThreads, .timeLimit(.minutes(3))) struct DBusToolPeerTests {
    @Test func busctlAndGdbusReadTheIntrospection() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        #expect(try await server.requestName("org.gaend.Test") == .primaryOwner)
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: DBusBusTests.echoObject())
        let busctl = try await ToolRunner.runProgramDetached(
            "/usr/bin/busctl", ["--address=\(bus.address)", "introspect", "org.gaend.Test", "/org/gaend/Echo"])
        #expect(busctl.status == 0, "\(busctl.standardError)")
        for line in [".Echo", ".Upper", ".Constant", ".Happened", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable"] {
            #expect(busctl.standardOutput.contains(line), "busctl introspect lacks \(line)")
        }
        #expect(busctl.standardOutput.contains("property  u         42"))
        // gdbus introspect waits a short fixed time for the answer and has no option to wait longer;
        // on a loaded CI machine ours can come later, so only a timeout is tried again.
        var gdbus = try await ToolRunner.runProgramDetached(
            "/usr/bin/gdbus", ["introspect", "--address", bus.address, "--dest", "org.gaend.Test", "--object-path", "/org/gaend/Echo"])
        for _ in 0..<3 where gdbus.status != 0 && gdbus.standardError.contains("Timeout was reached") {
            gdbus = try await ToolRunner.runProgramDetached(
                "/usr/bin/gdbus", ["introspect", "--address", bus.address, "--dest", "org.gaend.Test", "--object-path", "/org/gaend/Echo"])
        }
        #expect(gdbus.status == 0, "\(gdbus.standardError)")
        #expect(gdbus.standardOutput.contains("Upper(in  s text,"))
        #expect(gdbus.standardOutput.contains("readonly u Constant = 42;"))
        #expect(gdbus.standardOutput.contains("signals:"))
        // The tree from the root down.
        let tree = try await ToolRunner.runProgramDetached("/usr/bin/busctl", ["--address=\(bus.address)", "tree", "org.gaend.Test"])
        #expect(tree.standardOutput.contains("/org/gaend/Echo"), "\(tree.standardOutput)\(tree.standardError)")
    }

    @Test func busctlAndGdbusCallIn() async throws {
        let bus = try DBusDaemonFixture()
        let server = try await DBusConnection.bus(address: bus.address)
        #expect(try await server.requestName("org.gaend.Test") == .primaryOwner)
        let servingServer = taskOnOwnThreads { await server.serve() }
        defer { servingServer.cancel() }
        try await server.export("/org/gaend/Echo", interfaces: DBusBusTests.echoObject())
        let upper = try await ToolRunner.runProgramDetached(
            "/usr/bin/busctl", ["--address=\(bus.address)", "call", "org.gaend.Test", "/org/gaend/Echo", "org.gaend.Test1", "Upper", "s", "hello"])
        #expect(upper.standardOutput == "s \"HELLO\"\n")
        let echo = try await ToolRunner.runProgramDetached(
            "/usr/bin/busctl",
            [
                "--address=\(bus.address)", "call", "--", "org.gaend.Test", "/org/gaend/Echo", "org.gaend.Test1", "Echo", "v", "a{sv}", "2", "A", "ay", "2",
                "1", "2", "B", "(ib)", "-5", "true",
            ])
        #expect(echo.standardOutput == "v a{sv} 2 \"A\" ay 2 1 2 \"B\" (ib) -5 true\n", "\(echo.standardError)")
        let failure = try await ToolRunner.runProgramDetached(
            "/usr/bin/busctl", ["--address=\(bus.address)", "call", "org.gaend.Test", "/org/gaend/Echo", "org.gaend.Test1", "Fail"])
        #expect(failure.status != 0)
        #expect(failure.standardError.contains("failed on purpose"))
        let gdbus = try await ToolRunner.runProgramDetached(
            "/usr/bin/gdbus",
            [
                "call", "--address", bus.address, "--dest", "org.gaend.Test", "--object-path", "/org/gaend/Echo", "--method", "org.gaend.Test1.Echo",
                "<@a{sv} {'k': <uint16 7>}>",
            ])
        #expect(gdbus.standardOutput == "(<{'k': <uint16 7>}>,)\n", "\(gdbus.standardError)")
        let property = try await ToolRunner.runProgramDetached(
            "/usr/bin/busctl", ["--address=\(bus.address)", "get-property", "org.gaend.Test", "/org/gaend/Echo", "org.gaend.Test1", "Constant"])
        #expect(property.standardOutput == "u 42\n")
        let wrong = try await ToolRunner.runProgramDetached(
            "/usr/bin/busctl", ["--address=\(bus.address)", "call", "org.gaend.Test", "/org/gaend/Echo", "org.gaend.Test1", "Upper", "i", "7"])
        #expect(wrong.status != 0)
        #expect(wrong.standardError.contains("Upper takes 's', got 'i'"), "\(wrong.standardError)")
    }
}
