#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""N virtual LE controllers on one Bumble link, behaving like real controllers where Bumble's stock
controller does not (shared/reference/test-peers.md §1.3-1.4):

- legacy ADV_NONCONN_IND, ADV_SCAN_IND and ADV_IND are all transmitted, at intervals in 0.625 ms units;
- a legacy scan gets legacy reports (subevent 0x02) with the right PDU type, an extended scan
  extended reports with the legacy properties; no scan response for passive scans;
- extended advertising sets with legacy PDUs (what Bumble's own host uses) are reported the same way;
- RSSI per receiving pair (--rssi, --pair-rssi C0:C1=-75); duplicate filtering honoured unless
  --no-dup-filter;
- HCI Reset clears advertising, scanning and the random address; LE Set Random Address while
  advertising or scanning and LE Set Advertising Parameters while advertising are 0x0C; enabling
  random-address advertising without a random address is 0x12.

Fault injection: --fail-once OPCODE (hex) answers the first such command with 0x12 (invalid
parameters); SIGUSR1 makes every controller send its host a malformed LE Advertising Report and a
Hardware Error event (code 0x42). SIGUSR2 prints "SENT n0 n1 ...": the reports carrying 0xFD6F
service data each controller has sent its host so far (none is sent while its host's scan is off).

Usage: controllers.py [--rssi DBM] [--pair-rssi Cs:Cr=DBM]... [--no-dup-filter] [--fail-once OPCODE]... [--max-seconds S] TRANSPORT...
Prints "READY n" once every transport is open; SIGTERM or SIGINT close cleanly and unlink unix sockets.
"""
import argparse
import asyncio
import os
import signal
import sys

from bumble import hci, ll
from bumble.controller import AdvertisingSet, Controller, LegacyAdvertiser
from bumble.link import LocalLink
from bumble.transport import open_transport

# Legacy PDU type → extended report properties (Core Vol 4 Part E 7.7.65.13).
EXTENDED_PROPERTIES = {0x00: 0x13, 0x02: 0x12, 0x03: 0x10}
ERROR = hci.HCI_ErrorCode


class FixtureAdvertiser(LegacyAdvertiser):
    def _on_timer_fired(self):
        self.send_advertising_data()
        interval = max(self.advertising_interval_min, 0x20) * 0.625 / 1000.0
        self.timer_handle = asyncio.get_running_loop().call_later(interval, self._on_timer_fired)

    def send_advertising_data(self):
        if not self.enabled or self.advertising_type not in EXTENDED_PROPERTIES:
            return
        if self.advertising_type == 0x00:
            pdu = ll.AdvInd(advertiser_address=self.address, data=self.advertising_data)
        else:
            pdu = ll.AdvNonConnInd(advertiser_address=self.address, data=self.advertising_data)
        pdu.legacy_type = self.advertising_type
        pdu.sender = self.controller.name
        self.controller.send_advertising_pdu(pdu)


def send_extended_advertising_data(self):
    """Extended advertising sets: the PDU carries its sender and, for legacy-PDU sets, its legacy type,
    so receivers apply the pair's RSSI and report it as a real controller would."""
    if not self.controller.link or not self.address:
        return
    properties = int(self.parameters.advertising_event_properties) if self.parameters else 0
    pdu = ll.AdvExtInd(advertiser_address=self.address, data=bytes(self.data), sid=self.parameters.advertising_sid if self.parameters else 0,
                       periodic_advertising_data=None)
    pdu.sender = self.controller.name
    if properties & 0x10:  # a legacy PDU: connectable bit 0, scannable bit 1
        pdu.legacy_type = 0x00 if properties & 0x01 else (0x02 if properties & 0x02 else 0x03)
    self.controller.send_advertising_pdu(pdu)


AdvertisingSet.send_extended_advertising_data = send_extended_advertising_data


class FixtureController(Controller):
    fail_once = set()

    def __init__(self, name, rssi, no_dup_filter, **kwargs):
        super().__init__(name, **kwargs)
        self.le_legacy_advertiser = FixtureAdvertiser(self)
        self.rssi_for = rssi
        self.no_dup_filter = no_dup_filter
        self.legacy_scan = True
        self.seen = set()
        self.random_address_set = False
        self.gaen_reports_sent = 0

    def on_hci_command_packet(self, command):
        if command.op_code in FixtureController.fail_once:
            FixtureController.fail_once.discard(command.op_code)
            self.send_hci_packet(hci.HCI_Command_Complete_Event(
                num_hci_command_packets=1, command_opcode=command.op_code,
                return_parameters=hci.HCI_StatusReturnParameters(ERROR.INVALID_COMMAND_PARAMETERS_ERROR)))
            return
        return super().on_hci_command_packet(command)

    def inject_faults(self):
        # H4 event packets: an LE Advertising Report claiming 5 reports but carrying none, then a
        # Hardware Error (event 0x10, code 0x42).
        if self.host:
            self.host.on_packet(bytes.fromhex('043e03020500'))
            self.host.on_packet(bytes.fromhex('04100142'))

    def on_hci_reset_command(self, command):
        self.le_legacy_advertiser.stop()
        self.le_scan_enable = False
        self.random_address = hci.Address('00:00:00:00:00:00')
        self.random_address_set = False
        return super().on_hci_reset_command(command)

    def on_hci_le_set_random_address_command(self, command):
        if self.le_legacy_advertiser.enabled or self.le_scan_enable:
            return hci.HCI_StatusReturnParameters(ERROR.COMMAND_DISALLOWED_ERROR)
        self.random_address_set = True
        return super().on_hci_le_set_random_address_command(command)

    def on_hci_le_set_advertising_parameters_command(self, command):
        if self.le_legacy_advertiser.enabled:
            return hci.HCI_StatusReturnParameters(ERROR.COMMAND_DISALLOWED_ERROR)
        return super().on_hci_le_set_advertising_parameters_command(command)

    def on_hci_le_set_advertising_enable_command(self, command):
        if command.advertising_enable and self.le_legacy_advertiser.own_address_type == 1 and not self.random_address_set:
            return hci.HCI_StatusReturnParameters(ERROR.INVALID_COMMAND_PARAMETERS_ERROR)
        return super().on_hci_le_set_advertising_enable_command(command)

    def on_hci_le_set_scan_enable_command(self, command):
        self.legacy_scan = True
        self.seen.clear()
        return super().on_hci_le_set_scan_enable_command(command)

    def on_hci_le_set_extended_scan_enable_command(self, command):
        self.legacy_scan = False
        self.seen.clear()
        return super().on_hci_le_set_extended_scan_enable_command(command)

    def on_ll_advertising_pdu(self, packet):
        # The stock dispatch drops ADV_NONCONN_IND and ADV_SCAN_IND PDUs on the floor.
        if isinstance(packet, (ll.AdvNonConnInd, ll.AdvExtInd)) and hasattr(packet, 'legacy_type'):
            return self.on_advertising_pdu(packet)
        return super().on_ll_advertising_pdu(packet)

    def on_advertising_pdu(self, pdu):
        legacy_type = getattr(pdu, 'legacy_type', None)
        if legacy_type is None:
            return super().on_advertising_pdu(pdu)
        if not self.le_scan_enable:
            return
        address = pdu.advertiser_address
        if self.filter_duplicates and not self.no_dup_filter:
            key = (bytes(address.address_bytes), address.address_type)
            if key in self.seen:
                return
            self.seen.add(key)
        rssi = self.rssi_for(getattr(pdu, 'sender', ''), self.name)
        if b'\x16\x6f\xfd' in bytes(pdu.data):
            self.gaen_reports_sent += 1
        if self.legacy_scan:
            report = hci.HCI_LE_Advertising_Report_Event.Report(
                event_type=legacy_type, address_type=address.address_type, address=address, data=pdu.data, rssi=rssi)
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))
        else:
            report = hci.HCI_LE_Extended_Advertising_Report_Event.Report(
                event_type=EXTENDED_PROPERTIES[legacy_type], address_type=address.address_type, address=address,
                primary_phy=hci.Phy.LE_1M, secondary_phy=0, advertising_sid=0xFF, tx_power=0x7F, rssi=rssi,
                periodic_advertising_interval=0, direct_address_type=0, direct_address=hci.Address.ANY, data=pdu.data)
            self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))


