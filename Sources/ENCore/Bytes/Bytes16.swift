// SPDX-License-Identifier: GPL-3.0-or-later

/// Sixteen bytes held inline as two machine words: the size of a TEK, an RPI and the derived keys.
///
/// Matching looks up millions of RPIs a second, so equality and hashing work on two words instead of
/// an array, and no value of this type ever allocates. The words hold the bytes in memory order, so
/// `bytes` round-trips on any endianness.
@frozen
public struct Bytes16: Hashable, Sendable {
    /// Bytes 0...7 and 8...15 in memory order.
    public var words: (UInt64, UInt64)

    /// Sixteen zero bytes.
    public static let zero = Bytes16(words: (0, 0))

    @inlinable
    public init(words: (UInt64, UInt64)) {
        self.words = words
    }

    /// The first 16 bytes at `pointer`, which need no alignment.
    @inlinable
    public init(loadingFrom pointer: UnsafeRawPointer) {
        words = (
            pointer.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
            pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        )
    }

    /// Exactly 16 bytes, or `nil`.
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let array = Array(bytes)
        self = array.withUnsafeBytes { Bytes16(loadingFrom: $0.baseAddress!) }
    }

    /// Exactly 32 hex digits.
    public init(hex: some StringProtocol) throws(HexDecodingError) {
        let bytes = try Hex.decode(hex, count: 16)
        self.init(bytes)!
    }

    /// Writes the 16 bytes to `pointer`, which needs no alignment.
    @inlinable
    public func store(to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: words.0, toByteOffset: 0, as: UInt64.self)
        pointer.storeBytes(of: words.1, toByteOffset: 8, as: UInt64.self)
    }

    /// Calls `body` with the 16 bytes, without allocating.
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var copy = words
        return try Swift.withUnsafeBytes(of: &copy) { try body($0) }
    }

    /// The bytes as an array.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Lowercase hex, 32 digits.
    public var hex: String { Hex.encode(bytes) }

    @inlinable
    public static func == (lhs: Bytes16, rhs: Bytes16) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }
}
