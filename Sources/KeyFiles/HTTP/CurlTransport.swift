// SPDX-License-Identifier: GPL-3.0-or-later

internal import CCurl
import Foundation
import Synchronization

/// HTTP over libcurl, one transfer on a thread of its own, driven by a multi handle of its own.
///
/// It replaced Foundation's URLSession (issue 40, items 10 and 11), which on Linux burnt about 85 %
/// of a core while a request waited for bytes that did not come (its libdispatch threads spin over
/// libcurl's multi socket interface), and whose wait ignored cancellation, so a server that
/// trickled its answer held a detection for ever. Here the transfer waits in curl_multi_poll, on its
/// sockets and libcurl's own timers only; `timeout` is a hard limit on the whole exchange
/// (CURLOPT_TIMEOUT_MS: a trickle does not reset it); a cancelled task wakes the poll
/// (curl_multi_wakeup) and the transfer ends at once; and the body is refused as soon as it passes
/// the limit, declared or not. Only http and https, for the URL and every redirect; redirects as
/// `HTTPRequest.redirects` says (none for a POST, https to https only).
package struct CurlTransport: HTTPTransport {
    /// curl_global_init, once per process before the first handle: libcurl's own global state.
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    package init() {}

    package func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw .badURL(request.url)
        }
        guard Self.initialized else { throw .transport(url: request.url, reason: "libcurl could not be initialised") }
        let exchange = CurlExchange(request)
        // The outcome is handed over under the exchange's lock and the continuation resumed with
        // nothing: an order ThreadSanitizer sees on the runtime's fast path too (docs/testing.md).
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let thread = Thread {
                    exchange.finish(exchange.perform())
                    continuation.resume()
                }
                thread.name = "gaend-http"
                thread.start()
            }
        } onCancel: {
            exchange.cancel()
        }
        return try exchange.takeOutcome().get()
    }
}

/// One transfer: the request, what arrived, and whether it was cancelled. The callbacks run on the
/// transfer's thread; `cancelled` and the multi handle (to wake its poll) are what another thread
/// touches, the handle under its lock so that it is never woken once freed.
final class CurlExchange: Sendable {
    let request: HTTPRequest
    private let cancelled = Atomic<Bool>(false)
    /// The multi handle's address while the transfer runs, 0 otherwise.
    private let multi = Mutex<UInt>(0)
    private let received = Mutex(Received())

    struct Received {
        var status = 0
        var headers: [String: String] = [:]
        var body: [UInt8] = []
        var tooLarge = false
        var outcome: Result<HTTPResponse, HTTPError>?
    }

