// SPDX-License-Identifier: GPL-3.0-or-later

internal import CDBus
internal import CGaendShims
import Glibc

/// Conversion between `DBusMessage` and libdbus messages. Encoding validates first (libdbus aborts
/// on invalid names and values); decoding reads whatever a peer sent, which the bus has already
/// checked against the specification.
enum Marshalling {
    /// A new libdbus message the caller owns (one reference: `dbus_message_unref`).
    static func encode(_ message: DBusMessage) throws(DBusError) -> OpaquePointer {
        try message.validate()
        let type: Int32 =
            switch message.kind {
            case .methodCall: DBUS_MESSAGE_TYPE_METHOD_CALL
            case .methodReturn: DBUS_MESSAGE_TYPE_METHOD_RETURN
            case .error: DBUS_MESSAGE_TYPE_ERROR
            case .signal: DBUS_MESSAGE_TYPE_SIGNAL
            }
        guard let pointer = dbus_message_new(type) else { throw DBusError(.noMemory, "dbus_message_new") }
        var ok: dbus_bool_t = 1
        if let path = message.path { ok &= dbus_message_set_path(pointer, path) }
        if let interface = message.interface { ok &= dbus_message_set_interface(pointer, interface) }
        if let member = message.member { ok &= dbus_message_set_member(pointer, member) }
        if let errorName = message.errorName { ok &= dbus_message_set_error_name(pointer, errorName) }
        if let destination = message.destination { ok &= dbus_message_set_destination(pointer, destination) }
        if let replySerial = message.replySerial { ok &= dbus_message_set_reply_serial(pointer, replySerial) }
        if message.noReply { dbus_message_set_no_reply(pointer, 1) }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iterator)
        for value in message.body where ok != 0 {
            ok = append(value, to: &iterator) ? 1 : 0
        }
        guard ok != 0 else {
            dbus_message_unref(pointer)
            throw DBusError(.noMemory, "building a \(message.kind) message")
        }
        return pointer
    }

    private static func appendBasic<T: BitwiseCopyable>(_ value: T, _ type: Int32, to iterator: inout DBusMessageIter) -> Bool {
        withUnsafePointer(to: value) { dbus_message_iter_append_basic(&iterator, type, $0) != 0 }
    }

    private static func appendString(_ text: String, _ type: Int32, to iterator: inout DBusMessageIter) -> Bool {
        text.withCString { characters in
            var pointer: UnsafePointer<CChar>? = characters
            return dbus_message_iter_append_basic(&iterator, type, &pointer) != 0
        }
    }

    private static func container(
        _ type: Int32, _ signature: String?, in iterator: inout DBusMessageIter, _ body: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var sub = DBusMessageIter()
        let opened =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(&iterator, type, $0, &sub) }
            } else {
                dbus_message_iter_open_container(&iterator, type, nil, &sub)
            }
        guard opened != 0 else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iterator, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iterator, &sub) != 0
    }

    private static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(let v): return appendBasic(v, cgaend_dbus_type_byte, to: &iterator)
        case .boolean(let v): return appendBasic(dbus_bool_t(v ? 1 : 0), cgaend_dbus_type_boolean, to: &iterator)
        case .int16(let v): return appendBasic(v, cgaend_dbus_type_int16, to: &iterator)
        case .uint16(let v): return appendBasic(v, cgaend_dbus_type_uint16, to: &iterator)
        case .int32(let v): return appendBasic(v, cgaend_dbus_type_int32, to: &iterator)
        case .uint32(let v): return appendBasic(v, cgaend_dbus_type_uint32, to: &iterator)
        case .int64(let v): return appendBasic(v, cgaend_dbus_type_int64, to: &iterator)
        case .uint64(let v): return appendBasic(v, cgaend_dbus_type_uint64, to: &iterator)
        case .double(let v): return appendBasic(v, cgaend_dbus_type_double, to: &iterator)
        case .string(let v): return appendString(v, cgaend_dbus_type_string, to: &iterator)
        case .objectPath(let v): return appendString(v, cgaend_dbus_type_object_path, to: &iterator)
        case .signature(let v): return appendString(v, cgaend_dbus_type_signature, to: &iterator)
        case .unixFD(let descriptor):
            // libdbus duplicates the descriptor; ours stays open until its owner lets go.
            return appendBasic(descriptor.rawValue, cgaend_dbus_type_unix_fd, to: &iterator)
        case .array(.byte, let values) where values.bytes != nil:
            // One fixed-array append, not a call per byte.
            return container(cgaend_dbus_type_array, "y", in: &iterator) { sub in
                values.bytes!.withUnsafeBufferPointer { buffer in
                    guard let start = buffer.baseAddress, buffer.count > 0 else { return true }
                    var elements: UnsafePointer<UInt8>? = start
                    return dbus_message_iter_append_fixed_array(&sub, cgaend_dbus_type_byte, &elements, Int32(buffer.count)) != 0
                }
            }
        case .array(let element, let values):
            return container(cgaend_dbus_type_array, element.signature, in: &iterator) { sub in
                values.allSatisfy { append($0, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            return container(cgaend_dbus_type_array, "{" + key.signature + valueType.signature + "}", in: &iterator) { sub in
                entries.allSatisfy { entry in
                    container(cgaend_dbus_type_dict_entry, nil, in: &sub) { pair in
                        append(entry.key, to: &pair) && append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            return container(cgaend_dbus_type_struct, nil, in: &iterator) { sub in
                fields.allSatisfy { append($0, to: &sub) }
            }
        case .variant(let inner):
            return container(cgaend_dbus_type_variant, inner.type.signature, in: &iterator) { sub in
                append(inner, to: &sub)
            }
        }
    }

    // MARK: Decoding

    /// The message's type; nil for one this side does not know.
    static func kind(of pointer: OpaquePointer) -> DBusMessage.Kind? {
        switch dbus_message_get_type(pointer) {
        case DBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
        case DBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
        case DBUS_MESSAGE_TYPE_ERROR: .error
        case DBUS_MESSAGE_TYPE_SIGNAL: .signal
        default: nil
        }
    }

    /// The message's header and body, within `limits`' decoding budget. The pointer stays the caller's.
    static func decode(_ pointer: OpaquePointer, limits: DBusLimits = .standard) throws(DBusError) -> DBusMessage {
        guard let kind = kind(of: pointer) else {
            throw DBusError(.invalidArgs, "message type \(dbus_message_get_type(pointer)) is unknown")
        }
        func string(_ characters: UnsafePointer<CChar>?) -> String? { characters.map { String(cString: $0) } }
        var message = DBusMessage(
            kind: kind, path: string(dbus_message_get_path(pointer)), interface: string(dbus_message_get_interface(pointer)),
            member: string(dbus_message_get_member(pointer)), errorName: string(dbus_message_get_error_name(pointer)),
            destination: string(dbus_message_get_destination(pointer)))
        message.sender = string(dbus_message_get_sender(pointer))
        message.serial = dbus_message_get_serial(pointer)
        let replySerial = dbus_message_get_reply_serial(pointer)
        message.replySerial = replySerial == 0 ? nil : replySerial
        message.noReply = dbus_message_get_no_reply(pointer) != 0
        var iterator = DBusMessageIter()
        if dbus_message_iter_init(pointer, &iterator) != 0 {
            var budget = DecodeBudget(limits)
            repeat {
                message.body.append(try decodeValue(&iterator, budget: &budget, depth: 0))
            } while dbus_message_iter_next(&iterator) != 0
        }
        return message
    }

    /// Bounds on one message's decoding, beyond what libdbus enforces: values decoded (every
    /// element of every array and dictionary), bytes of strings and byte arrays, and nesting. Each
    /// is checked before the value is made, so a message never expands past them.
    struct DecodeBudget {
        private(set) var values = 0
        private(set) var bytes = 0
        let maximumValues: Int
        let maximumBytes: Int

        init(_ limits: DBusLimits) {
            maximumValues = limits.maximumDecodedValues
            maximumBytes = limits.maximumDecodedBytes
        }

        mutating func spend() throws(DBusError) {
            values += 1
            guard values <= maximumValues else {
                throw DBusError(.limitsExceeded, "a message with more than \(maximumValues) values")
            }
        }

        mutating func spend(bytes count: Int) throws(DBusError) {
            bytes += count
            guard bytes <= maximumBytes else {
                throw DBusError(.limitsExceeded, "a message with more than \(maximumBytes) bytes of strings and arrays")
            }
        }
    }

    private static func basic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iterator, $0) }
        return value
    }

    private static func basicString(_ iterator: inout DBusMessageIter, budget: inout DecodeBudget) throws(DBusError) -> String {
        var characters: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &characters)
        guard let characters else { return "" }
        try budget.spend(bytes: strlen(characters))
        return String(cString: characters)
    }

    private static func signature(_ iterator: inout DBusMessageIter) throws(DBusError) -> DBusType {
        guard let characters = dbus_message_iter_get_signature(&iterator) else { throw DBusError(.noMemory, "reading a signature") }
        defer { dbus_free(characters) }
        return try DBusType(signature: String(cString: characters))
    }

    private static func decodeValue(_ iterator: inout DBusMessageIter, budget: inout DecodeBudget, depth: Int) throws(DBusError) -> DBusValue {
        try budget.spend()
        guard depth <= 64 else { throw DBusError(.limitsExceeded, "values nested more than 64 deep") }
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case cgaend_dbus_type_byte: return .byte(basic(&iterator, UInt8(0)))
        case cgaend_dbus_type_boolean: return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case cgaend_dbus_type_int16: return .int16(basic(&iterator, Int16(0)))
        case cgaend_dbus_type_uint16: return .uint16(basic(&iterator, UInt16(0)))
        case cgaend_dbus_type_int32: return .int32(basic(&iterator, Int32(0)))
        case cgaend_dbus_type_uint32: return .uint32(basic(&iterator, UInt32(0)))
        case cgaend_dbus_type_int64: return .int64(basic(&iterator, Int64(0)))
        case cgaend_dbus_type_uint64: return .uint64(basic(&iterator, UInt64(0)))
        case cgaend_dbus_type_double: return .double(basic(&iterator, Double(0)))
        case cgaend_dbus_type_string: return .string(try basicString(&iterator, budget: &budget))
        case cgaend_dbus_type_object_path: return .objectPath(try basicString(&iterator, budget: &budget))
        case cgaend_dbus_type_signature: return .signature(try basicString(&iterator, budget: &budget))
        case cgaend_dbus_type_unix_fd:
            // libdbus hands out a duplicate that the caller must close.
            let descriptor = basic(&iterator, Int32(-1))
            guard descriptor >= 0 else { throw DBusError(.failed, "a file descriptor that was not received") }
            return .unixFD(DBusFileDescriptor(owning: descriptor))
        case cgaend_dbus_type_array:
            let arrayType = try signature(&iterator)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            switch arrayType {
            case .array(.byte):
                var elements: UnsafePointer<UInt8>?
                var count: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &elements, &count)
                guard let elements, count > 0 else { return .bytes([]) }
                try budget.spend(bytes: Int(count))
                // One copy out of the message, kept as bytes (not a boxed value per byte).
                return .array(element: .byte, DBusValue.Elements(bytes: Array(UnsafeBufferPointer(start: elements, count: Int(count)))))
            case .array(let element):
                var values = [DBusValue]()
                while dbus_message_iter_get_arg_type(&sub) != cgaend_dbus_type_invalid {
                    values.append(try decodeValue(&sub, budget: &budget, depth: depth + 1))
                    dbus_message_iter_next(&sub)
                }
                return .array(element: element, values)
            case .dictionary(let key, let value):
                var entries = [DBusValue.DictionaryEntry]()
                while dbus_message_iter_get_arg_type(&sub) == cgaend_dbus_type_dict_entry {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let decodedKey = try decodeValue(&pair, budget: &budget, depth: depth + 1)
                    dbus_message_iter_next(&pair)
                    let decodedValue = try decodeValue(&pair, budget: &budget, depth: depth + 1)
                    entries.append(.init(decodedKey, decodedValue))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            default:
                throw DBusError(.invalidSignature, "an array of signature \(arrayType)")
            }
        case cgaend_dbus_type_struct:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            var fields = [DBusValue]()
            while dbus_message_iter_get_arg_type(&sub) != cgaend_dbus_type_invalid {
                fields.append(try decodeValue(&sub, budget: &budget, depth: depth + 1))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case cgaend_dbus_type_variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .variant(try decodeValue(&sub, budget: &budget, depth: depth + 1))
        default:
            throw DBusError(.invalidSignature, "type code \(type) is unknown")
        }
    }
}
