// swift-tools-version: 6.3
// gaend: Google/Apple Exposure Notification on Linux. SPDX-License-Identifier: GPL-3.0-or-later

import PackageDescription

/// Every Swift target builds in Swift 6 mode with the same strictness: imports are internal unless a
/// public API needs them, existentials are spelled `any`, and a member is visible only where its
/// module is imported.
let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "gaend",
    products: [
        .executable(name: "gaend", targets: ["gaend"]),
        .executable(name: "gaenctl", targets: ["gaenctl"]),
        .executable(name: "gaen-bench", targets: ["gaen-bench"]),
        .executable(name: "gaen-keyserver", targets: ["gaen-keyserver"]),
        .library(name: "ENCore", targets: ["ENCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // Runtime only: the generated code is committed (docs/key-files.md), the plugin never builds here.
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // gaen-keyserver's HTTP server: one package, no NIO (13.9 s debug build vs 105 s for Hummingbird here).
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
    ],
    targets: [
        // C libraries from Debian, found through pkg-config. Only the wrapper modules import them.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // zlib for inflating key-file entries in small chunks (KeyFiles/Archive/Inflater.swift).
        .systemLibrary(name: "CInflate", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CPostgreSQL", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // glibc's adjtimex(2) and timerfd(2) headers, which Swift's Glibc module does not include.
        .systemLibrary(name: "CKernelClock"),
        // glibc's allocator options (mallopt's macros), which Swift's Glibc module leaves out.
        .systemLibrary(name: "CMalloc"),
        .target(name: "CSpawn"),
        // libcurl's easy interface behind typed functions (its setopt is variadic), for CurlTransport.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // What Swift cannot import from those headers: function-like macros and typed constants.
        .target(name: "CGaendShims", dependencies: ["COpenSSL", "CDBus", "CBlueZ"]),

        // Pure Swift: no C, no I/O.
        .target(name: "ENCore", swiftSettings: strictSwift),
        // The only libcrypto user.
        .target(name: "ENCrypto", dependencies: ["ENCore", "COpenSSL", "CGaendShims"], swiftSettings: strictSwift),
        // The system calls on descriptors, the real-time clock and the one errno type (Glibc behind one wall).
        .target(name: "SystemCalls", dependencies: ["ENCore", "CKernelClock", "CMalloc", "CSpawn"], swiftSettings: strictSwift),
        // State under a lock that tasks wait on, cancellably: the package's one such waiter.
        .target(name: "Conditions", swiftSettings: strictSwift),
        // Whether the wall clock may be trusted: the kernel's synchronization, the key server's Date,
        // the boot clock that times what is heard meanwhile; the service that keeps the verdict.
        .target(
            name: "ClockTrust",
            dependencies: [
                "ENCore", "SystemCalls", "Conditions", "ContactLog", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // gaend's own executors (threads that sleep until there is work), installed by its entry.
        .target(name: "Executors", dependencies: ["SystemCalls"], swiftSettings: strictSwift),
        // What the three programs' command lines share: usage errors exit 2.
        .target(
            name: "CommandSupport", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")], swiftSettings: strictSwift),
        // Daemons' log lines: journald priorities when stderr is the journal, one shared level.
        .target(
            name: "DaemonLog", dependencies: ["ENCore", "Storage", "SystemCalls", .product(name: "Logging", package: "swift-log")], swiftSettings: strictSwift),
        // Files in the data directory: permissions, atomic replacement, checksums.
        .target(name: "Storage", dependencies: ["ENCore", "SystemCalls", .product(name: "Logging", package: "swift-log")], swiftSettings: strictSwift),
        .target(
            name: "KeySchedule",
            dependencies: ["ENCore", "ENCrypto", "Storage", "Conditions", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        // The append-only contact log: day segments, recovery, retention, the matching index.
        .target(
            name: "ContactLog",
            dependencies: ["ENCore", "Storage", "Conditions", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        // Key export files: archive, schema, signature policy, writer; download and publish clients.
        .target(
            name: "KeyFiles",
            dependencies: [
                "ENCore", "ENCrypto", "Storage", "CInflate", "CCurl",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Generated/README.md"],
            swiftSettings: strictSwift),
        // The libdbus wrapper: a connection with its own pump thread, typed values, exported objects.
        .target(name: "DBus", dependencies: ["CDBus", "CGaendShims", "SystemCalls", "Conditions"], swiftSettings: strictSwift),
        // The controller side of HCI: packet codec and H4 framing (pure), transports, the driver.
        .target(
            name: "HCI", dependencies: ["ENCore", "CBlueZ", "SystemCalls", "Conditions", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        // The bus contract between gaend and gaenctl: Manager1's names, signatures and errors.
        .target(name: "GaendAPI", dependencies: ["ENCore"], swiftSettings: strictSwift),
        // gaend's configuration: each key once (file, command line, reload, `gaenctl config show`), the radio spec.
        .target(name: "GaendConfiguration", dependencies: ["ENCore"], swiftSettings: strictSwift),
        // The commit built, for --version: a leaf module, so a new commit recompiles only it.
        .target(name: "BuildRevision", dependencies: ["ENCore"], swiftSettings: strictSwift, plugins: ["RevisionPlugin"]),
        .plugin(name: "RevisionPlugin", capability: .buildTool()),
        // The beacon whatever the back end: session, advertiser, scanner, timeline, status, and its
        // driver (the machine, the back-end protocol).
        .target(
            name: "Beacon",
            dependencies: [
                "ENCore", "ENCrypto", "KeySchedule", "ContactLog", "GaendConfiguration", "Conditions", "DaemonLog",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // The beacon's back end on an HCI controller (kernel, UART, socket).
        .target(
            name: "HCIBeacon", dependencies: ["ENCore", "HCI", "Beacon", "GaendConfiguration", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        // The only libsqlite3 user: a connection, statements, transactions.
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: strictSwift),
        // The only libpq user: a connection, binary parameters and results, transactions.
        .target(name: "PostgreSQL", dependencies: ["CPostgreSQL"], swiftSettings: strictSwift),
        // gaen-keyserver's logic: publish validation, verification, exports, and their storage in
        // SQLite or PostgreSQL.
        .target(
            name: "KeyServer",
            dependencies: [
                "ENCore", "ENCrypto", "SQLite", "PostgreSQL", "KeyFiles", "Storage", "SystemCalls", .product(name: "Logging", package: "swift-log"),
            ], swiftSettings: strictSwift),
        // The beacon's back end beside bluetoothd, over D-Bus.
        .target(
            name: "BlueZ",
            dependencies: ["DBus", "ENCore", "Beacon", "Conditions", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        // What tells the owner beside Manager1: the exposure hook and the status LED.
        .target(
            name: "OwnerSignals",
            dependencies: [
                "ENCore", "GaendAPI", "GaendConfiguration", "Detection", "Storage", "SystemCalls", "Conditions",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // Manager1 over D-Bus, and the wiring the daemon's entry needs (systemd, detection's setup).
        .target(
            name: "Daemon",
            dependencies: [
                "ENCore", "GaendAPI", "GaendConfiguration", "Beacon", "DBus", "Conditions", "ClockTrust", "KeySchedule", "ContactLog", "Storage",
                "Detection", "KeyFiles", "OwnerSignals", "SystemCalls",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // Matching, exposure windows, v1/v2/per-day scoring, the detection worker.
        .target(
            name: "Detection",
            dependencies: [
                "ENCore", "ENCrypto", "ContactLog", "KeyFiles", "Storage", "Conditions", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        // Recorded sightings through the product's own path, scanner to verdict (gaenctl tools
        // replay, gaen-bench traces).
        .target(
            name: "Replay",
            dependencies: [
                "ENCore", "ENCrypto", "ContactLog", "KeyFiles", "Detection", "Storage", "SQLite", "HCI", .product(name: "Logging", package: "swift-log"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: strictSwift),
        .target(
            name: "GaenCtlCommands",
            dependencies: [
                "ENCore", "ENCrypto", "KeySchedule", "Storage", "SystemCalls", "ContactLog", "KeyFiles", "Detection", "Replay", "DBus", "GaendAPI",
                "GaendConfiguration", "BuildRevision",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift),

        // Executables: wiring only.
        .executableTarget(
            name: "gaend",
            dependencies: [
                "ENCore", "GaendConfiguration", "BuildRevision", "Daemon", "OwnerSignals", "DaemonLog", "CommandSupport", "Executors", "ClockTrust", "HCI",
                "Beacon",
                "HCIBeacon", "BlueZ",
                "Detection",
                "KeySchedule",
                "ContactLog", "Storage", "SystemCalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        .executableTarget(name: "gaenctl", dependencies: ["GaenCtlCommands"], swiftSettings: strictSwift),
        .executableTarget(
            name: "gaen-keyserver",
            dependencies: [
                "KeyServer", "ENCore", "ENCrypto", "BuildRevision", "DaemonLog", "CommandSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "FlyingSocks", package: "FlyingFox"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        // The plain-C baseline the benchmark compares the Swift paths with; linked into gaen-bench only.
        .target(name: "BaselineC", dependencies: ["COpenSSL"]),
        .executableTarget(
            name: "gaen-bench",
            dependencies: [
                "ENCore", "ENCrypto", "BaselineC", "ContactLog", "Storage", "SystemCalls", "KeyFiles", "Detection", "DBus", "KeyServer", "Replay",
                "PostgreSQL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift),
        // libFuzzer targets for every parser of untrusted bytes (scripts/fuzz builds them with
        // -sanitize=fuzzer,address); a plain build replays inputs once. `Extern` declares libFuzzer's
        // C driver function.
        .executableTarget(
            name: "gaend-fuzz",
            dependencies: [
                "ENCore", "ENCrypto", "HCI", "DBus", "BlueZ", "KeyFiles", "Daemon", "GaendConfiguration", "KeyServer", "ContactLog", "Detection", "Storage",
                "Replay", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Fuzz/Targets",
            swiftSettings: strictSwift + [.enableExperimentalFeature("Extern")]),

        // Fakes and fixtures the test targets share: an injected clock, a predictable random source,
        // temporary directories, private servers (dbus-daemon, PostgreSQL...).
        .target(
            name: "GaendTestSupport", dependencies: ["ENCore", "ENCrypto", "ClockTrust", "HCI", "PostgreSQL", "SystemCalls"], path: "Tests/TestSupport",
            swiftSettings: strictSwift),
        .testTarget(name: "ENCoreTests", dependencies: ["ENCore"], swiftSettings: strictSwift),
        .testTarget(
            name: "ClockTrustTests", dependencies: ["ClockTrust", "ENCore", "Conditions", "SystemCalls", "GaendTestSupport"], swiftSettings: strictSwift),
        .testTarget(
            name: "ENCryptoTests", dependencies: ["ENCore", "ENCrypto"], resources: [.copy("Fixtures")],
            swiftSettings: strictSwift),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "SystemCalls", "GaendTestSupport"], swiftSettings: strictSwift),
        .testTarget(
            name: "KeyScheduleTests",
            dependencies: [
                "KeySchedule", "ENCore", "ENCrypto", "Storage", "GaendTestSupport",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "KeyFilesTests",
            dependencies: ["KeyFiles", "ENCore", "ENCrypto", "Storage", "GaendTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSwift),
        .testTarget(
            name: "HCITests", dependencies: ["HCI", "GaendConfiguration", "ENCore", "GaendTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        // The daemon in process: its timelines and services on a fake back end and the test clocks.
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "Daemon", "OwnerSignals", "Beacon", "HCI", "DBus", "GaendAPI", "GaendConfiguration", "ENCore", "KeySchedule", "ContactLog", "KeyFiles",
                "Detection", "Storage",
                "SystemCalls", "ClockTrust",
                "GaendTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "BeaconTests",
            dependencies: [
                "Beacon", "HCIBeacon", "HCI", "GaendConfiguration", "ENCore", "ENCrypto", "KeySchedule", "ContactLog", "Storage", "SystemCalls",
                "ClockTrust", "Replay", "GaendTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "BlueZTests",
            dependencies: [
                "BlueZ", "DBus", "HCI", "Beacon", "ENCore", "GaendConfiguration", "KeySchedule", "ContactLog", "Storage", "GaendTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "KeyServerTests",
            dependencies: [
                "KeyServer", "SQLite", "PostgreSQL", "ENCore", "ENCrypto", "KeyFiles", "Storage", "GaendTestSupport",
                .product(name: "InMemoryLogging", package: "swift-log"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "GaendTestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "ConditionsTests", dependencies: ["Conditions"], swiftSettings: strictSwift),
        .testTarget(name: "ExecutorsTests", dependencies: ["Executors"], swiftSettings: strictSwift),
        .testTarget(
            name: "ReplayTests",
            dependencies: ["Replay", "Detection", "ContactLog", "ENCore", "KeyFiles", "Storage", "SQLite", "GaendTestSupport"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "DetectionTests",
            dependencies: [
                "Detection", "ContactLog", "KeyFiles", "ENCore", "ENCrypto", "Storage", "GaendTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ContactLogTests",
            dependencies: [
                "ContactLog", "ENCore", "Storage", "GaendTestSupport",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "SystemTests",
            dependencies: [
                "GaenCtlCommands", "gaenctl", "gaend", "gaen-keyserver", "gaen-bench", "KeyServer", "DBus", "Daemon", "OwnerSignals", "GaendAPI",
                "GaendConfiguration",
                "ENCore", "ENCrypto", "KeySchedule", "Storage", "SystemCalls", "ContactLog", "KeyFiles", "Detection", "DaemonLog", "PostgreSQL",
                "GaendTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
    ]
)
