#!/usr/bin/env python3
"""Discovery through bluetoothd over D-Bus: prints "FOUND address type servicedata-hex" for each
device with 0xFD6F service data. Restarts discovery every second, because btvirt's controllers
report only when scanning is enabled. Usage: discover.py hciN SECONDS"""
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

FD6F = '0000fd6f-0000-1000-8000-00805f9b34fb'
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
path = '/org/bluez/' + sys.argv[1]
adapter = dbus.Interface(bus.get_object('org.bluez', path), 'org.bluez.Adapter1')
properties = dbus.Interface(bus.get_object('org.bluez', path), 'org.freedesktop.DBus.Properties')
properties.Set('org.bluez.Adapter1', 'Powered', dbus.Boolean(True))
seen = set()


def report(device):
    data = device.get('ServiceData', {})
    if FD6F in data:
        line = f"FOUND {device.get('Address')} {device.get('AddressType')} {bytes(data[FD6F]).hex()}"
        if line not in seen:
            seen.add(line)
            print(line, flush=True)


def added(_path, interfaces):
    if 'org.bluez.Device1' in interfaces:
        report(interfaces['org.bluez.Device1'])


def changed(interface, changes, _invalidated, path=None):
    if interface == 'org.bluez.Device1' and 'ServiceData' in changes:
        device = bus.get_object('org.bluez', path)
        report(dbus.Interface(device, 'org.freedesktop.DBus.Properties').GetAll('org.bluez.Device1'))


bus.add_signal_receiver(added, 'InterfacesAdded', 'org.freedesktop.DBus.ObjectManager')
bus.add_signal_receiver(changed, 'PropertiesChanged', 'org.freedesktop.DBus.Properties', path_keyword='path')
adapter.SetDiscoveryFilter({'Transport': 'le', 'DuplicateData': dbus.Boolean(True)})


def restart():
    try:
        adapter.StopDiscovery()
    except dbus.DBusException:
        pass
    adapter.StartDiscovery()
    return True


restart()
GLib.timeout_add(1000, restart)
loop = GLib.MainLoop()
GLib.timeout_add_seconds(int(sys.argv[2]), loop.quit)
loop.run()
print(f'discovery done: {len(seen)} GAEN advertisers', flush=True)