    init(_ request: HTTPRequest) {
        self.request = request
    }

    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        multi.withLock { address in
            if let handle = UnsafeMutableRawPointer(bitPattern: address) { _ = curl_multi_wakeup(handle) }
        }
    }

    func finish(_ outcome: Result<HTTPResponse, HTTPError>) { received.withLock { $0.outcome = outcome } }

    func takeOutcome() -> Result<HTTPResponse, HTTPError> {
        received.withLock { $0.outcome.take() } ?? .failure(.transport(url: request.url, reason: "the transfer ended without an outcome"))
    }

    func perform() -> Result<HTTPResponse, HTTPError> {
        let url = request.url
        guard let curl = curl_easy_init() else { return .failure(.transport(url: url, reason: "libcurl could not make a handle")) }
        defer { curl_easy_cleanup(curl) }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let milliseconds = max(1, Int(request.timeout.components.seconds * 1000 + request.timeout.components.attoseconds / 1_000_000_000_000_000))

        var setup = CURLE_OK
        func set(_ code: CURLcode) { if setup == CURLE_OK { setup = code } }
        set(cgaend_curl_set_string(curl, CURLOPT_URL, url))
        set(cgaend_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https"))
        switch request.redirects {
        case .none:
            set(cgaend_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0))
        case .httpsOnly, .httpOrHttps:
            set(cgaend_curl_set_string(curl, CURLOPT_REDIR_PROTOCOLS_STR, request.redirects == .httpsOnly ? "https" : "http,https"))
            set(cgaend_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 1))
            set(cgaend_curl_set_long(curl, CURLOPT_MAXREDIRS, 5))
        }
        set(cgaend_curl_set_long(curl, CURLOPT_TIMEOUT_MS, milliseconds))
        set(cgaend_curl_set_long(curl, CURLOPT_NOSIGNAL, 1))
        set(cgaend_curl_set_error_buffer(curl, errorBuffer))
        set(cgaend_curl_set_write(curl, curlBody, context))
        set(cgaend_curl_set_header_function(curl, curlHeader, context))
        for (name, value) in request.headers { headerList = curl_slist_append(headerList, "\(name): \(value)") }
        // No "Expect: 100-continue" round trip before a body.
        headerList = curl_slist_append(headerList, "Expect:")
        set(cgaend_curl_set_headers(curl, headerList))
        switch request.method {
        case "GET": break
        // A HEAD's answer has a Content-Length but no body: told so, libcurl waits for none.
        case "HEAD": set(cgaend_curl_set_long(curl, CURLOPT_NOBODY, 1))
        case "POST":
            set(setBody(curl))
        default:
            set(cgaend_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, request.method))
            if !request.body.isEmpty { set(setBody(curl)) }
        }
        guard setup == CURLE_OK else { return .failure(.transport(url: url, reason: String(cString: curl_easy_strerror(setup)))) }

        let code = run(curl)
        let received = self.received.withLock { $0 }
        if received.tooLarge { return .failure(.responseTooLarge(url: url, limit: request.maximumResponseBytes)) }
        switch code {
        case CURLE_OK:
            return .success(HTTPResponse(status: Int(cgaend_curl_response_code(curl)), headers: received.headers, body: received.body))
        case CURLE_OPERATION_TIMEDOUT:
            return .failure(.timedOut(url: url, after: request.timeout))
        case CURLE_ABORTED_BY_CALLBACK:
            return .failure(.transport(url: url, reason: "cancelled"))
        case CURLE_UNSUPPORTED_PROTOCOL where request.redirects == .httpsOnly:
            // The URL itself is https (checked before): what libcurl refused is a redirect's.
            return .failure(.insecureRedirect(url: url, location: received.headers["location"] ?? "another scheme"))
        default:
            let detail = String(cString: errorBuffer)
            return .failure(.transport(url: url, reason: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail))
        }
    }

    /// Runs the transfer on a multi handle of its own: curl_multi_poll sleeps until a socket is
    /// ready, a libcurl timer is due or `cancel` wakes it.
    private func run(_ curl: UnsafeMutableRawPointer) -> CURLcode {
        guard let handle = curl_multi_init() else { return CURLE_OUT_OF_MEMORY }
        defer { curl_multi_cleanup(handle) }
        guard curl_multi_add_handle(handle, curl) == CURLM_OK else { return CURLE_FAILED_INIT }
        defer { curl_multi_remove_handle(handle, curl) }
        multi.withLock { $0 = UInt(bitPattern: handle) }
        defer { multi.withLock { $0 = 0 } }
        var running: Int32 = 1
        while true {
            if isCancelled { return CURLE_ABORTED_BY_CALLBACK }
            guard curl_multi_perform(handle, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if running == 0 { break }
            // At most a minute between looks of our own; libcurl shortens it to its next timer.
            guard curl_multi_poll(handle, nil, 0, 60_000, nil) == CURLM_OK else { return CURLE_FAILED_INIT }
        }
        var left: Int32 = 0
        while let message = curl_multi_info_read(handle, &left) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_FAILED_INIT
    }

    /// The request's body, copied by libcurl (a terminating byte past it, so that an empty body
    /// has an address too).
    private func setBody(_ curl: UnsafeMutableRawPointer) -> CURLcode {
        (request.body + [0]).withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { cgaend_curl_set_body(curl, $0.baseAddress!, request.body.count) }
        }
    }

    /// A chunk of the body; refused (the transfer aborts) once the body would pass the limit.
    fileprivate func body(_ chunk: UnsafeRawBufferPointer) -> Bool {
        received.withLock { received in
            guard received.body.count + chunk.count <= request.maximumResponseBytes else {
                received.tooLarge = true
                received.body = []
                return false
            }
            received.body.append(contentsOf: chunk)
            return true
        }
    }

    /// A header line. A status line starts a response (a redirect's are forgotten); a declared
    /// length over the limit is refused before any of the body comes.
    fileprivate func header(_ line: UnsafeRawBufferPointer) -> Bool {
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return received.withLock { received in
            if text.hasPrefix("HTTP/") {
                received.headers = [:]
                received.body = []
                received.status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
                return true
            }
            guard let colon = text.firstIndex(of: ":") else { return true }
            let name = text[..<colon].lowercased()
            let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            received.headers[name] = received.headers[name].map { "\($0), \(value)" } ?? value
            if name == "content-length", let declared = Int(value), declared > request.maximumResponseBytes {
                received.tooLarge = true
                return false
            }
            if name == "content-length", let declared = Int(value), declared > 0 {
                // Room for the declared body at once, not doubling up to twice the limit.
                received.body.reserveCapacity(declared)
            }
            return true
        }
    }

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
}

private func exchange(_ context: UnsafeMutableRawPointer?) -> CurlExchange {
    Unmanaged<CurlExchange>.fromOpaque(context!).takeUnretainedValue()
}

private let curlBody: cgaend_curl_data_fn = { data, size, count, context in
    let length = size * count
    return exchange(context).body(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private let curlHeader: cgaend_curl_data_fn = { data, size, count, context in
    let length = size * count
    return exchange(context).header(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}
