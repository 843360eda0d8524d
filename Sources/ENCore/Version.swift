// SPDX-License-Identifier: GPL-3.0-or-later

/// The version every gaend program reports. One place, so the daemon, the CLI and the D-Bus
/// `Version` property cannot disagree.
public enum GaendVersion {
    public static let string = "0.2.0"
}
