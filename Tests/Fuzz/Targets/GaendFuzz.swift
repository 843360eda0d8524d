// SPDX-License-Identifier: GPL-3.0-or-later

#if canImport(Glibc)
    import Glibc
#endif

/// `gaend-fuzz TARGET [libFuzzer options] [corpus directories or files]`.
///
/// Built by `scripts/fuzz` with `-sanitize=fuzzer,address -D GAEND_LIBFUZZER`, it hands the target
/// to libFuzzer's driver. Built plainly (as `swift build` builds every target), it runs each input
/// file once, so a crashing input can be replayed without the instrumented build. One executable
/// for every target: one link instead of one per target.
@main
enum GaendFuzz {
    static func main() {
        var arguments = CommandLine.arguments
        // The target comes first, or from the environment: libFuzzer re-runs its own argv (without
        // the name) when it forks or merges, and those children inherit the environment.
        let name: String
        if arguments.count > 1, FuzzTargets.named(arguments[1]) != nil {
            name = arguments.remove(at: 1)
            setenv(FuzzTargets.environmentKey, name, 1)
        } else if let fromEnvironment = getenv(FuzzTargets.environmentKey).map({ String(cString: $0) }) {
            name = fromEnvironment
        } else {
            usage()
        }
        guard let target = FuzzTargets.named(name) else { usage() }
        FuzzTargets.selected = target
        exit(runDriver(arguments))
    }

    static func usage() -> Never {
        var text = "usage: gaend-fuzz TARGET [libFuzzer options] [corpus directories or files]\ntargets:\n"
        for target in FuzzTargets.all { text += "  \(target.name)\(String(repeating: " ", count: max(1, 16 - target.name.count)))\(target.summary)\n" }
        complain(text)
        exit(2)
    }

    /// To standard error, without Foundation's file handles.
    static func complain(_ text: String) {
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}

#if GAEND_LIBFUZZER
    @_extern(c, "LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// libFuzzer keeps argv for the whole run, so the copies are never freed.
    func runDriver(_ arguments: [String]) -> CInt {
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
        for (index, argument) in arguments.enumerated() { argv[index] = strdup(argument) }
        argv[arguments.count] = nil
        var count = CInt(arguments.count)
        var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
        return LLVMFuzzerRunDriver(&count, &vector) { LLVMFuzzerTestOneInput($0, $1) }
    }

    /// The callback by its conventional name: libFuzzer's archive brings its own `main`, which names
    /// it, into the link (ours is the one that runs).
    @_cdecl("LLVMFuzzerTestOneInput")
    func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        FuzzTargets.run(UnsafeBufferPointer(start: data, count: size))
        return 0
    }
#else
    /// Without libFuzzer: every file named, and every file in every directory named, once.
    func runDriver(_ arguments: [String]) -> CInt {
        var inputs = [String]()
        for argument in arguments.dropFirst() where !argument.hasPrefix("-") {
            if let directory = opendir(argument) {
                defer { closedir(directory) }
                while let entry = readdir(directory) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    if !name.hasPrefix(".") { inputs.append(argument + "/" + name) }
                }
            } else {
                inputs.append(argument)
            }
        }
        for path in inputs.sorted() {
            guard let bytes = FuzzInput.read(path) else {
                GaendFuzz.complain("gaend-fuzz: cannot read \(path)\n")
                return 1
            }
            bytes.withUnsafeBufferPointer { FuzzTargets.run($0) }
        }
        print("gaend-fuzz: \(FuzzTargets.selected?.name ?? "?"): ran \(inputs.count) input(s)")
        return 0
    }
#endif
