// SPDX-License-Identifier: GPL-3.0-or-later

/// A run's deadline, BGTask's expiration handler: the run's body is cancelled when the deadline
/// passes first, and the run fails with `deadlineExceeded`. Waited for on a clock a test moves.
struct RunDeadline {
    let deadline: Duration
    let clock: any Clock<Duration>

    init(_ deadline: Duration, clock: any Clock<Duration>) {
        self.deadline = deadline
        self.clock = clock
    }

    /// Runs `body`, cancelled when the deadline passes first.
    func run<Value: Sendable>(_ body: @escaping @Sendable () async throws(DetectionWorkerError) -> Value) async -> Result<Value, DetectionWorkerError> {
        let deadline = deadline
        let clock = clock
        return await withTaskGroup(of: Result<Value, DetectionWorkerError>?.self) { group in
            group.addTask {
                do throws(DetectionWorkerError) {
                    return .success(try await body())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                do {
                    try await clock.sleep(for: deadline)
                } catch {
                    return nil
                }
                return .failure(.deadlineExceeded(after: deadline))
            }
            var outcome: Result<Value, DetectionWorkerError> = .failure(.deadlineExceeded(after: deadline))
            for await next in group {
                guard let next else { continue }
                outcome = next
                break
            }
            group.cancelAll()
            return outcome
        }
    }
}
