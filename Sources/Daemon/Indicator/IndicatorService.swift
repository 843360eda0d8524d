// SPDX-License-Identifier: GPL-3.0-or-later

package import Beacon
import GaendAPI
package import Logging
import ServiceLifecycle

/// The status LED (`indicator-led`): follows what Manager1 says (its Status, ExposureDays) and sets
/// the LED's trigger when the pattern changes, so the kernel blinks and gaend sleeps in between.
/// What the LED showed before is put back at stop.
package struct IndicatorService: Service {
    let led: SysfsLED
    let manager: Manager
    let radioStatus: RadioStatusBoard
    let gate: EnablementGate
    let ticks: any Clock<Duration>
    let logger: Logger

    package init(
        led: SysfsLED, manager: Manager, radioStatus: RadioStatusBoard, gate: EnablementGate, ticks: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "gaend.indicator")
    ) {
        self.led = led
        self.manager = manager
        self.radioStatus = radioStatus
        self.gate = gate
        self.ticks = ticks
        self.logger = logger
    }

    package func run() async throws {
        led.rememberPrevious()
        let (looks, look) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        look.yield()
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                let (manager, radioStatus, gate, ticks) = (manager, radioStatus, gate, ticks)
                group.addTask {
                    await manager.followChanges(radioStatus: radioStatus, gate: gate, ticks: ticks) { look.yield() }
                }
                var shown: IndicatorPattern?
                for await _ in looks {
                    let pattern = await Self.pattern(manager)
                    guard pattern != shown else { continue }
                    shown = pattern
                    // The timer's attributes are given to group gaend by udev a moment after the
                    // trigger made them (on a busy board, seconds): tried again every 200 ms for
                    // 6 s, then said.
                    var tries = 0
                    while !led.apply(pattern.setting, quietly: tries < Self.retries), tries < Self.retries {
                        tries += 1
                        guard (try? await ticks.sleep(for: .milliseconds(200))) != nil else { break }
                    }
                    logger.info("indicator LED", metadata: ["pattern": "\(pattern.rawValue)", "led": "\(led.directory)"])
                }
                group.cancelAll()
            }
        }
        led.restore()
    }

    static let retries = 30

    static func pattern(_ manager: Manager) async -> IndicatorPattern {
        let properties = await manager.properties()
        guard case .string(let text)? = properties[.status], let status = Manager1.Status(rawValue: text) else { return .off }
        let exposed = if case .strings(let days)? = properties[.exposureDays] { !days.isEmpty } else { false }
        return IndicatorPattern.of(status: status, exposed: exposed)
    }
}
