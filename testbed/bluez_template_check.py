#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Proves testbed/bluez_template.py as an independent D-Bus client (dbus-python + GLib). Needs the
mock running on the bus in DBUS_SYSTEM_BUS_ADDRESS with no adapter yet. Prints PASS lines and exits
0, or prints FAIL and exits 1. GAEND_MOCK_GETALL_TIMEOUT must match the mock's (default 15; bluez_template_check.sh sets 5)."""
import os
import subprocess
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

FD6F = '0000fd6f-0000-1000-8000-00805f9b34fb'
ADAPTER = '/org/bluez/hci0'
MOCK = 'org.bluez.Mock'
ADAPTER_IFACE = 'org.bluez.Adapter1'
MANAGER_IFACE = 'org.bluez.LEAdvertisingManager1'
ADV_IFACE = 'org.bluez.LEAdvertisement1'
PROPS = 'org.freedesktop.DBus.Properties'
OM = 'org.freedesktop.DBus.ObjectManager'
GETALL_TIMEOUT = float(os.environ.get('GAEND_MOCK_GETALL_TIMEOUT', '15'))
RPI = bytes(range(0xa0, 0xb0)) + bytes([0x40, 0x08, 0xc5, 0x00])

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
ADDRESS = os.environ['DBUS_SYSTEM_BUS_ADDRESS']


def connect():
    # A private connection per client, so that each has its own unique name.
    return dbus.bus.BusConnection(ADDRESS)


bus = connect()
signals = []


def record(*args, **kw):
    signals.append((kw['member'], str(kw['path']), args))


bus.add_signal_receiver(record, bus_name='org.bluez', member_keyword='member', path_keyword='path')


def spin(done, timeout=10.0):
    """Runs the main loop (so our exported objects answer) until done() or the timeout."""
    context = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        context.iteration(False) or time.sleep(0.005)
    return done()


def call(path, iface, method, sig='', args=(), conn=None, timeout=30.0):
    """An asynchronous call while the main loop keeps running, as gaend must do it."""
    box = {}
    (conn or bus).call_async('org.bluez', path, iface, method, sig, args,
                             reply_handler=lambda *r: box.setdefault('ok', r),
                             error_handler=lambda e: box.setdefault('err', e), timeout=timeout)
    if not spin(lambda: box, timeout + 1):
        raise AssertionError(f'{method}: no reply')
    if 'err' in box:
        raise box['err']
    reply = box['ok']
    return reply[0] if len(reply) == 1 else None


def mock(method, sig='', *args):
    return call('/', MOCK, method, sig, args)


def refused(name, fn, message=None):
    try:
        fn()
    except dbus.DBusException as e:
        check(e.get_dbus_name() == name, f'error {e.get_dbus_name()} {e.get_dbus_message()!r}, wanted {name}')
        if message is not None:
            check(e.get_dbus_message() == message, f'message {e.get_dbus_message()!r}, wanted {message!r}')
        return e
    raise AssertionError(f'no error, wanted {name}')


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def passed(what):
    print(f'PASS {what}', flush=True)


def seen(member, path=None, since=0, where=lambda args: True):
    return [s for s in signals[since:] if s[0] == member and (path is None or s[1] == path) and where(s[2])]


def wait_seen(member, path=None, since=0, where=lambda args: True, timeout=5.0):
    spin(lambda: seen(member, path, since, where), timeout)
    found = seen(member, path, since, where)
    check(found, f'no {member} on {path} after signal {since}')
    return found[0][2]


