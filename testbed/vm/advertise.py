#!/usr/bin/env python3
"""Registers a broadcast advertisement with bluetoothd (LEAdvertisingManager1) carrying the
official vectors' GAEN service data, and keeps it for SECONDS. Prints "REGISTERED" once
bluetoothd accepted it. Usage: advertise.py hciN SECONDS"""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
PATH = '/org/gaend/test/advertisement0'
INTERFACE = 'org.bluez.LEAdvertisement1'
SERVICE_DATA = bytes.fromhex('8be6cd371c5c891604bfbe49df84509672033874')


class Advertisement(dbus.service.Object):
    def properties(self):
        return {
            'Type': 'broadcast',
            'ServiceUUIDs': dbus.Array(['FD6F'], signature='s'),
            'ServiceData': dbus.Dictionary({'FD6F': dbus.Array(SERVICE_DATA, signature='y')}, signature='sv'),
        }

    @dbus.service.method('org.freedesktop.DBus.Properties', in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        return self.properties() if interface == INTERFACE else {}

    @dbus.service.method(INTERFACE, in_signature='', out_signature='')
    def Release(self):
        pass


advertisement = Advertisement(bus, PATH)
adapter = '/org/bluez/' + sys.argv[1]
dbus.Interface(bus.get_object('org.bluez', adapter), 'org.freedesktop.DBus.Properties').Set(
    'org.bluez.Adapter1', 'Powered', dbus.Boolean(True))
manager = dbus.Interface(bus.get_object('org.bluez', adapter), 'org.bluez.LEAdvertisingManager1')
loop = GLib.MainLoop()
manager.RegisterAdvertisement(
    PATH, {}, reply_handler=lambda: print('REGISTERED', flush=True),
    error_handler=lambda error: (print(f'REGISTER FAILED {error}', flush=True), loop.quit()))
GLib.timeout_add_seconds(int(sys.argv[2]), loop.quit)
loop.run()
