#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Seeds for the dbus-message fuzz target: the messages of a private bus, recorded by
`dbus-monitor --binary`, while the project's bluetoothd stand-in (testbed/bluez_template.py on
python-dbusmock) reports sightings to a discovering client, and busctl (sd-bus) and gdbus (GLib)
call org.gaend.Manager1 the way an owner's tools do. Four marshalling implementations: libdbus
(dbus-python), sd-bus, GLib and the bus itself.

Usage: capture_dbus.py CORPUS_DIR   (run with a python3 that has dbus-python: .venv-dbusmock/bin/python)
"""
import os
import subprocess
import sys
import tempfile
import time

import dbus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RPI_AEM = bytes.fromhex('8be6cd371c5c891604bfbe49df84509672033874')


def message_length(stream, offset):
    """The D-Bus specification's message length: 16-byte fixed header, fields padded to 8, body."""
    order = 'big' if stream[offset] == ord('B') else 'little'
    body = int.from_bytes(stream[offset + 4:offset + 8], order)
    fields = int.from_bytes(stream[offset + 12:offset + 16], order)
    return 16 + (fields + 7) // 8 * 8 + body


def header_fields(message):
    """Path, interface, member and signature of a little-endian message (the bus and all three libraries
    here write little-endian): the header fields array at offset 16, each field 8-aligned."""
    end = 16 + int.from_bytes(message[12:16], 'little')
    offset, fields = 16, {}
    while offset < end:
        offset = (offset + 7) // 8 * 8
        code, size = message[offset], message[offset + 1]
        kind = chr(message[offset + 2])
        offset += 3 + size
        if kind in 'sog':
            if kind == 'g':
                length, offset = message[offset], offset + 1
            else:
                offset = (offset + 3) // 4 * 4
                length, offset = int.from_bytes(message[offset:offset + 4], 'little'), offset + 4
            fields[code] = bytes(message[offset:offset + length])
            offset += length + 1
        else:
            offset = (offset + 3) // 4 * 4 + 4
    return message[1], fields.get(1), fields.get(2), fields.get(3), fields.get(8)


def wait_for(condition, what):
    for _ in range(200):
        if condition():
            return
        time.sleep(0.05)
    raise SystemExit(f'gave up waiting for {what}')


def main():
    corpus = os.path.join(sys.argv[1], 'dbus-message')
    scratch = tempfile.mkdtemp(prefix='gaend-dbus-seeds-')
    address = f'unix:path={scratch}/bus'
    processes = []
    try:
        daemon = subprocess.Popen(['dbus-daemon', '--session', '--nofork', f'--address={address}'])
        processes.append(daemon)
        wait_for(lambda: os.path.exists(f'{scratch}/bus'), 'the bus')
        record = open(f'{scratch}/messages', 'wb')
        processes.append(subprocess.Popen(['dbus-monitor', '--address', address, '--binary'], stdout=record))
        environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
        processes.append(subprocess.Popen(
            [sys.executable, '-m', 'dbusmock', '--system', '-t', os.path.join(ROOT, 'testbed/bluez_template.py')], env=environment,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        bus = dbus.bus.BusConnection(address)
        wait_for(lambda: bus.name_has_owner('org.bluez'), 'the BlueZ mock')

        mock = dbus.Interface(bus.get_object('org.bluez', '/'), 'org.bluez.Mock')
        mock.AddAdapter('hci0', 'gaend seeds')
        adapter = bus.get_object('org.bluez', '/org/bluez/hci0')
        properties = dbus.Interface(adapter, 'org.freedesktop.DBus.Properties')
        properties.Set('org.bluez.Adapter1', 'Powered', dbus.Boolean(True))
        # What gaend's BlueZ back end asks for each scan window (docs/radio.md).
        dbus.Interface(adapter, 'org.bluez.Adapter1').SetDiscoveryFilter(
            {'Transport': 'le', 'UUIDs': dbus.Array(['0000fd6f-0000-1000-8000-00805f9b34fb'], signature='s'), 'DuplicateData': True})
        dbus.Interface(adapter, 'org.bluez.Adapter1').StartDiscovery()
        time.sleep(0.2)
        # A new device (InterfacesAdded), the same one again (PropertiesChanged), a second one.
        mock.SeeAdvert('hci0', '3A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(RPI_AEM), dbus.Int16(-60))
        mock.SeeAdvert('hci0', '3A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(RPI_AEM), dbus.Int16(-72))
        mock.SeeAdvert('hci0', '1B:AD:C0:FF:EE:01', 'public', dbus.ByteArray(RPI_AEM[::-1]), dbus.Int16(-88))
        dbus.Interface(bus.get_object('org.bluez', '/'), 'org.freedesktop.DBus.ObjectManager').GetManagedObjects()
        dbus.Interface(adapter, 'org.bluez.Adapter1').StopDiscovery()
        time.sleep(0.2)
        properties.Set('org.bluez.Adapter1', 'Powered', dbus.Boolean(False))
        time.sleep(0.2)

        # An owner's tools calling gaend (nobody owns org.gaend here: the bus answers with an error).
        call = ['busctl', f'--address={address}', 'call', 'org.gaend', '/org/gaend/Manager', 'org.gaend.Manager1']
        subprocess.run(call + ['AddTestResult', 'a{sv}', '3', 'TestDate', 't', '1763856000', 'Type', 's', 'confirmed',
                               'SymptomOnset', 't', '1763683200'], capture_output=True)
        subprocess.run(call + ['ShareDiagnosisKeys', 'ss', 'result-1', '12345678'], capture_output=True)
        subprocess.run(['gdbus', 'call', '--address', address, '--dest', 'org.gaend', '--object-path', '/org/gaend/Manager',
                        '--method', 'org.gaend.Manager1.SetEnabled', 'true'], capture_output=True)
        subprocess.run(['gdbus', 'call', '--address', address, '--dest', 'org.gaend', '--object-path', '/org/gaend/Manager',
                        '--method', 'org.gaend.Manager1.DetectExposures', '\'{"attenuationDurationThresholds": [50, 70]}\''],
                       capture_output=True)
        time.sleep(0.5)
        record.close()
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=10)

    stream = open(f'{scratch}/messages', 'rb').read()
    os.makedirs(corpus, exist_ok=True)
    seen, offset, bluez = set(), 0, bytearray()
    while offset + 16 <= len(stream):
        length = message_length(stream, offset)
        message = stream[offset:offset + length]
        offset += length
        if b'org.bluez' in message and message[1] == 4:
            bluez += message
        # One seed per kind of message: its type, path, interface, member and signature.
        shape = header_fields(message)
        if shape in seen:
            continue
        seen.add(shape)
        with open(os.path.join(corpus, f'message-{len(seen):02d}'), 'wb') as file:
            file.write(message)
    # bluetoothd's signals in order: what one interpreter reads in a scan window.
    with open(os.path.join(corpus, 'bluez-signals'), 'wb') as file:
        file.write(bytes(bluez))
    subprocess.run(['rm', '-rf', scratch])
    print(f'{len(seen)} distinct messages, {len(bluez)} bytes of BlueZ signals')


if __name__ == '__main__':
    main()
