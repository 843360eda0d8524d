// SPDX-License-Identifier: GPL-3.0-or-later

/// An unknown field passed over, or a value too long to hold that is passed over before it is
/// refused (so that truncation speaks first, as it does when the whole file is at hand): it may
/// span any number of a stream's windows, and only its place in it is kept.
struct WireSkip {
    /// Bytes of a value still to pass over.
    private var bytesLeft = 0
    /// The unknown groups it is inside, innermost last: their field numbers, to match their ends.
    private var groups: [UInt32] = []
    /// What to throw once it is passed over.
    private var failure: WireError?

    /// A value of `count` bytes passed over, then `failure` thrown.
    init(bytes count: Int, then failure: WireError) {
        bytesLeft = count
        self.failure = failure
    }

    /// The value of a field whose tag was just read, up to its bytes (a varint is read at once).
    init(_ field: UInt32, _ wire: WireCursor.Wire, _ cursor: inout WireCursor) throws(WireError) {
        switch wire {
        case .varint: _ = try cursor.varint()
        case .fixed64: bytesLeft = 8
        case .fixed32: bytesLeft = 4
        case .lengthDelimited: bytesLeft = try cursor.length()
        // An end without a start: SwiftProtobuf calls it truncated.
        case .endGroup: throw .truncated
        case .startGroup: groups = [field]
        }
    }

    /// Passes over what `cursor` holds of it: true when it is done, false when it needs more bytes.
    mutating func advance(_ cursor: inout WireCursor) throws(WireError) -> Bool {
        while true {
            if bytesLeft > 0 {
                let step = min(bytesLeft, cursor.available)
                cursor.position += step
                bytesLeft -= step
                guard bytesLeft == 0 else {
                    if cursor.isComplete { throw .truncated }
                    return false
                }
            }
            guard let innermost = groups.last else {
                if let failure { throw failure }
                return true
            }
            // A group's fields one at a time, each tag with its varint or length, whole or not at all.
            let start = cursor.position
            do throws(WireError) {
                guard let (field, wire) = try cursor.tag() else { throw .truncated }
                switch wire {
                case .endGroup:
                    guard field == innermost else { throw .malformed }
                    groups.removeLast()
                case .startGroup:
                    guard groups.count < 99 else { throw .malformed }
                    groups.append(field)
                default:
                    bytesLeft = try WireSkip(field, wire, &cursor).bytesLeft
                }
            } catch .needMore {
                cursor.position = start
                return false
            }
        }
    }
}
