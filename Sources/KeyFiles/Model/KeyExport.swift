// SPDX-License-Identifier: GPL-3.0-or-later

/// The contents of an `export.bin`: the batch's header fields and its keys, validated key by key.
package struct KeyExport: Sendable {
    /// Unix seconds: the window the keys arrived in.
    package var startTimestamp: UInt64
    package var endTimestamp: UInt64
    package var region: String
    /// `batch_num` as the file holds it: 0 (proto2's default) when absent, see `hasBatchNumber`.
    package var batchNumber: Int32
    /// `batch_size` as the file holds it: 0 when absent, see `hasBatchSize`.
    package var batchSize: Int32
    /// Whether export.bin carries `batch_num` / `batch_size` at all. Google's batch rules depend on
    /// presence, not value: a file without `batch_size` is a batch of its own.
    package var hasBatchNumber: Bool
    package var hasBatchSize: Bool
    package var signatureInfos: [SignatureInfo]
    package var keys: [DiagnosisKey]
    /// Keys whose report type changed since they were first published; kept apart from `keys`.
    package var revisedKeys: [DiagnosisKey]
    /// Keys that failed validation, with the reason, the first `KeyFileLimits.maximumDroppedReasons`
    /// of them; never fatal to the file.
    package var dropped: [DroppedKey]
    /// All the keys that failed validation, `dropped` and those beyond it.
    package var droppedCount: Int

    package init(
        startTimestamp: UInt64 = 0, endTimestamp: UInt64 = 0, region: String = "", batchNumber: Int32 = 1, batchSize: Int32 = 1,
        hasBatchNumber: Bool = true, hasBatchSize: Bool = true,
        signatureInfos: [SignatureInfo] = [], keys: [DiagnosisKey] = [], revisedKeys: [DiagnosisKey] = [], dropped: [DroppedKey] = []
    ) {
        self.startTimestamp = startTimestamp
        self.endTimestamp = endTimestamp
        self.region = region
        self.batchNumber = batchNumber
        self.batchSize = batchSize
        self.hasBatchNumber = hasBatchNumber
        self.hasBatchSize = hasBatchSize
        self.signatureInfos = signatureInfos
        self.keys = keys
        self.revisedKeys = revisedKeys
        self.dropped = dropped
        droppedCount = dropped.count
    }
}
