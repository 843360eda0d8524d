// SPDX-License-Identifier: GPL-3.0-or-later

extension DBusValue {
    /// An array's elements. They read as a collection of `DBusValue`s, but an `ay` (every element
    /// a `.byte`) is stored as `[UInt8]`: one copy in from libdbus's fixed array and one append out,
    /// where a `[DBusValue]` costs a boxed value per byte (a 33 MB `ay` took gaend from 287 MB to
    /// 1.39 GB, issue 16). The form is canonical (bytes whenever every element is a `.byte`), so
    /// equality and hashing do not depend on how the value was built.
    package struct Elements: RandomAccessCollection, ExpressibleByArrayLiteral, Hashable, Sendable, CustomStringConvertible,
        CustomDebugStringConvertible
    {
        private enum Storage: Hashable, Sendable {
            case values([DBusValue])
            case bytes([UInt8])
        }
        private let storage: Storage

        package init(_ values: [DBusValue]) {
            var bytes = [UInt8]()
            bytes.reserveCapacity(values.count)
            for value in values {
                guard case .byte(let byte) = value else {
                    storage = .values(values)
                    return
                }
                bytes.append(byte)
            }
            storage = bytes.isEmpty ? .values([]) : .bytes(bytes)
        }

        /// The elements of an `ay`.
        package init(bytes: [UInt8]) {
            storage = bytes.isEmpty ? .values([]) : .bytes(bytes)
        }

        package init(arrayLiteral elements: DBusValue...) { self.init(elements) }

        /// The elements as bytes when every one is a `.byte` (an empty array included); nil otherwise.
        package var bytes: [UInt8]? {
            switch storage {
            case .bytes(let bytes): bytes
            case .values(let values): values.isEmpty ? [] : nil
            }
        }

        package var startIndex: Int { 0 }
        package var endIndex: Int {
            switch storage {
            case .bytes(let bytes): bytes.count
            case .values(let values): values.count
            }
        }

        package subscript(position: Int) -> DBusValue {
            switch storage {
            case .bytes(let bytes): .byte(bytes[position])
            case .values(let values): values[position]
            }
        }

        package var description: String { Array(self).description }
        package var debugDescription: String { Array(self).debugDescription }
    }
}
