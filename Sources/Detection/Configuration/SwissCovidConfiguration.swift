// SPDX-License-Identifier: GPL-3.0-or-later

/// SwissCovid's `GAENSDKConfig` (SwissCovid/swisscovid-config-backend
/// `ws/model/GAENSDKConfig.java`): five values, served in the app configuration of `GET /v1/config`
/// twice, as `androidGaenSdkConfig` and `iOSGaenSdkConfig` (`ws/model/ConfigResponse.java`). Either
/// the object alone or the whole answer is read; from the answer, the Android object (which the
/// DP-3T Android SDK applies as gaend does), and the rest of the answer is the app's.
enum SwissCovidShape {
    static let distinctiveKeys: Set<String> = ["lowerThreshold", "higherThreshold", "factorHigh", "androidGaenSdkConfig", "iOSGaenSdkConfig"]
    static let keys: Set<String> = ["lowerThreshold", "higherThreshold", "factorLow", "factorHigh", "triggerThreshold"]
}

extension ExposureConfiguration {
    init(swissCovid root: [String: Any]) throws(ConfigurationError) {
        var object = root
        var prefix = ""
        for wrapper in ["androidGaenSdkConfig", "iOSGaenSdkConfig"] where root[wrapper] != nil {
            object = try ConfigurationReader(object: root).object(wrapper)!
            prefix = wrapper + "."
            break
        }
        if let unknown = object.keys.sorted().first(where: { !SwissCovidShape.keys.contains($0) }) {
            throw ConfigurationError(key: prefix + unknown, problem: "not a key of SwissCovid's GAENSDKConfig")
        }
        let reader = ConfigurationReader(object: object)
        func named(_ error: ConfigurationError) -> ConfigurationError { ConfigurationError(key: prefix + error.key, problem: error.problem) }
        var perDay = PerDayConfiguration()
        do throws(ConfigurationError) {
            let lower = try reader.integer("lowerThreshold", in: 0...255) ?? perDay.attenuationThresholds[0]
            let higher = try reader.integer("higherThreshold", in: 0...255) ?? perDay.attenuationThresholds[1]
            // The DP-3T SDK refuses these too (AppConfigManager.setAttenuationThresholds).
            guard lower < higher else {
                throw ConfigurationError(key: "higherThreshold", problem: "\(higher) is not above lowerThreshold \(lower)")
            }
            perDay.attenuationThresholds = [lower, higher]
            if let value = try reader.number("factorLow", in: 0...10) { perDay.factorLow = value }
            if let value = try reader.number("factorHigh", in: 0...10) { perDay.factorMedium = value }
            if let value = try reader.number("triggerThreshold", in: 0...1440) { perDay.triggerThreshold = value }
        } catch {
            throw named(error)
        }
        self.init(v2: nil, rule: .perDayDuration(perDay), format: .swissCovid)
    }
}
