// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import KeyFiles
package import Storage

/// Why a detection run did not happen or did not finish. Each maps to a D-Bus error later.
package enum DetectionWorkerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The budget is spent; the next run is allowed at this time.
    case rateLimited(nextAllowed: UnixTime)
    /// A run is already in progress: runs never overlap.
    case busy
    /// No key server is configured (`index-url`): the stored results are still the answer.
    case noKeyServer
    /// The wall clock cannot be trusted (the reason): matching and keeping results wait for it.
    case clockUntrusted(String)
    /// The run passed its deadline and was cancelled.
    case deadlineExceeded(after: Duration)
    /// A key file or the index could not be fetched.
    case download(ClientError)
    /// The health authority's exposure configuration could not be fetched (and none is cached).
    case configurationDownload(ClientError)
    /// The configuration the health authority served is not one gaend can score with: scoring with
    /// something the authority did not mean is worse than not scoring.
    case configuration(url: String, ConfigurationError)
    /// Matching failed: the contact log could not be read, or a file's keys not streamed.
    case pipeline(DetectionError)
    /// A file of the data directory could not be read or written.
    case storage(FileSystemError)
    /// The list of processed files could not be written (a `ClientError.local`).
    case processedFiles(ClientError)

    package var description: String {
        switch self {
        case .rateLimited(let next): return "rate limited: the next detection is allowed at \(next)"
        case .busy: return "a detection is already running"
        case .noKeyServer: return "no key server is configured (index-url)"
        case .clockUntrusted(let reason): return "no detection while the clock is not trusted: \(reason)"
        case .deadlineExceeded(let after): return "the detection did not finish within \(after) and was cancelled"
        case .download(let cause): return "downloading key files: \(cause)"
        case .configurationDownload(let cause): return "downloading the exposure configuration: \(cause)"
        case .configuration(let url, let cause): return "detection: exposure configuration \(url): \(cause)"
        case .pipeline(let cause): return "detection: \(cause)"
        case .storage(let cause): return "storing detection state: \(cause)"
        case .processedFiles(let cause): return "recording the processed files: \(cause)"
        }
    }
}
