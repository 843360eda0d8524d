// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// What build the suites run against. `make check-asan` sets GAEND_SANITIZER: the suites and the
/// programs they start are then AddressSanitizer's builds, run beside every other suite on 2 cores,
/// and their memory, CPU and wall-clock figures say nothing about what ships.
package enum BuildUnderTest {
    package static var isSanitized: Bool { ProcessInfo.processInfo.environment["GAEND_SANITIZER"] != nil }
}