async def run(arguments):
    pairs = {}
    for entry in arguments.pair_rssi:
        names, value = entry.split('=')
        sender, receiver = names.split(':')
        pairs[(sender, receiver)] = int(value)

    def rssi(sender, receiver):
        return pairs.get((sender, receiver), arguments.rssi)

    FixtureController.fail_once = {int(code, 16) for code in arguments.fail_once}
    link = LocalLink()
    transports = []
    controllers = []
    for index, name in enumerate(arguments.transports):
        transport = await open_transport(name)
        transports.append(transport)
        controllers.append(FixtureController(
            f'C{index}', rssi, arguments.no_dup_filter, host_source=transport.source, host_sink=transport.sink, link=link,
            public_address=f'F0:00:00:00:00:{index:02X}'))
    print(f'READY {len(transports)}', flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # A parent may have spawned us with signals blocked (the mask is inherited across exec).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT})
    loop.add_signal_handler(signal.SIGUSR1, lambda: [controller.inject_faults() for controller in controllers])
    loop.add_signal_handler(
        signal.SIGUSR2, lambda: print('SENT ' + ' '.join(str(c.gaen_reports_sent) for c in controllers), flush=True))
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), timeout=arguments.max_seconds)
    except asyncio.TimeoutError:
        pass
    for transport in transports:
        await transport.close()
    for name in arguments.transports:
        if name.startswith('unix-server:'):
            try:
                os.unlink(name[len('unix-server:'):])
            except FileNotFoundError:
                pass


def main():
    parser = argparse.ArgumentParser(description='Linked virtual LE controllers for gaend tests')
    parser.add_argument('--rssi', type=int, default=-60)
    parser.add_argument('--pair-rssi', action='append', default=[], help='SENDER:RECEIVER=DBM, e.g. C0:C1=-75')
    parser.add_argument('--no-dup-filter', action='store_true')
    parser.add_argument('--max-seconds', type=float, default=600)
    parser.add_argument('--fail-once', action='append', default=[], help='hex opcode to refuse once with 0x12, e.g. 0x2036')
    parser.add_argument('transports', nargs='+')
    asyncio.run(run(parser.parse_args()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
