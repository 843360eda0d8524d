// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import GaendTestSupport
import Testing

/// The bash completions `make install` and the package ship complete values, not only option
/// names: the bus, the properties `get` takes, a test result's type, files of the right kind.
/// Run in a real bash, as bash calls a completion function (`_gaenctl CMD CUR PREV`).
@Suite(.ownThreads) struct CompletionTests {
    func complete(_ line: String, program: String = "gaenctl", in directory: String? = nil) throws -> [String] {
        let tool = try ToolRunner.productsDirectory().appendingPathComponent(program).path
        let files = try TemporaryDirectory()
        let script = files.path + "/completion.bash"
        let generated = try ToolRunner.run(program, ["--generate-completion-script", "bash"])
        try generated.standardOutput.write(toFile: script, atomically: true, encoding: .utf8)
        let function = "_" + program
        let driver = """
            shopt -s extglob
            source "$1"
            COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<<"$COMP_LINE"
            [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMP_WORDS[0]="$3"
            COMPREPLY=()
            \(function) "$3" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let run = try ToolRunner.runProgram(
            "/bin/bash", ["-c", (directory.map { "cd '\($0)' && " } ?? "") + driver, "bash", script, line, tool])
        #expect(run.status == 0, "\(run.standardError)")
        return run.standardOutput.split(separator: "\n").map(String.init)
    }

    @Test func valuesAreCompleted() throws {
        #expect(try complete("gaenctl status --bus s") == ["system", "session"])
        #expect(try complete("gaenctl --json heard --bus ") == ["system", "session", "unix:path="])
        #expect(try complete("gaenctl get Last").contains("LastDownloadTime"))
        #expect(try complete("gaenctl get Last").allSatisfy { $0.hasPrefix("Last") })
        #expect(try complete("gaenctl test-result add --type ") == ["confirmed", "likely", "negative", "self-reported"])
        #expect(try complete("gaen-keyserver issue-code --type l", program: "gaen-keyserver") == ["likely"])
    }

    @Test func filesOfTheRightKind() throws {
        let directory = try TemporaryDirectory()
        for name in ["exposure.json", "notes.txt", "key.pem"] { _ = FileManager.default.createFile(atPath: "\(directory.path)/\(name)", contents: Data()) }
        try FileManager.default.createDirectory(atPath: "\(directory.path)/sub", withIntermediateDirectories: false)
        let configurations = try complete("gaenctl exposures --config ", in: directory.path)
        #expect(configurations.contains("exposure.json"))
        #expect(!configurations.contains("notes.txt"))
        #expect(!configurations.contains("key.pem"))
        let keys = try complete("gaenctl tools match --public-key ", in: directory.path)
        #expect(keys.contains("key.pem"))
        #expect(!keys.contains("exposure.json"))
        #expect(try complete("gaenctl tools keys --data-dir ", in: directory.path).contains("sub"))
    }
}
