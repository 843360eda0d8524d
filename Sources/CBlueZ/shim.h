// SPDX-License-Identifier: GPL-3.0-or-later
// libbluetooth (BlueZ's HCI library and kernel ABI headers), as the HCI module sees it.
#ifndef GAEND_CBLUEZ_SHIM_H
#define GAEND_CBLUEZ_SHIM_H
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#endif
