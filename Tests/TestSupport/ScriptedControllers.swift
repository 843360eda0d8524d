// SPDX-License-Identifier: GPL-3.0-or-later

package import HCI
import Synchronization
import SystemCalls

/// The scripted controllers a driver connected to, in order; kept alive for the test.
package final class ScriptedControllers: Sendable {
    private let opened = Mutex<[ScriptedController]>([])
    /// How many connection attempts fail (ECONNREFUSED) before one succeeds.
    private let refusals: Mutex<Int>
    package let script: @Sendable (HCICommand) -> [[UInt8]]

    package init(refusing refusals: Int = 0, script: @escaping @Sendable (HCICommand) -> [[UInt8]]) {
        self.refusals = Mutex(refusals)
        self.script = script
    }

    package func connect() throws(HCITransportError) -> FileDescriptorTransport {
        let refused = refusals.withLock { left in
            defer { left = max(0, left - 1) }
            return left > 0
        }
        if refused { throw HCITransportError(operation: "connecting to the scripted controller", errno: .connectionRefused) }
        do {
            let controller = try ScriptedController(script: script)
            opened.withLock { $0.append(controller) }
            return controller.transport
        } catch {
            throw HCITransportError(operation: "socketpair", detail: "\(error)")
        }
    }

    package var count: Int { opened.withLock { $0.count } }
    package var last: ScriptedController? { opened.withLock { $0.last } }
    package var commands: [HCICommand] { opened.withLock { $0.flatMap(\.commands) } }
    package var resets: Int { commands.count { $0.opcode == .reset } }

    /// The advertising enables and disables sent, in order (legacy or extended).
    package var advertising: [Bool] {
        commands.filter { $0.opcode == .leSetAdvertisingEnable || $0.opcode == .leSetExtendedAdvertisingEnable }.map { $0.parameters.first == 1 }
    }

    package var scanning: [Bool] {
        commands.filter { $0.opcode == .leSetScanEnable || $0.opcode == .leSetExtendedScanEnable }.map { $0.parameters.first == 1 }
    }
}
