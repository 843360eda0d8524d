// SPDX-License-Identifier: GPL-3.0-or-later

/// Introspection XML (D-Bus Specification, "Introspection Data Format") from interface tables.
enum Introspection {
    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// The standard interfaces every object has, and ObjectManager where one is.
    static func standard(properties: Bool, objectManager: Bool) -> [DBusInterface] {
        var interfaces = [
            DBusInterface(
                name: StandardInterfaces.peer,
                methods: [
                    DBusMethod("Ping") { _ in [] },
                    DBusMethod("GetMachineId", outputs: [DBusArgument("machine_uuid", .string)]) { _ in [] },
                ]),
            DBusInterface(
                name: StandardInterfaces.introspectable,
                methods: [
                    DBusMethod("Introspect", outputs: [DBusArgument("xml_data", .string)]) { _ in [] }
                ]),
        ]
        if properties {
            interfaces.append(
                DBusInterface(
                    name: StandardInterfaces.properties,
                    methods: [
                        DBusMethod("Get", inputs: [.init("interface_name", .string), .init("property_name", .string)], outputs: [.init("value", .variant)]) {
                            _ in []
                        },
                        DBusMethod("GetAll", inputs: [.init("interface_name", .string)], outputs: [.init("props", .dictionary(key: .string, value: .variant))])
                        { _ in [] },
                        DBusMethod("Set", inputs: [.init("interface_name", .string), .init("property_name", .string), .init("value", .variant)]) { _ in [] },
                    ],
                    signals: [
                        DBusSignal(
                            "PropertiesChanged",
                            [
                                .init("interface_name", .string), .init("changed_properties", .dictionary(key: .string, value: .variant)),
                                .init("invalidated_properties", .array(.string)),
                            ])
                    ]))
        }
        if objectManager {
            interfaces.append(
                DBusInterface(
                    name: StandardInterfaces.objectManager,
                    methods: [
                        DBusMethod("GetManagedObjects", outputs: [.init("objects", ObjectTable.managedObjectsType)]) { _ in [] }
                    ],
                    signals: [
                        DBusSignal(
                            "InterfacesAdded",
                            [
                                .init("object_path", .objectPath),
                                .init("interfaces_and_properties", .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))),
                            ]),
                        DBusSignal("InterfacesRemoved", [.init("object_path", .objectPath), .init("interfaces", .array(.string))]),
                    ]))
        }
        return interfaces
    }

    static func xml(interfaces: [DBusInterface], children: [String]) -> String {
        var lines = [header + "<node>"]
        for interface in interfaces {
            lines.append(" <interface name=\"\(interface.name)\">")
            for method in interface.methods {
                lines.append("  <method name=\"\(method.name)\">")
                for argument in method.inputs {
                    lines.append("   <arg name=\"\(argument.name)\" type=\"\(escape(argument.type.signature))\" direction=\"in\"/>")
                }
                for argument in method.outputs {
                    lines.append("   <arg name=\"\(argument.name)\" type=\"\(escape(argument.type.signature))\" direction=\"out\"/>")
                }
                lines.append("  </method>")
            }
            for signal in interface.signals {
                lines.append("  <signal name=\"\(signal.name)\">")
                for argument in signal.arguments { lines.append("   <arg name=\"\(argument.name)\" type=\"\(escape(argument.type.signature))\"/>") }
                lines.append("  </signal>")
            }
            for property in interface.properties {
                let opening = "  <property name=\"\(property.name)\" type=\"\(escape(property.type.signature))\" access=\"\(property.access.rawValue)\""
                if property.emitsChanged {
                    lines.append(opening + "/>")
                } else {
                    lines.append(opening + ">")
                    lines.append("   <annotation name=\"\(StandardInterfaces.emitsChangedSignal)\" value=\"false\"/>")
                    lines.append("  </property>")
                }
            }
            lines.append(" </interface>")
        }
        for child in children { lines.append(" <node name=\"\(child)\"/>") }
        lines.append("</node>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Signatures may hold `{` `}` `(` `)` but nothing XML reserves; argument names are ours.
    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
