#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Seeds for the hci-event, h4 and advertising fuzz targets, captured from Bumble's virtual
controllers (testbed/controllers.py): what a controller really sends a host that initializes it,
advertises and scans, legacy and extended, including the faults the fixture injects.

Four controllers on one link: C0 advertises GAEN as iOS does (Flags, ADV_NONCONN_IND), C1 as
Android does (no Flags, ADV_SCAN_IND), C2 something else (a name and manufacturer data, ADV_IND);
C3 scans, first with the legacy commands, then with the extended ones, then gets SIGUSR1's lying
report and Hardware Error. The command bytes are gaend's (Sources/HCI/Codec/HCICommand.swift,
test-peers.md 1.5).

Usage: capture_hci.py PYTHON_WITH_BUMBLE CORPUS_DIR
"""
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RPI = bytes.fromhex('8be6cd371c5c891604bfbe49df845096')
AEM = bytes.fromhex('72033874')
SERVICE_DATA = bytes([0x17, 0x16, 0x6F, 0xFD]) + RPI + AEM
FRAMES = {
    'ios': bytes.fromhex('02011a03036ffd') + SERVICE_DATA,
    'android': bytes.fromhex('03036ffd') + SERVICE_DATA,
    'other': bytes([0x02, 0x01, 0x06, 0x0b, 0x09]) + b'gaend-peer' + bytes.fromhex('07ff4c0010020b00'),
}


def command(opcode, parameters=b''):
    return bytes([0x01, opcode & 0xFF, opcode >> 8, len(parameters)]) + parameters


INIT = [
    command(0x0C03),  # Reset
    command(0x1001),  # Read Local Version Information
    command(0x0C01, (0x20009FFFFFFFFFFF | 1 << 15 | 1 << 61).to_bytes(8, 'little')),  # Set Event Mask
    command(0x2001, (0x101F).to_bytes(8, 'little')),  # LE Set Event Mask
    command(0x2003),  # LE Read Local Supported Features
    command(0x2007),  # LE Read Advertising Channel Tx Power
]


def advertise(index, frame, pdu_type):
    address = bytes([0x2F, 0x1E, 0x9D, 0x7C, 0x5B, 0xC0 | index])  # static random, LSB first
    padded = bytes([len(frame)]) + frame + bytes(31 - len(frame))
    return [
        command(0x2005, address),  # LE Set Random Address
        # LE Set Advertising Parameters: 200 ms, the PDU type, own address random, channels 37-39.
        command(0x2006, bytes.fromhex('40014001') + bytes([pdu_type, 0x01, 0x00]) + bytes(6) + bytes([0x07, 0x00])),
        command(0x2008, padded),  # LE Set Advertising Data
        command(0x200A, b'\x01'),  # LE Set Advertising Enable
    ]


LEGACY_SCAN = [command(0x200B, bytes.fromhex('00600060000000')), command(0x200C, bytes.fromhex('0100'))]
LEGACY_SCAN_OFF = [command(0x200C, bytes.fromhex('0000'))]
EXTENDED_SCAN = [command(0x2041, bytes.fromhex('0000010060006000')), command(0x2042, bytes.fromhex('010000000000'))]


class Host:
    """A raw H4 client that records every byte its controller sends."""

    def __init__(self, port):
        self.socket = socket.create_connection(('127.0.0.1', port))
        self.socket.settimeout(0.05)
        self.received = bytearray()

    def drain(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                chunk = self.socket.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                break
            self.received += chunk

    def run(self, commands):
        for packet in commands:
            self.socket.sendall(packet)
            self.drain(0.1)


def packets(stream):
    """The H4 packets of a controller's stream (events only are expected)."""
    offset = 0
    while offset + 3 <= len(stream):
        kind, length = stream[offset], stream[offset + 2]
        if kind != 0x04:
            raise SystemExit(f'unexpected H4 packet type {kind:#x} at {offset}')
        yield stream[offset + 1:offset + 3 + length]
        offset += 3 + length


def reported_data(event):
    """The advertising data of an LE (Extended) Advertising Report with one report."""
    if event[0] != 0x3E or len(event) < 4 or event[3] != 1:
        return None
    if event[2] == 0x02:
        length = event[12]
        return bytes(event[13:13 + length])
    if event[2] == 0x0D:
        length = event[27]
        return bytes(event[28:28 + length])
    return None


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), 'wb') as file:
        file.write(data)


def main():
    python, corpus = sys.argv[1], sys.argv[2]
    ports = [socket.socket() for _ in range(4)]
    for probe in ports:
        probe.bind(('127.0.0.1', 0))
    numbers = [probe.getsockname()[1] for probe in ports]
    for probe in ports:
        probe.close()
    fixture = subprocess.Popen(
        [python, os.path.join(ROOT, 'testbed/controllers.py'), '--max-seconds', '60', '--pair-rssi', 'C1:C3=-75',
         '--fail-once', '0x2041'] + [f'tcp-server:127.0.0.1:{port}' for port in numbers],
        stdout=subprocess.PIPE, text=True)
    try:
        if not fixture.stdout.readline().startswith('READY'):
            raise SystemExit('the controllers did not start')
        hosts = [Host(port) for port in numbers]
        for host in hosts:
            host.run(INIT)
        hosts[0].run(advertise(0, FRAMES['ios'], 0x03))
        hosts[1].run(advertise(1, FRAMES['android'], 0x02))
        hosts[2].run(advertise(2, FRAMES['other'], 0x00))
        scanner = hosts[3]
        scanner.run(LEGACY_SCAN)
        scanner.drain(1.0)
        scanner.run(LEGACY_SCAN_OFF)
        # The fixture refuses the first LE Set Extended Scan Parameters (0x12); the second is taken.
        scanner.run(EXTENDED_SCAN[:1] + EXTENDED_SCAN)
        scanner.drain(1.0)
        fixture.send_signal(signal.SIGUSR1)
        scanner.drain(0.5)
    finally:
        fixture.terminate()
        fixture.wait(timeout=10)

    stream = bytes(scanner.received)
    # The whole stream and two slices of it: framing is what the h4 target is for.
    write(os.path.join(corpus, 'h4'), 'scanner-stream', stream[:4096])
    write(os.path.join(corpus, 'h4'), 'advertiser-stream', bytes(hosts[0].received))
    seen_events, seen_frames = set(), set()
    for event in packets(stream + bytes(hosts[0].received)):
        kind = (event[0], event[2] if event[0] == 0x3E else event[3:5] if event[0] == 0x0E else None, reported_data(event))
        if kind not in seen_events:
            seen_events.add(kind)
            write(os.path.join(corpus, 'hci-event'), f'event-{len(seen_events):02d}-{event[0]:02x}', bytes(event))
        data = reported_data(event)
        if data is not None and data not in seen_frames:
            seen_frames.add(data)
            write(os.path.join(corpus, 'advertising'), f'reported-{len(seen_frames):02d}', data)
    print(f'{len(seen_events)} events, {len(seen_frames)} reported frames, {len(stream)} stream bytes')


if __name__ == '__main__':
    main()
