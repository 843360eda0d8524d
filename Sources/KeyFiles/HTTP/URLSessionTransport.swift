// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// HTTP over Foundation's URLSession: no package to build (it ships with the toolchain, over libcurl
/// on Linux), redirects and TLS handled, and a body streamed through a delegate so that the size
/// limit is enforced as bytes arrive rather than after an unbounded download.
public struct URLSessionTransport: HTTPTransport {
    public init() {}

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
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
        let outcome: Result<HTTPResponse, HTTPError> = await withCheckedContinuation { continuation in
            collector.start(continuation, url: request.url, timeout: request.timeout)
            session.dataTask(with: urlRequest).resume()
        }
        return try outcome.get()
    }
}

/// Collects one response for `URLSessionTransport`, cancelling the task when the body passes the
/// limit. @unchecked Sendable: every mutable field is behind `state`'s mutex.
private final class BodyCollector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>?
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

    func start(_ continuation: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>, url: String, timeout: Duration) {
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
        let (continuation, result) = state.withLock { state -> (CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>?, Result<HTTPResponse, HTTPError>) in
            let continuation = state.continuation
            state.continuation = nil
            if state.tooLarge { return (continuation, .failure(.responseTooLarge(url: state.url, limit: limit))) }
            if let error {
                let nsError = error as NSError
                if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorTimedOut {
                    return (continuation, .failure(.timedOut(url: state.url, after: state.timeout)))
                }
                return (continuation, .failure(.transport(url: state.url, reason: nsError.localizedDescription)))
            }
            return (continuation, .success(HTTPResponse(status: state.status, headers: state.headers, body: state.body)))
        }
        continuation?.resume(returning: result)
    }
}
