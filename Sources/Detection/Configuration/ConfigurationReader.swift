// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

/// Typed access to one JSON object of a configuration, each failure naming its key. Shared by
/// every shape gaend reads, so that a value is judged the same whichever authority served it.
struct ConfigurationReader {
    let object: [String: Any]

    func has(_ key: String) -> Bool { object[key] != nil }

    func number(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let raw = object[key] else { return nil }
        guard !Self.isBoolean(raw), let value = (raw as? NSNumber).map({ $0.doubleValue }), value.isFinite, range.contains(value) else {
            throw ConfigurationError(key: key, problem: "\(raw) is not a number in \(Self.text(range.lowerBound))...\(Self.text(range.upperBound))")
        }
        return value
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let raw = object[key] else { return nil }
        guard let value = Self.integer(raw), range.contains(value) else {
            throw ConfigurationError(key: key, problem: "\(raw) is not an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let raw = object[key] else { return nil }
        guard let text = raw as? String else { throw ConfigurationError(key: key, problem: "\(raw) is not a string") }
        return text
    }

    func object(_ key: String) throws(ConfigurationError) -> [String: Any]? {
        guard let raw = object[key] else { return nil }
        guard let value = raw as? [String: Any] else { throw ConfigurationError(key: key, problem: "expected a JSON object") }
        return value
    }

    /// `count` numbers (any of `counts`), each in `range`.
    func numbers(_ key: String, counts: Set<Int>, in range: ClosedRange<Double>) throws(ConfigurationError) -> [Double]? {
        guard let raw = object[key] else { return nil }
        let expected = counts.sorted().map(String.init).joined(separator: " or ")
        guard let values = raw as? [Any], counts.contains(values.count) else {
            throw ConfigurationError(key: key, problem: "expected \(expected) numbers")
        }
        var numbers = [Double]()
        for value in values {
            guard !Self.isBoolean(value), let number = (value as? NSNumber)?.doubleValue, number.isFinite, range.contains(number) else {
                throw ConfigurationError(key: key, problem: "\(value) is not a number in \(Self.text(range.lowerBound))...\(Self.text(range.upperBound))")
            }
            numbers.append(number)
        }
        return numbers
    }

    /// v1's eight scores per parameter, each 0…8, under `key` or its `alias`.
    func scores(_ key: String, alias: String? = nil) throws(ConfigurationError) -> [Int]? {
        guard let name = object[key] != nil ? key : alias.flatMap({ object[$0] != nil ? $0 : nil }) else { return nil }
        guard let values = object[name] as? [Any], values.count == 8, case let numbers = values.compactMap(Self.integer), numbers.count == 8 else {
            throw ConfigurationError(key: name, problem: "expected 8 integers")
        }
        guard numbers.allSatisfy({ (0...8).contains($0) }) else {
            throw ConfigurationError(key: name, problem: "every score must be 0...8")
        }
        return numbers
    }

    /// Attenuation thresholds: `counts` strictly increasing dB values in 0…255.
    func thresholds(_ key: String, counts: ClosedRange<Int> = 2...3) throws(ConfigurationError) -> [Int]? {
        guard let raw = object[key] else { return nil }
        guard let values = raw as? [Any], counts.contains(values.count), case let numbers = values.compactMap(Self.integer),
            numbers.count == values.count
        else {
            let expected = counts.map(String.init).joined(separator: " or ")
            throw ConfigurationError(key: key, problem: "expected \(expected) integers")
        }
        guard numbers.allSatisfy({ (0...255).contains($0) }), zip(numbers, numbers.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw ConfigurationError(key: key, problem: "\(numbers) must be strictly increasing dB values in 0...255")
        }
        return numbers
    }

    /// An integer however JSON wrote it (`2` or `2.0`), never a boolean and never a fraction.
    static func integer(_ value: Any) -> Int? {
        guard !isBoolean(value), let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        // Compared as a double first: NSNumber.intValue would take 2^64 + 1 for 1 and 1.5 for 1.
        guard double.isFinite, double == double.rounded(), abs(double) < 1e15 else { return nil }
        return Int(double)
    }

    /// JSON `true`/`false`: Foundation on Linux gives them as a boolean subclass of NSNumber, which
    /// `as? Int` would also accept, so `true` would pass for 1.
    static func isBoolean(_ value: Any) -> Bool {
        value is NSNumber && ObjectIdentifier(type(of: value)) != ObjectIdentifier(NSNumber.self)
    }

    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }
}
