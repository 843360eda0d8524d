// SPDX-License-Identifier: GPL-3.0-or-later
// gaenctl: wiring only; the commands live in GaenCtlCommands.

import GaenCtlCommands

await GaenCtl.runAndExit()
