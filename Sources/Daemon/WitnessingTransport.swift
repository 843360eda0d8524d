// SPDX-License-Identifier: GPL-3.0-or-later

package import ClockTrust
import ENCore
package import KeyFiles

/// An HTTP transport whose every answer's `Date` is a witness to the clock: the key server's and
/// the verification server's (Corona-Warn-App's rule, cwa-app-android PR #1985).
package struct WitnessingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let board: ClockTrustBoard

    /// Over libcurl, as gaend downloads.
    package init(board: ClockTrustBoard) {
        self.init(CurlTransport(), board: board)
    }

    package init(_ inner: any HTTPTransport, board: ClockTrustBoard) {
        self.inner = inner
        self.board = board
    }

    package func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let response = try await inner.send(request)
        if let date = response.headers["date"].flatMap(HTTPDate.parse) { board.witnessed(server: date) }
        return response
    }
}
