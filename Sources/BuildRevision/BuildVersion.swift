// SPDX-License-Identifier: GPL-3.0-or-later

import ENCore

/// What `--version` prints: the version the docs name and the commit built (`gitRevision`,
/// written by RevisionPlugin before each build).
package enum BuildVersion {
    /// The commit, `-dirty` when the tree had uncommitted changes, or `unknown`.
    package static var revision: String { gitRevision }

    /// `0.2.0 (git 4af7585d1c2e)`.
    package static var string: String { "\(GaendVersion.string) (git \(revision))" }
}
