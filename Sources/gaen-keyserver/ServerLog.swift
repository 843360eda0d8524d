// SPDX-License-Identifier: GPL-3.0-or-later

import FlyingSocks
import Logging

/// FlyingFox's log lines through swift-log. Its own default prints every connection to stdout,
/// which is noise in a server's log and, when nobody reads stdout, fills the pipe and stops the
/// server (the load benchmark found this): connection chatter goes to debug.
struct ServerLog: FlyingSocks.Logging {
    let logger: Logger

    init(_ logger: Logger) { self.logger = logger }

    func logDebug(_ debug: @autoclosure () -> String) { logger.trace("\(debug())") }
    func logInfo(_ info: @autoclosure () -> String) { logger.debug("\(info())") }
    func logWarning(_ warning: @autoclosure () -> String) { logger.warning("\(warning())") }
    func logError(_ error: @autoclosure () -> String) { logger.error("\(error())") }
    func logCritical(_ critical: @autoclosure () -> String) { logger.critical("\(critical())") }
}
