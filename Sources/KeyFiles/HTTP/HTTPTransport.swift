// SPDX-License-Identifier: GPL-3.0-or-later

/// An HTTP request as the key-server clients make it.
package struct HTTPRequest: Sendable {
    package var method: String
    package var url: String
    package var headers: [(String, String)]
    package var body: [UInt8]
    /// The whole exchange must finish within this.
    package var timeout: Duration
    /// A response body larger than this is refused while it arrives.
    package var maximumResponseBytes: Int

    package init(
        method: String = "GET", url: String, headers: [(String, String)] = [], body: [UInt8] = [], timeout: Duration = .seconds(30),
        maximumResponseBytes: Int
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Which redirects the request follows (issue 47). None for anything but GET and HEAD: a
    /// 307 or 308 would send the code, the keys or the certificate again, to wherever the server
    /// names, another origin or plain http included; the 3xx answer is the response, and the
    /// caller refuses it by name. A GET or HEAD follows up to five, and from an https URL only to
    /// https (apt's rule: a download that began encrypted stays so).
    package var redirects: RedirectRule {
        guard method == "GET" || method == "HEAD" else { return .none }
        return url.lowercased().hasPrefix("https:") ? .httpsOnly : .httpOrHttps
    }
}

/// What redirects a request may follow.
package enum RedirectRule: Equatable, Sendable {
    case none
    case httpsOnly
    case httpOrHttps
}

package struct HTTPResponse: Sendable {
    package var status: Int
    /// Header names in lowercase.
    package var headers: [String: String]
    package var body: [UInt8]

    package init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why an HTTP exchange failed before a response could be judged.
package enum HTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    case badURL(String)
    case timedOut(url: String, after: Duration)
    case responseTooLarge(url: String, limit: Int)
    /// Connection refused or reset, DNS, TLS, a body cut short: the transport's own words.
    case transport(url: String, reason: String)
    /// An https request redirected to a URL that is not https, not followed.
    case insecureRedirect(url: String, location: String)

    /// No answer at all: refused, reset, unresolved or timed out.
    package var isUnreachable: Bool {
        switch self {
        case .timedOut, .transport: true
        case .badURL, .responseTooLarge, .insecureRedirect: false
        }
    }

    package var description: String {
        switch self {
        case .badURL(let url): return "'\(url)' is not an http or https URL"
        case .timedOut(let url, let after): return "\(url): no complete answer within \(after)"
        case .responseTooLarge(let url, let limit): return "\(url): response larger than \(limit) bytes"
        case .transport(let url, let reason): return "\(url): \(reason)"
        case .insecureRedirect(let url, let location):
            return "\(url): redirected to \(location), which is not https: not followed (a download that began over https stays on https)"
        }
    }

    /// Whether trying again later may help (timeouts and transport failures), as opposed to a
    /// response that will not change.
    package var isTransient: Bool {
        switch self {
        case .timedOut, .transport: return true
        case .badURL, .responseTooLarge, .insecureRedirect: return false
        }
    }
}

/// Sends HTTP requests. Production uses `CurlTransport`; every client takes one, so tests can
/// point them at a real server on loopback.
package protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse
}
