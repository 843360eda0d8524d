// SPDX-License-Identifier: GPL-3.0-or-later

@_spi(ExperimentalCustomExecutors) import _Concurrency
import Glibc

/// A program's entry on executors of its own (`WorkerPool`, `MainLoop`) instead of libdispatch's:
/// Swift 6.3's executor factory (SE-0471, still SPI), installed before any task exists. gaend runs
/// so; the tools and tests keep the default.
package enum OwnExecutors {
    private struct Factory: ExecutorFactory {
        static let main = MainLoop()
        static let pool = WorkerPool()
        static var mainExecutor: any MainExecutor { main }
        static var defaultExecutor: any TaskExecutor { pool }
    }

    /// Installs the executors, runs `body` as the first task and the main loop on this thread;
    /// exits 0 when `body` returns (it exits itself otherwise).
    package static func run(_ body: @escaping @Sendable () async -> Void) -> Never {
        _createExecutors(factory: Factory.self)
        Task {
            await body()
            exit(0)
        }
        try? Factory.main.run()
        exit(0)
    }
}
