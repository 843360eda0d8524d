// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Synchronization

/// HTTP over Foundation's URLSession: no package to build (it ships with the toolchain, over libcurl
/// on Linux), redirects and TLS handled, and a body streamed through a delegate so that the size
/// limit is enforced as bytes arrive rather than after an unbounded download.
package struct URLSessionTransport: HTTPTransport {
    package init() {}

    package func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw .badURL(request.url)
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        let seconds = Double(request.timeout.components.seconds) + Double(request.timeout.components.attoseconds) * 1e-18
        urlRequest.timeoutInterval = seconds

        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let collector = BodyCollector(limit: request.maximumResponseBytes)
        let session = URLSession(configuration: configuration, delegate: collector, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        await withCheckedContinuation { continuation in
            collector.start(continuation, url: request.url, timeout: request.timeout)
            session.dataTask(with: urlRequest).resume()
        }
        return try collector.takeOutcome().get()
    }
}

/// Collects one response for `URLSessionTransport`, cancelling the task when the body passes the
/// limit. @unchecked Sendable: every mutable field is behind `state`'s mutex.
///
/// The outcome stays in `state` and the continuation only wakes the task, which then takes it under
/// the mutex: an order ThreadSanitizer sees even when the delegate's thread resumes before the task
/// has suspended (the runtime's fast path then orders the two sides where TSan cannot see it).
private final class BodyCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var outcome: Result<HTTPResponse, HTTPError>?
        var url = ""
        var timeout = Duration.zero
        var status = 0
        var headers: [String: String] = [:]
        var body = [UInt8]()
        var tooLarge = false
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// The outcome, once the continuation was resumed.
    func takeOutcome() -> Result<HTTPResponse, HTTPError> {
        state.withLock { state in state.outcome.take() ?? .failure(.transport(url: state.url, reason: "the session ended without an outcome")) }
    }

    func start(_ continuation: CheckedContinuation<Void, Never>, url: String, timeout: Duration) {
        state.withLock {
            $0.continuation = continuation
            $0.url = url
            $0.timeout = timeout
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            var headers = [String: String]()
            for (name, value) in http.allHeaderFields {
                headers["\(name)".lowercased()] = "\(value)"
            }
            let declared = Int(headers["content-length"] ?? "") ?? 0
            let refuse = declared > limit
            state.withLock {
                $0.status = http.statusCode
                $0.headers = headers
                $0.tooLarge = refuse
                // Room for the declared body at once: growing by doubling would touch up to twice
                // the limit (16 MiB archives) at the moment of the last copy.
                if !refuse, declared > 0 { $0.body.reserveCapacity(declared) }
            }
            completionHandler(refuse ? .cancel : .allow)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let exceeded = state.withLock { state -> Bool in
            state.body.append(contentsOf: data)
            if state.body.count > limit {
                state.tooLarge = true
                state.body = []
            }
            return state.tooLarge
        }
        if exceeded { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            let continuation = state.continuation
            state.continuation = nil
            state.outcome = Self.outcome(of: state, error: error, limit: limit)
            return continuation
        }
        continuation?.resume()
    }

    private static func outcome(of state: State, error: (any Error)?, limit: Int) -> Result<HTTPResponse, HTTPError> {
        if state.tooLarge { return .failure(.responseTooLarge(url: state.url, limit: limit)) }
        if let error {
            let nsError = error as NSError
            if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorTimedOut {
                return .failure(.timedOut(url: state.url, after: state.timeout))
            }
            return .failure(.transport(url: state.url, reason: nsError.localizedDescription))
        }
        return .success(HTTPResponse(status: state.status, headers: state.headers, body: state.body))
    }
}
