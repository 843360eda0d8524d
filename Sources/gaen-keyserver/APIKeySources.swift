// SPDX-License-Identifier: GPL-3.0-or-later

import ArgumentParser
import Foundation

/// Where an API key comes from. A key on the command line is in /proc/PID/cmdline, which every
/// local user can read; a file (0600, or a systemd credential: LoadCredential= puts it in
/// $CREDENTIALS_DIRECTORY, readable by the service alone) or the environment (/proc/PID/environ
/// is the process owner's only) keeps it to the server.
struct APIKeySource {
    /// The option names, e.g. "--device-api-key", and the credential's name, e.g. "device-api-key".
    var option: String
    var credential: String

    /// The key: from the option's value, its `-file` option, the systemd credential of the same
    /// name, or `environment`, in that order; `nil` when none is given.
    func resolve(value: String?, file: String?, environment: String) throws -> String? {
        try resolveWithOrigin(value: value, file: file, environment: environment)?.key
    }

    /// The key as `resolve` finds it, and where from (`--x-file PATH`, `credential x`, `$X`), for
    /// errors about the key itself.
    func resolveWithOrigin(value: String?, file: String?, environment: String) throws -> (key: String, origin: String)? {
        if let value {
            FileHandle.standardError.write(
                Data("gaen-keyserver: \(option) on the command line is visible to every local user; use \(option)-file or a credential\n".utf8))
            return (value, option)
        }
        if let file { return (try read(file, option: option + "-file"), "\(option)-file: \(file)") }
        let variables = ProcessInfo.processInfo.environment
        if let directory = variables["CREDENTIALS_DIRECTORY"], FileManager.default.fileExists(atPath: directory + "/" + credential) {
            return (try read(directory + "/" + credential, option: "credential \(credential)"), "credential \(credential)")
        }
        if let key = variables[environment], !key.isEmpty { return (key, "$" + environment) }
        return nil
    }

    /// A key file's first line, without its line end; empty or unreadable files are usage errors.
    private func read(_ path: String, option: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096 else {
            throw ValidationError("\(option): \(path) cannot be read (or is over 4 KiB)")
        }
        let key = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard !key.isEmpty else { throw ValidationError("\(option): \(path) holds no key") }
        return key
    }
}
