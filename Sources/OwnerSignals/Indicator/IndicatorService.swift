// SPDX-License-Identifier: GPL-3.0-or-later

import GaendAPI
package import Logging
import ServiceLifecycle

/// The status LED (`indicator-led`): follows the owner's status (Manager1's Status and exposure
/// days, `OwnerStatus`) and sets the LED's trigger when the pattern changes, so the kernel blinks and gaend sleeps in between.
/// What the LED showed before is put back at stop.
package struct IndicatorService: Service {
    let led: SysfsLED
    let source: any OwnerStatusSource
    let ticks: any Clock<Duration>
    let logger: Logger

    package init(
        led: SysfsLED, source: any OwnerStatusSource, ticks: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "gaend.indicator")
    ) {
        self.led = led
        self.source = source
        self.ticks = ticks
        self.logger = logger
    }

    package func run() async throws {
        led.rememberPrevious()
        let (looks, look) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        look.yield()
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                let (source, ticks) = (source, ticks)
                group.addTask {
                    await source.followStatus(ticks: ticks) { look.yield() }
                }
                var shown: IndicatorPattern?
                for await _ in looks {
                    let status = await source.ownerStatus()
                    let pattern = IndicatorPattern.of(status: status.status, exposed: !status.exposureDays.isEmpty)
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

}