class Advertisement(dbus.service.Object):
    """An LEAdvertisement1 as gaend exports it; records the calls the mock makes on it."""

    def __init__(self, conn, path, kind='broadcast'):
        super().__init__(conn, path)
        self.path = path
        self.kind = kind
        self.calls = []

    @dbus.service.method(PROPS, in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        self.calls.append('GetAll')
        if interface != ADV_IFACE:
            raise dbus.DBusException('no such interface', name='org.freedesktop.DBus.Error.InvalidArgs')
        return self.properties()

    def properties(self):
        return {'Type': dbus.String(self.kind), 'ServiceUUIDs': dbus.Array(['FD6F'], signature='s'),
                'ServiceData': dbus.Dictionary({'FD6F': dbus.Array(RPI, signature='y')}, signature='sv'),
                'MinInterval': dbus.UInt32(200), 'MaxInterval': dbus.UInt32(270)}

    @dbus.service.method(ADV_IFACE, in_signature='', out_signature='')
    def Release(self):
        self.calls.append('Release')


class ManagedAdvertisement(Advertisement):
    """One that also answers ObjectManager.GetManagedObjects on its own path, which bluetoothd
    (gdbus/client.c) asks first; then no GetAll is needed."""

    @dbus.service.method(OM, in_signature='', out_signature='a{oa{sa{sv}}}')
    def GetManagedObjects(self):
        self.calls.append('GetManagedObjects')
        return {dbus.ObjectPath(self.path): {ADV_IFACE: self.properties()}}


BLOCKING_CLIENT = """
import sys, dbus
bus = dbus.bus.BusConnection(sys.argv[1])
try:
    bus.call_blocking('org.bluez', '/org/bluez/hci0', 'org.bluez.LEAdvertisingManager1', 'RegisterAdvertisement',
                      'oa{sv}', ('/gaend/blocking2', {}), timeout=60)
except dbus.DBusException as e:
    print(e.get_dbus_name())
"""


def register(adv, conn=None):
    return call(ADAPTER, MANAGER_IFACE, 'RegisterAdvertisement', 'oa{sv}', (adv.path, {}), conn=conn)


def unregister(path, conn=None):
    return call(ADAPTER, MANAGER_IFACE, 'UnregisterAdvertisement', 'o', (path,), conn=conn)


def adapter_prop(name, iface=ADAPTER_IFACE):
    return call(ADAPTER, PROPS, 'Get', 'ss', (iface, name))


def advertisements():
    return mock('GetAdvertisements', 's', 'hci0')


def main():
    mark = len(signals)
    check(mock('AddAdapter', 'ss', 'hci0', 'ci') == ADAPTER, 'AddAdapter path')
    added = wait_seen('InterfacesAdded', '/', mark)
    check(added[0] == ADAPTER and {ADAPTER_IFACE, MANAGER_IFACE} <= set(added[1]), 'InterfacesAdded interfaces')
    check(adapter_prop('SupportedInstances', MANAGER_IFACE) == 5, 'SupportedInstances 5')
    passed('AddAdapter hci0: InterfacesAdded with Adapter1 and LEAdvertisingManager1, SupportedInstances 5')

    # Registration reads the properties back from us before replying.
    adv1 = Advertisement(bus, '/gaend/adv1')
    mark = len(signals)
    register(adv1)
    check('GetAll' in adv1.calls, 'the mock did not call GetAll')
    ads = advertisements()
    check(len(ads) == 1 and ads[0][0] == bus.get_unique_name() and ads[0][1] == adv1.path, f'GetAdvertisements {ads}')
    props = ads[0][2]
    check(props['Type'] == 'broadcast' and list(props['ServiceUUIDs']) == ['FD6F'], f'props {props}')
    check(bytes(props['ServiceData']['FD6F']) == RPI, 'ServiceData read back')
    check(props['MinInterval'] == 200 and props['MaxInterval'] == 270, 'intervals read back')
    changed = wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: a[0] == MANAGER_IFACE)
    check(changed[1]['ActiveInstances'] == 1 and changed[1]['SupportedInstances'] == 4, f'instances {changed}')
    passed('RegisterAdvertisement (async, serving GetAll): GetAdvertisements shows Type, FD6F UUID and 20-byte data, '
           'intervals 200/270; ActiveInstances 1, SupportedInstances 4')

    refused('org.bluez.Error.AlreadyExists', lambda: register(adv1), 'Already Exists')
    passed('same sender and path twice -> org.bluez.Error.AlreadyExists')

    adv2 = Advertisement(bus, '/gaend/adv2')
    mock('SetSupportedInstances', 'sy', 'hci0', 1)
    refused('org.bluez.Error.NotPermitted', lambda: register(adv2), 'Maximum advertisements reached')
    check(adv2.calls == [], 'a refused-at-once registration must not read properties')
    mock('SetSupportedInstances', 'sy', 'hci0', 5)
    passed('SetSupportedInstances 1 -> second registration gets org.bluez.Error.NotPermitted "Maximum advertisements reached"')

    refused('org.bluez.Error.DoesNotExist', lambda: unregister('/gaend/unknown'), 'Does Not Exist')
    passed('UnregisterAdvertisement of an unknown path -> org.bluez.Error.DoesNotExist "Does Not Exist"')

    mock('FailNextRegistrations', 'sssu', 'hci0', 'org.bluez.Error.Failed', 'injected', 1)
    refused('org.bluez.Error.Failed', lambda: register(adv2), 'injected')
    check(adv2.calls == ['GetAll'], 'FailNextRegistrations must fail after reading the properties')
    register(adv2)
    check(len(advertisements()) == 2, 'second registration after the injected failure')
    unregister(adv2.path)
    check([str(a[1]) for a in advertisements()] == [adv1.path], 'unregister adv2')
    check('Release' not in adv2.calls, 'UnregisterAdvertisement must not call Release')
    passed('FailNextRegistrations fails once after GetAll, then registration works; Unregister does not call Release')

    refusals = [str(r) for r in mock('GetRegistrationRefusals', 's', 'hci0')]
    check(refusals == ['org.bluez.Error.AlreadyExists: Already Exists',
                       'org.bluez.Error.NotPermitted: Maximum advertisements reached',
                       'org.bluez.Error.Failed: injected'], f'refusals {refusals}')
    passed('GetRegistrationRefusals lists each refused registration, in order')

    bad = Advertisement(bus, '/gaend/bad', kind='bogus')
    refused('org.bluez.Error.Failed', lambda: register(bad), 'Failed to parse advertisement.')
    passed('Type "bogus" -> org.bluez.Error.Failed "Failed to parse advertisement." (as bluetoothd 5.66)')

    mock('FailNextUnregistrations', 'sssu', 'hci0', 'org.bluez.Error.Failed', 'kept', 1)
    refused('org.bluez.Error.Failed', lambda: unregister(adv1.path), 'kept')
    check(len(advertisements()) == 1, 'a failed unregistration keeps the advertisement')
    passed('FailNextUnregistrations fails once and keeps the registration')

    mark = len(signals)
    mock('ReleaseAdvertisements', 's', 'hci0')
    check(spin(lambda: 'Release' in adv1.calls, 5), 'Release was not called')
    check(advertisements() == [], 'ReleaseAdvertisements must drop them')
    wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: a[0] == MANAGER_IFACE and a[1]['ActiveInstances'] == 0)
    log = [(str(e), str(p)) for e, _, p in mock('GetRegistrationLog', 's', 'hci0')]
    check(log == [('register', adv1.path), ('register', adv2.path), ('unregister', adv2.path),
                  ('release', adv1.path)], f'log {log}')
    passed('ReleaseAdvertisements calls Release and drops it; GetRegistrationLog register/register/unregister/release')

    # A client that blocks in its call cannot answer GetAll: it must get an error after the timeout.
    blocking = connect()
    proxy = blocking.get_object('org.bluez', ADAPTER)
    start = time.monotonic()
    e = refused('org.bluez.Error.Failed', lambda: proxy.RegisterAdvertisement(
        dbus.ObjectPath('/gaend/blocking'), dbus.Dictionary({}, signature='sv'),
        dbus_interface=MANAGER_IFACE, timeout=GETALL_TIMEOUT + 20))
    elapsed = time.monotonic() - start
    check(GETALL_TIMEOUT - 0.5 <= elapsed <= GETALL_TIMEOUT + 3, f'blocked for {elapsed:.1f} s')
    blocking.close()
    # Meanwhile the mock must go on serving everyone else.
    child = subprocess.Popen([sys.executable, '-c', BLOCKING_CLIENT, ADDRESS], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    start = time.monotonic()
    for _ in range(10):
        advertisements()
    latency = (time.monotonic() - start) / 10
    output = child.communicate(timeout=GETALL_TIMEOUT + 20)[0].strip()
    check(latency < 0.2 and output == 'org.bluez.Error.Failed', f'latency {latency:.3f} s, child {output}')
    passed(f'a blocking RegisterAdvertisement gets org.bluez.Error.Failed after {elapsed:.1f} s '
           f'({e.get_dbus_message()}); other calls meanwhile answered in {latency * 1000:.0f} ms')

    managed = ManagedAdvertisement(bus, '/gaend/managed')
    register(managed)
    check(managed.calls == ['GetManagedObjects'], f'calls {managed.calls}')
    unregister(managed.path)
    passed('an advertisement listed by GetManagedObjects on its path is read from there, without GetAll')

    # Discovery, per sender.
    filters = call(ADAPTER, ADAPTER_IFACE, 'GetDiscoveryFilters')
    check(list(filters) == ['UUIDs', 'RSSI', 'Pathloss', 'Transport', 'DuplicateData', 'Discoverable', 'Pattern'],
          f'filters {filters}')
    refused('org.bluez.Error.InvalidArguments',
            lambda: call(ADAPTER, ADAPTER_IFACE, 'SetDiscoveryFilter', 'a{sv}', ({'Bogus': dbus.Boolean(True)},)))
    refused('org.bluez.Error.InvalidArguments',
            lambda: call(ADAPTER, ADAPTER_IFACE, 'SetDiscoveryFilter', 'a{sv}', ({'RSSI': dbus.Int32(-60)},)))
    refused('org.bluez.Error.InvalidArguments',
            lambda: call(ADAPTER, ADAPTER_IFACE, 'SetDiscoveryFilter', 'a{sv}', ({'Transport': 'usb'},)))
    passed('GetDiscoveryFilters lists the 7 keys; unknown key, RSSI as i, Transport usb -> InvalidArguments')

    mark = len(signals)
    call(ADAPTER, ADAPTER_IFACE, 'StartDiscovery')
    wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: a[1].get('Discovering') is not None and a[1]['Discovering'])
    refused('org.bluez.Error.InProgress', lambda: call(ADAPTER, ADAPTER_IFACE, 'StartDiscovery'),
            'Operation already in progress')
    other = connect()
    refused('org.bluez.Error.Failed', lambda: call(ADAPTER, ADAPTER_IFACE, 'StopDiscovery', conn=other),
            'No discovery started')
    passed('StartDiscovery without a filter -> Discovering true; again -> InProgress; '
           'StopDiscovery from another client -> Failed "No discovery started"')

    mark = len(signals)
    dev = ADAPTER + '/dev_1A_5B_7C_9D_1E_2F'
    check(mock('SeeAdvert', 'sssayn', 'hci0', '1a:5b:7c:9d:1e:2f', 'random', dbus.ByteArray(RPI), -67), 'first')
    path, interfaces = wait_seen('InterfacesAdded', '/', mark)
    device = interfaces['org.bluez.Device1']
    check(path == dev, f'device path {path}')
    check(device['Address'] == '1A:5B:7C:9D:1E:2F' and device['AddressType'] == 'random', 'address')
    check(device['Alias'] == '1A-5B-7C-9D-1E-2F' and 'Name' not in device, 'alias from address, no name')
    check(isinstance(device['RSSI'], dbus.Int16) and device['RSSI'] == -67, 'RSSI n -67')
    check(list(device['UUIDs']) == [FD6F], 'UUIDs')
    check(device['ServiceData'].signature == 'sv' and device['ServiceData'][FD6F].signature == 'y', 'a{sv} of ay')
    check(bytes(device['ServiceData'][FD6F]) == RPI, 'service data bytes')
    check(device['Adapter'] == ADAPTER and not device['Paired'] and not device['Connected'], 'flags')
    passed('SeeAdvert first sighting -> InterfacesAdded with Device1 (Address, random, Alias, RSSI n, UUIDs, '
           'ServiceData a{sv} of ay[20])')

    mark = len(signals)
    check(mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(RPI), -75), 'second')
    changed = wait_seen('PropertiesChanged', dev, mark)
    check(dict(changed[1]) == {'RSSI': -75}, f'changed {changed}')
    check(not mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(RPI), -70),
          'a 5 dB change without a filter must not be signalled')
    new = bytes(20 * [1])
    mark = len(signals)
    check(mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(new), -70), 'new data')
    changed = wait_seen('PropertiesChanged', dev, mark)
    check(set(changed[1]) == {'ServiceData'} and bytes(changed[1]['ServiceData'][FD6F]) == new, f'{changed}')
    passed('later sightings without a filter: RSSI -75 (8 dB) -> PropertiesChanged {RSSI}; -70 same data -> '
           'nothing; new data -> PropertiesChanged {ServiceData}')

    call(ADAPTER, ADAPTER_IFACE, 'SetDiscoveryFilter', 'a{sv}', ({'UUIDs': ['180d'], 'Transport': 'le'},))
    check(not mock('SeeAdvert', 'sssayn', 'hci0', '11:22:33:44:55:66', 'random', dbus.ByteArray(RPI), -60),
          'a UUIDs filter without FD6F must drop the advert')
    call(ADAPTER, ADAPTER_IFACE, 'SetDiscoveryFilter', 'a{sv}',
         ({'UUIDs': [FD6F], 'Transport': 'le', 'DuplicateData': dbus.Boolean(True)},))
    mark = len(signals)
    check(mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(new), -70), 'dup')
    changed = wait_seen('PropertiesChanged', dev, mark)
    check(set(changed[1]) == {'RSSI', 'ServiceData'}, f'DuplicateData changed {changed}')
    mark = len(signals)
    check(mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(new), 127), '127')
    check(wait_seen('PropertiesChanged', dev, mark)[1]['RSSI'] == 127, 'RSSI 127 is passed on')
    sessions = mock('GetDiscoverySessions', 's', 'hci0')
    check(len(sessions) == 1 and sessions[0][0] == bus.get_unique_name() and sessions[0][1], f'{sessions}')
    check(sessions[0][2]['Transport'] == 'le' and sessions[0][2]['DuplicateData'], 'session filter')
    call(ADAPTER, ADAPTER_IFACE, 'SetDiscoveryFilter', 'a{sv}', ({'RSSI': dbus.Int16(-60)},))
    check(not mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(new), -80),
          'below the RSSI threshold')
    passed('filters: UUIDs [180d] -> false; UUIDs [FD6F] + DuplicateData -> {RSSI, ServiceData} every report; '
           'RSSI 127 passed on; RSSI -60 threshold drops -80; GetDiscoverySessions shows the filter')

    mark = len(signals)
    call(ADAPTER, ADAPTER_IFACE, 'StopDiscovery')
    wait_seen('InterfacesRemoved', '/', mark, lambda a: a[0] == dev)
    wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: a[1].get('Discovering') is not None and not a[1]['Discovering'])
    refused('org.bluez.Mock.NotDiscovering',
            lambda: mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(RPI), -60))
    passed('StopDiscovery (last session) -> InterfacesRemoved of the non-connectable device, Discovering false; '
           'SeeAdvert then -> org.bluez.Mock.NotDiscovering')

    call(ADAPTER, ADAPTER_IFACE, 'StartDiscovery')
    mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(RPI), -60)
    mark = len(signals)
    mock('ExpireDevices', 's', 'hci0')
    wait_seen('InterfacesRemoved', '/', mark, lambda a: a[0] == dev)
    mock('SeeAdvert', 'sssayn', 'hci0', '1A:5B:7C:9D:1E:2F', 'random', dbus.ByteArray(RPI), -60)
    mark = len(signals)
    call(ADAPTER, ADAPTER_IFACE, 'RemoveDevice', 'o', (dev,))
    wait_seen('InterfacesRemoved', '/', mark, lambda a: a[0] == dev)
    refused('org.bluez.Error.DoesNotExist', lambda: call(ADAPTER, ADAPTER_IFACE, 'RemoveDevice', 'o', (dev,)))
    passed('ExpireDevices and Adapter1.RemoveDevice -> InterfacesRemoved; unknown device -> DoesNotExist')

    # Power: sessions end, registrations stay.
    register(adv1)
    mark = len(signals)
    call(ADAPTER, PROPS, 'Set', 'ssv', (ADAPTER_IFACE, 'Powered', dbus.Boolean(False)))
    changed = wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: 'Powered' in a[1])
    check(not changed[1]['Powered'] and not changed[1]['Discovering'], f'power off {changed}')
    refused('org.bluez.Error.NotReady', lambda: call(ADAPTER, ADAPTER_IFACE, 'StartDiscovery'), 'Resource Not Ready')
    check(len(advertisements()) == 1 and adapter_prop('ActiveInstances', MANAGER_IFACE) == 1, 'kept registration')
    mark = len(signals)
    call(ADAPTER, PROPS, 'Set', 'ssv', (ADAPTER_IFACE, 'Powered', dbus.Boolean(True)))
    wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: a[1].get('Powered') is not None and a[1]['Powered'])
    call(ADAPTER, ADAPTER_IFACE, 'StartDiscovery')
    check(adapter_prop('Discovering'), 'Discovering after power on')
    call(ADAPTER, ADAPTER_IFACE, 'StopDiscovery')
    passed('Set Powered false -> PropertiesChanged {Discovering false, Powered false}; StartDiscovery -> NotReady '
           '"Resource Not Ready"; registration kept; Powered true -> StartDiscovery works')

    # A client that leaves the bus loses its registration and its session.
    leaver = connect()
    adv3 = Advertisement(leaver, '/gaend/adv3')
    register(adv3, conn=leaver)
    call(ADAPTER, ADAPTER_IFACE, 'StartDiscovery', conn=leaver)
    check(adapter_prop('ActiveInstances', MANAGER_IFACE) == 2 and adapter_prop('Discovering'), 'leaver set up')
    name = leaver.get_unique_name()
    mark = len(signals)
    leaver.close()
    wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: a[0] == MANAGER_IFACE and a[1]['ActiveInstances'] == 1)
    wait_seen('PropertiesChanged', ADAPTER, mark, lambda a: a[1].get('Discovering') is not None and not a[1]['Discovering'])
    log = [(str(e), str(s), str(p)) for e, s, p in mock('GetRegistrationLog', 's', 'hci0')]
    check(log[-1] == ('dropped', name, adv3.path), f'log {log[-1]}')
    passed('a client leaving the bus -> its registration dropped (ActiveInstances 1, log "dropped"), '
           'its discovery session ended (Discovering false)')

    # GetManagedObjects is strictly typed.
    message = dbus.lowlevel.MethodCallMessage('org.bluez', '/', OM, 'GetManagedObjects')
    reply = bus.send_message_with_reply_and_block(message, 5000)
    check(reply.get_signature() == 'a{oa{sa{sv}}}', f'signature {reply.get_signature()}')
    mock('AddDevice', 'sss', 'hci0', '11:22:33:44:55:66', 'phone')
    objects = call('/', OM, 'GetManagedObjects')
    stock = objects[ADAPTER + '/dev_11_22_33_44_55_66']['org.bluez.Device1']
    check('ServiceData' not in stock and 'ManufacturerData' not in stock, 'AddDevice has no empty aa{sv}')
    passed('GetManagedObjects replies a{oa{sa{sv}}}; AddDevice has no mistyped ServiceData/ManufacturerData')

    mark = len(signals)
    mock('RemoveAdapter', 's', 'hci0')
    check(spin(lambda: adv1.calls.count('Release') == 2, 5), 'RemoveAdapter must Release')
    wait_seen('InterfacesRemoved', '/', mark, lambda a: a[0] == ADAPTER)
    passed('RemoveAdapter -> Release on the registered advertisement, InterfacesRemoved for devices and adapter')


if __name__ == '__main__':
    try:
        main()
    except (AssertionError, dbus.DBusException) as failure:
        print(f'FAIL {failure!r}', flush=True)
        sys.exit(1)
    print('PASS all', flush=True)
