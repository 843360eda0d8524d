// SPDX-License-Identifier: GPL-3.0-or-later

package import ENCore
package import Logging

/// Downloads key files with the reference server's index method: fetch `index.txt` (one path a
/// line, oldest first) and turn each line into an absolute URL under the base URL. Which of them
/// are new is the caller's (`ProcessedFilesStore.pending`): a file is marked processed only after
/// it was fully handled, so a failed run downloads it again next time. Downloads have a timeout and a size cap, and transient
/// failures are retried with exponential backoff.
package struct KeyFileDownloader: Sendable {
    package var indexURL: String
    /// What the index's lines are relative to; nil: found from the index URL (`defaultBase`).
    package var baseURL: String?
    package var transport: any HTTPTransport
    /// Where retry waits pass: the continuous clock, or a test's clock that never makes a test wait.
    package var retryClock: any Clock<Duration>
    package var timeout: Duration = .seconds(60)
    /// Attempts per request, the first included.
    package var attempts = 4
    package var firstBackoff: Duration = .seconds(2)
    package static let maximumIndexBytes = 1 << 20
    package static let maximumIndexLines = 10_000
    private let logger: Logger

    package init(
        indexURL: String, baseURL: String?, transport: any HTTPTransport, retryClock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "gaend.download")
    ) {
        self.indexURL = indexURL
        self.baseURL = baseURL
        self.transport = transport
        self.retryClock = retryClock
        self.logger = logger
    }

    /// The absolute URLs of the index's files, in index order.
    package func index() async throws(ClientError) -> [String] {
        let response = try await get(indexURL, limit: Self.maximumIndexBytes)
        return try Self.parseIndex(response.body, baseURL: baseURL, indexURL: indexURL)
    }

    /// One key file's bytes (at most the archive limit).
    package func download(_ url: String) async throws(ClientError) -> [UInt8] {
        try await get(url, limit: KeyFileLimits.maximumArchiveBytes).body
    }

    /// Another document from the same server (the exposure configuration), with the same timeout,
    /// retries and a size cap.
    package func fetch(_ url: String, limit: Int) async throws(ClientError) -> [UInt8] {
        try await get(url, limit: limit).body
    }

    /// What a line of an index may hold: the unreserved and sub-delimiter characters of a URL path.
    static let pathCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/%+=@,:".unicodeScalars)

    /// The index's lines as absolute URLs. Lines are paths relative to the base URL; blank lines and
    /// a missing final newline are fine; anything that is not a plain relative path is refused,
    /// since it would let the index point the daemon anywhere.
    package static func parseIndex(_ body: [UInt8], baseURL: String?, indexURL: String) throws(ClientError) -> [String] {
        guard let text = String(validating: body, as: UTF8.self) else {
            throw .unexpectedResponse(url: indexURL, reason: "the index is not UTF-8 text")
        }
        let chosen = baseURL ?? defaultBase(indexURL: indexURL, firstLine: text.split(separator: "\n").first.map(String.init) ?? "")
        let base = chosen.hasSuffix("/") ? chosen : chosen + "/"
        var urls = [String]()
        var seen = Set<String>()
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: " \t\r")
            if line.isEmpty { continue }
            guard line.count <= 1024, !line.contains("://"), !line.hasPrefix("/"), !line.split(separator: "/").contains(".."),
                line.unicodeScalars.allSatisfy({ Self.pathCharacters.contains($0) })
            else {
                throw .unexpectedResponse(url: indexURL, reason: "line \(number + 1) is not a relative path: '\(line.prefix(80))'")
            }
            let url = base + line
            if seen.insert(url).inserted { urls.append(url) }
            guard urls.count <= maximumIndexLines else {
                throw .unexpectedResponse(url: indexURL, reason: "more than \(maximumIndexLines) entries")
            }
        }
        return urls
    }

    /// The base when none is configured: the index's folder, or the folder above it when the lines
    /// start with the index folder's name, as in the reference server's layout
    /// (`…/exposureKeyExport-CH/index.txt` listing `exposureKeyExport-CH/1-2-00001.zip`).
    package static func defaultBase(indexURL: String, firstLine: String) -> String {
        let folder = String(indexURL[..<(indexURL.lastIndex(of: "/") ?? indexURL.endIndex)])
        // Never above the host: in "https://host" the last slash is the scheme's.
        guard let slash = folder.lastIndex(of: "/"), !folder[..<slash].hasSuffix("/") else { return folder }
        let name = folder[folder.index(after: slash)...]
        let line = firstLine.trimmingCharacters(in: " \t\r")
        return !name.isEmpty && line.hasPrefix(name + "/") ? String(folder[..<slash]) : folder
    }

    private func get(_ url: String, limit: Int) async throws(ClientError) -> HTTPResponse {
        var delay = firstBackoff
        var attempt = 1
        while true {
            let failure: ClientError
            switch await attemptOnce(url, limit: limit) {
            case .success(let response):
                return response
            case .failure(let outcome):
                guard outcome.retryable, attempt < attempts else { throw outcome.error }
                failure = outcome.error
            }
            logger.info("download failed; retrying", metadata: ["url": "\(url)", "attempt": "\(attempt)", "error": "\(failure)"])
            do {
                try await retryClock.sleep(for: delay)
            } catch {
                throw failure
            }
            delay *= 2
            attempt += 1
        }
    }

    private struct AttemptFailure: Error {
        var error: ClientError
        var retryable: Bool
    }

    private func attemptOnce(_ url: String, limit: Int) async -> Result<HTTPResponse, AttemptFailure> {
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(url: url, timeout: timeout, maximumResponseBytes: limit))
        } catch {
            return .failure(AttemptFailure(error: .http(error), retryable: error.isTransient))
        }
        if (200..<300).contains(response.status) { return .success(response) }
        // 5xx, 408 and 429 may pass; any other 4xx will not change by asking again.
        let retryable = response.status >= 500 || response.status == 408 || response.status == 429
        return .failure(AttemptFailure(error: .server(url: url, status: response.status, code: nil, message: nil), retryable: retryable))
    }
}

extension StringProtocol {
    func trimmingCharacters(in characters: String) -> String {
        let set = Set(characters)
        return String(self.drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
