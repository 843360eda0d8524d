// SPDX-License-Identifier: GPL-3.0-or-later

/// The D-Bus contract between gaend and its clients (docs/org.gaend.Manager1.rst): one object,
/// one interface, its methods, signals and properties, and its error names. gaend exports exactly
/// these and gaenctl calls exactly these; neither writes a name of its own.
package enum Manager1 {
    /// The well-known name gaend takes.
    package static let busName = "org.gaend"
    package static let objectPath = "/org/gaend/Manager"
    package static let interface = "org.gaend.Manager1"
    /// Every error gaend returns is this prefix and an `ErrorName`.
    package static let errorPrefix = "org.gaend.Error."

    package enum Method: String, CaseIterable, Sendable {
        case setEnabled = "SetEnabled"
        case getDiagnosisKeys = "GetDiagnosisKeys"
        case getTestDiagnosisKeys = "GetTestDiagnosisKeys"
        case preAuthorizeDiagnosisKeys = "PreAuthorizeDiagnosisKeys"
        case requestPreAuthorizedDiagnosisKeys = "RequestPreAuthorizedDiagnosisKeys"
        case detectExposures = "DetectExposures"
        case getExposureWindows = "GetExposureWindows"
        case getDailySummaries = "GetDailySummaries"
        case getHeard = "GetHeard"
        case getConfiguration = "GetConfiguration"
        case addTestResult = "AddTestResult"
        case getTestResults = "GetTestResults"
        case shareDiagnosisKeys = "ShareDiagnosisKeys"
        case resetAllData = "ResetAllData"
    }

    /// The values of the Status property (docs/org.gaend.Manager1.rst); StatusReason says why when
    /// it is not `active`.
    package enum Status: String, CaseIterable, Sendable {
        /// Advertising and scanning.
        case active
        /// The owner turned Exposure Notification off, or never on.
        case disabled
        /// The radio cannot run: bluetoothd, the adapter or the controller is missing or off.
        case bluetoothOff = "bluetooth-off"
        /// No radio is configured (`radio = none`): detection only.
        case paused
        /// The radio is starting.
        case unknown
        /// Scanning only: the wall clock cannot be trusted, so nothing is broadcast (StatusReason
        /// says why; ClockTrusted is false).
        case scanning
    }

    package enum Signal: String, CaseIterable, Sendable {
        case exposureDetected = "ExposureDetected"
        case detectionProgress = "DetectionProgress"
        case detectionFinished = "DetectionFinished"
        case diagnosisKeysAvailable = "DiagnosisKeysAvailable"
    }

    /// The properties, each with its D-Bus signature, in the order `GetAll` lists them.
    package enum Property: String, CaseIterable, Sendable {
        case status = "Status"
        case statusReason = "StatusReason"
        case authorizationStatus = "AuthorizationStatus"
        case enabled = "Enabled"
        case radioBackend = "RadioBackend"
        case advertising = "Advertising"
        case advertisingSince = "AdvertisingSince"
        case address = "Address"
        case rpiInterval = "RPIInterval"
        case nextRotation = "NextRotation"
        case lastScanTime = "LastScanTime"
        case sightingsToday = "SightingsToday"
        case heldSightings = "HeldSightings"
        case lastDetectionTime = "LastDetectionTime"
        case lastDetectionError = "LastDetectionError"
        case detectionsRemaining = "DetectionsRemaining"
        case nextDetectionTime = "NextDetectionTime"
        case keyServer = "KeyServer"
        case lastDownloadTime = "LastDownloadTime"
        case exposureDays = "ExposureDays"
        case lastExposureTime = "LastExposureTime"
        case exposureClassification = "ExposureClassification"
        case exposureClassificationName = "ExposureClassificationName"
        case region = "Region"
        case version = "Version"
        case clockTrusted = "ClockTrusted"
        case clockOffset = "ClockOffset"

        /// The answer to "was I exposed?": health data, read only by root, gaend's user and the
        /// owner's group (`owner-group`); GetAll leaves them out for anyone else (issue 40, item 14).
        package var isPrivate: Bool {
            switch self {
            case .exposureDays, .lastExposureTime, .exposureClassification, .exposureClassificationName: true
            default: false
            }
        }

        /// The D-Bus signature of its value: times are unix seconds (`t`), 0 meaning never.
        package var signature: String {
            switch self {
            case .status, .statusReason, .authorizationStatus, .radioBackend, .address, .lastDetectionError, .keyServer, .region, .version,
                .exposureClassificationName:
                "s"
            case .enabled, .advertising, .clockTrusted: "b"
            case .clockOffset: "x"
            case .lastScanTime, .advertisingSince, .nextRotation, .lastDetectionTime, .nextDetectionTime, .lastDownloadTime, .lastExposureTime: "t"
            case .sightingsToday, .heldSightings, .detectionsRemaining, .rpiInterval, .exposureClassification: "u"
            case .exposureDays: "as"
            }
        }
    }

    /// The fields of a test result (AddTestResult's and GetTestResults' dictionaries).
    package enum TestResultField: String, CaseIterable, Sendable {
        case id = "Id"
        case testDate = "TestDate"
        case type = "Type"
        case symptomOnset = "SymptomOnset"
        case added = "Added"
        case shared = "Shared"
    }

    /// The errors gaend returns, each `errorPrefix` + its raw value.
    package enum ErrorName: String, CaseIterable, Sendable {
        case notAuthorized = "NotAuthorized"
        case notEnabled = "NotEnabled"
        case rateLimited = "RateLimited"
        case inProgress = "InProgress"
        case badParameter = "BadParameter"
        case notSupported = "NotSupported"
        case notConfigured = "NotConfigured"
        case bluetoothOff = "BluetoothOff"
        case clockUntrusted = "ClockUntrusted"
        case verificationFailed = "VerificationFailed"
        case publishFailed = "PublishFailed"
        case failed = "Failed"
        case `internal` = "Internal"

        /// The full D-Bus error name.
        package var qualified: String { Manager1.errorPrefix + rawValue }

        /// The error a D-Bus error name is, if it is one of gaend's.
        package init?(qualified name: String) {
            guard name.hasPrefix(Manager1.errorPrefix) else { return nil }
            self.init(rawValue: String(name.dropFirst(Manager1.errorPrefix.count)))
        }
    }
}
