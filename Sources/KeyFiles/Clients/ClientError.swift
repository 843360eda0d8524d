// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// Why a key-server or verification-server call failed, with the server's own error code by name
/// when it gave one.
package enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    case http(HTTPError)
    /// A non-2xx answer; `code` is the server's error code (`code_invalid`, `bad_request`...) if any.
    case server(url: String, status: Int, code: String?, message: String?)
    /// A 3xx answer to a request that carries a code, keys or a certificate: not followed (issue 47).
    case redirected(url: String, status: Int, location: String?)
    /// A 2xx answer whose body is not what the protocol says.
    case unexpectedResponse(url: String, reason: String)
    /// The request could not be formed or kept (bad configuration, a store that cannot be written).
    case local(String)

    /// Escaped: the URL, the server's code and message and what it answered are a server's bytes
    /// (issue 53), and this text reaches LastDetectionError, the journal and the owner's terminal.
    package var description: String {
        let text =
            switch self {
            case .http(let error): "\(error)"
            case .server(let url, let status, let code, let message):
                "\(url): HTTP \(status)" + ([code, message].compactMap { $0 }.joined(separator: ": ").nonEmpty.map { " (\($0))" } ?? "")
            case .redirected(let url, let status, let location):
                "\(url): HTTP \(status), a redirect to \(location ?? "nowhere named") not followed: a code, keys or a certificate go only to "
                    + "the configured URL"
            case .unexpectedResponse(let url, let reason): "\(url): unexpected response: \(reason)"
            case .local(let reason): reason
            }
        return OutsideText.escaped(text)
    }

    /// The server's error code, for callers that act on it.
    package var serverCode: String? {
        if case .server(_, _, let code, _) = self { return code }
        return nil
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
