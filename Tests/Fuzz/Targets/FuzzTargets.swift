// SPDX-License-Identifier: GPL-3.0-or-later

#if canImport(Glibc)
    import Glibc
#endif

/// One parser of untrusted bytes, driven the way the product drives it. A target may throw away
/// any error the parser throws: only a trap, a sanitizer report or a hang is a finding.
struct FuzzTarget: Sendable {
    var name: String
    var summary: String
    var run: @Sendable ([UInt8]) -> Void
}

enum FuzzTargets {
    /// Where a target's name is passed to libFuzzer's child processes.
    static let environmentKey = "GAEND_FUZZ_TARGET"

    /// Every target; `scripts/fuzz` runs them in this order and its corpus folders carry these names.
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "hci-event", summary: "HCI event packets, and the advertising data of their reports", run: RadioFuzzing.event),
        FuzzTarget(name: "h4", summary: "an H4 byte stream cut into reads, framed, and its events parsed", run: RadioFuzzing.h4Stream),
        FuzzTarget(name: "advertising", summary: "advertising data and its GAEN payload", run: RadioFuzzing.advertisingData),
        FuzzTarget(name: "dbus-message", summary: "a D-Bus message decoded, and read as bluetoothd's signals", run: DBusFuzzing.message),
        FuzzTarget(name: "export-bin", summary: "a bare export.bin", run: KeyFileFuzzing.exportBinary),
        FuzzTarget(name: "key-zip", summary: "a key file archive read and verified", run: KeyFileFuzzing.archive),
        FuzzTarget(name: "export-sig", summary: "export.sig judged against a real export.bin", run: KeyFileFuzzing.signature),
        FuzzTarget(name: "config", summary: "gaend.conf", run: ConfigurationFuzzing.file),
        FuzzTarget(name: "keyserver", summary: "the key server's JSON requests: publish, verify, certificate, codes", run: KeyServerFuzzing.request),
        FuzzTarget(name: "http-request", summary: "gaen-keyserver's HTTP/1.1 requests off one connection, cut into reads", run: HTTPRequestFuzzing.connection),
        FuzzTarget(name: "server-answers", summary: "exposure configuration, export index, verification and publish answers", run: ServerAnswerFuzzing.answer),
        FuzzTarget(name: "contact-log", summary: "a contact-log segment read, indexed and recovered", run: ContactLogFuzzing.segment),
        FuzzTarget(
            name: "scoring", summary: "an exposure configuration in any authority's shape and a windows file, scored (gaenctl tools score)",
            run: ScoringFuzzing.configurationAndWindows),
        FuzzTarget(name: "clock", summary: "the held-sightings file, and a server's Date header", run: ClockFuzzing.input),
        FuzzTarget(name: "btsnoop", summary: "a btsnoop capture read for gaenctl tools replay", run: CaptureFuzzing.capture),
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// Chosen once in `main`, before the driver calls `run` from its one thread.
    nonisolated(unsafe) static var selected: FuzzTarget?

    static func run(_ input: UnsafeBufferPointer<UInt8>) {
        selected?.run(Array(input))
    }
}

/// Helpers that several targets share.
enum FuzzInput {
    /// A file's bytes, or nil.
    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk.prefix(count)
        }
        return ferror(file) == 0 ? bytes : nil
    }

    /// A private directory for targets that need files, removed at exit. Under
    /// `GAEND_FUZZ_SCRATCH` when set (scripts/fuzz points it at its own scratch directory, which it
    /// removes even when a crash skips the exit handlers).
    static let scratchDirectory: String = {
        let parent = getenv("GAEND_FUZZ_SCRATCH").map { String(cString: $0) } ?? "/tmp"
        var template = Array((parent + "/gaend-fuzz-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("gaend-fuzz: cannot make a directory under \(parent)") }
        let path = String(cString: made)
        scratchToRemove = path
        atexit { if let path = FuzzInput.scratchToRemove { _ = system("rm -rf '\(path)'") } }
        return path
    }()

    nonisolated(unsafe) static var scratchToRemove: String?
}
