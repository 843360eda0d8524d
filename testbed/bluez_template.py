# SPDX-License-Identifier: GPL-3.0-or-later
"""python-dbusmock template that behaves like bluetoothd 5.66 where gaend can tell the difference.

Load it with `python -m dbusmock --system -t testbed/bluez_template.py` on a private bus. It keeps the
stock bluez5 template's shape (org.bluez, ObjectManager at /, org.bluez.Mock on /, AgentManager1 on
/org/bluez) and replaces what the stock template gets wrong: advertisement registration reads the
client's properties back, discovery is per client, sightings come from SeeAdvert, and every
property has the type bluetoothd gives it. Comments name the BlueZ 5.66 source each rule follows.

Environment: GAEND_MOCK_GETALL_TIMEOUT (seconds, default 15) bounds how long RegisterAdvertisement
waits for the client to answer the property read. bluetoothd waits 25 s; 5 s was too short for a
client on a loaded two-core test machine, which answered late but answered.
"""

import os
import time

import dbus
import dbus.service

from dbusmock import OBJECT_MANAGER_IFACE, mockobject
from dbusmock.templates import bluez5

BUS_NAME = "org.bluez"
MAIN_OBJ = "/"
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

MOCK_IFACE = "org.bluez.Mock"
ADAPTER_IFACE = bluez5.ADAPTER_IFACE
DEVICE_IFACE = bluez5.DEVICE_IFACE
ADV_MANAGER_IFACE = bluez5.LE_ADVERTISING_MANAGER_IFACE
ADV_IFACE = bluez5.LE_ADVERTISEMENT_IFACE
MONITOR_MANAGER_IFACE = bluez5.ADVERTISEMENT_MONITOR_MANAGER_IFACE
PROPS_IFACE = dbus.PROPERTIES_IFACE

FD6F = "0000fd6f-0000-1000-8000-00805f9b34fb"
BASE_UUID_TAIL = "-0000-1000-8000-00805f9b34fb"
GETALL_TIMEOUT = float(os.environ.get("GAEND_MOCK_GETALL_TIMEOUT", "15"))

# The stock template's Mock helpers that are fine as they are (they only need device.paired and
# device.connected, which our devices have). Assigning them here makes AddTemplate export them.
PairDevice = bluez5.PairDevice
BlockDevice = bluez5.BlockDevice
ConnectDevice = bluez5.ConnectDevice
DisconnectDevice = bluez5.DisconnectDevice
AddAdvertisement = bluez5.AddAdvertisement
AddMonitor = bluez5.AddMonitor


def error(name, message):
    return dbus.exceptions.DBusException(message, name=name)


# src/error.c: the names and messages bluetoothd replies with.
def invalid_args():
    return error("org.bluez.Error.InvalidArguments", "Invalid arguments in method call")


def not_ready():
    return error("org.bluez.Error.NotReady", "Resource Not Ready")


def does_not_exist():
    return error("org.bluez.Error.DoesNotExist", "Does Not Exist")


def failed(message):
    return error("org.bluez.Error.Failed", message)


# --- state ------------------------------------------------------------------------------------


class Registration:
    """One RegisterAdvertisement call: pending until the client's properties have been read."""

    def __init__(self, sender, path):
        self.sender = sender
        self.path = path
        self.props = {}
        self.active = False
        self.fail = None  # error callback of a pending registration


class DiscoveryClient:
    """src/adapter.c struct discovery_client: a sender's filter and whether it is discovering."""

    def __init__(self, sender, dfilter):
        self.sender = sender
        self.filter = dfilter
        self.discovering = False


class AdapterState:
    def __init__(self, name, path):
        self.name = name
        self.path = path
        self.max_ads = bluez5.MAX_ADVERTISEMENT_INSTANCES
        self.regs = []  # Registration, in order; pending ones count, as in bluetoothd's queue
        self.log = []  # (event, sender, path)
        self.refusals = []  # "name: message" of each RegisterAdvertisement refused, in order
        self.fail_register = None  # [name, message, count]
        self.fail_unregister = None
        self.clients = {}  # sender -> DiscoveryClient
        self.found = set()  # device paths seen in this discovery (adapter->discovery_found)
        self.discovery_discoverable = False
        self.adverts_on_stop = 0  # sightings signalled just before the next StopDiscovery's reply


ADAPTERS = {}  # adapter object path -> AdapterState


def root():
    return mockobject.objects["/"]


def bus():
    return root().bus_name.get_bus()


def adapter_path(name):
    return name if name.startswith("/") else "/org/bluez/" + name


def lookup(name):
    path = adapter_path(name)
    if path not in ADAPTERS:
        raise error(MOCK_IFACE + ".NoSuchAdapter", f"Adapter {name} does not exist.")
    return mockobject.objects[path], ADAPTERS[path]


def emit_changed(obj, interface, changed, invalidated=()):
    obj.EmitSignal(PROPS_IFACE, "PropertiesChanged", "sa{sv}as",
                   [interface, dbus.Dictionary(changed, signature="sv"), dbus.Array(invalidated, signature="s")])


def emit_added(path, interfaces):
    root().EmitSignal(OBJECT_MANAGER_IFACE, "InterfacesAdded", "oa{sa{sv}}",
                      [dbus.ObjectPath(path), dbus.Dictionary(interfaces, signature="sa{sv}")])


def emit_removed(path, interfaces):
    root().EmitSignal(OBJECT_MANAGER_IFACE, "InterfacesRemoved", "oas",
                      [dbus.ObjectPath(path), dbus.Array(interfaces, signature="s")])


def full_uuid(text):
    """lib/uuid.c bt_string_to_uuid: 16-bit, 32-bit (optionally 0x-prefixed) or 128-bit text, as the
    lower-case 128-bit form bluetoothd compares and reports. None if it is not a UUID."""
    text = str(text)
    bare = text[2:] if text[:2] in ("0x", "0X") else text
    try:
        int(bare.replace("-", ""), 16)
    except ValueError:
        return None
    if len(bare) == 4:
        return "0000" + bare.lower() + BASE_UUID_TAIL
    if len(bare) == 8:
        return bare.lower() + BASE_UUID_TAIL
    if len(text) == 36 and [len(p) for p in text.split("-")] == [8, 4, 4, 4, 12]:
        return text.lower()
    return None


def is_bytes(value):
    return isinstance(value, (bytes, dbus.ByteArray)) or (isinstance(value, dbus.Array) and value.signature == "y")


# --- adapters -------------------------------------------------------------------------------------


def sync_instances(adapter, state, emit):
    """src/advertising.c get_active_instances / get_instances: ActiveInstances counts every client in
    the queue (pending ones too) and SupportedInstances is what is left, max_ads - queue length.
    bluetoothd signals both only when a registration completes (add_adv_callback) or goes
    (client_remove), so pending ones change the values silently."""
    props = adapter.props[ADV_MANAGER_IFACE]
    props["ActiveInstances"] = dbus.Byte(min(len(state.regs), 255))
    props["SupportedInstances"] = dbus.Byte(max(state.max_ads - len(state.regs), 0))
    if emit:
        emit_changed(adapter, ADV_MANAGER_IFACE, {"SupportedInstances": props["SupportedInstances"],
                                                  "ActiveInstances": props["ActiveInstances"]})


@dbus.service.method(MOCK_IFACE, in_signature="ss", out_signature="s")
def AddAdapter(self, device_name, system_name):
    """Adds /org/bluez/<device_name> with Adapter1, LEAdvertisingManager1 and
    AdvertisementMonitorManager1 and emits one InterfacesAdded with all three. The address is built
    from the name's last digit as in the stock template (hci0 -> 00:01:02:03:04:05)."""
    path = adapter_path(device_name)
    if path in mockobject.objects:
        raise error("org.freedesktop.DBus.Mock.NameError", f"object {path} already exists")
    digit = int(device_name[-1]) if device_name[-1:].isdigit() else 0
    address = ":".join(f"{digit + i:02d}" for i in range(6))
    # src/adapter.c adapter_properties (the non-experimental ones, with values a laptop reports).
    adapter_props = {
        "Address": dbus.String(address),
        "AddressType": dbus.String("public"),
        "Name": dbus.String(system_name),
        "Alias": dbus.String(system_name),
        "Class": dbus.UInt32(268),
        "Powered": dbus.Boolean(True),
        "Discoverable": dbus.Boolean(False),
        "DiscoverableTimeout": dbus.UInt32(180),
        "Pairable": dbus.Boolean(True),
        "PairableTimeout": dbus.UInt32(0),
        "Discovering": dbus.Boolean(False),
        "UUIDs": dbus.Array(["00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
                             "00001200-0000-1000-8000-00805f9b34fb"], signature="s"),
        "Modalias": dbus.String("usb:v1D6Bp0246d0542"),
        "Roles": dbus.Array(["central", "peripheral"], signature="s"),
    }
    # src/advertising.c properties; SupportedFeatures and SupportedCapabilities are experimental in
    # 5.66 (bluetoothd -E), included as an AX200 reports them.
    manager_props = {
        "ActiveInstances": dbus.Byte(0),
        "SupportedInstances": dbus.Byte(bluez5.MAX_ADVERTISEMENT_INSTANCES),
        "SupportedIncludes": dbus.Array(["tx-power", "appearance", "local-name"], signature="s"),
        "SupportedSecondaryChannels": dbus.Array(["1M", "2M", "Coded"], signature="s"),
        "SupportedFeatures": dbus.Array(["CanSetTxPower", "HardwareOffload"], signature="s"),
        "SupportedCapabilities": dbus.Dictionary({"MaxAdvLen": dbus.Byte(251), "MaxScnRspLen": dbus.Byte(251),
                                                  "MinTxPower": dbus.Int16(-34), "MaxTxPower": dbus.Int16(7)},
                                                 signature="sv"),
    }
    monitor_props = {
        "SupportedMonitorTypes": dbus.Array(["or_patterns"], signature="s"),
        "SupportedFeatures": dbus.Array([], signature="s"),
    }
    self.AddObject(path, ADAPTER_IFACE, adapter_props, [])
    adapter = mockobject.objects[path]
    adapter.AddProperties(ADV_MANAGER_IFACE, manager_props)
    adapter.AddProperties(MONITOR_MANAGER_IFACE, monitor_props)
    adapter.AddMethods(MONITOR_MANAGER_IFACE, [("RegisterMonitor", "o", "", bluez5.RegisterMonitor),
                                               ("UnregisterMonitor", "o", "", bluez5.UnregisterMonitor)])
    adapter.monitors = []
    for interface, method in [(ADAPTER_IFACE, Adapter.StartDiscovery), (ADAPTER_IFACE, Adapter.StopDiscovery),
                              (ADAPTER_IFACE, Adapter.SetDiscoveryFilter),
                              (ADAPTER_IFACE, Adapter.GetDiscoveryFilters), (ADAPTER_IFACE, Adapter.RemoveDevice),
                              (ADV_MANAGER_IFACE, Adapter.RegisterAdvertisement),
                              (ADV_MANAGER_IFACE, Adapter.UnregisterAdvertisement), (PROPS_IFACE, Adapter.Set)]:
        install(adapter, interface, method)
    ADAPTERS[path] = AdapterState(device_name, path)
    emit_added(path, adapter.props)
    return path


def install(obj, interface, method):
    """dbusmock looks methods up in obj.methods before the class, so a dbus.service.method function
    put there gets dbus-python's sender and async-reply keywords, which AddMethod code cannot."""
    obj.methods.setdefault(interface, {})[method.__name__] = (
        method._dbus_in_signature, method._dbus_out_signature, "", method)


def remove_adapter(self, device_name):
    """src/adapter.c adapter_remove: devices go first, discovery sessions end, and the advertising
    manager is destroyed (src/advertising.c manager_destroy -> client_destroy: Release on every
    registered advertisement; a registration still pending gets "Failed to complete registration"
    from client_free). Then the adapter object goes."""
    adapter, state = lookup(device_name)
    for path in devices_of(state):
        remove_device(path)
    release_all(state, include_pending=True)
    state.clients.clear()
    interfaces = list(adapter.props)
    self.RemoveObject(state.path)
    del ADAPTERS[state.path]
    emit_removed(state.path, interfaces)


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="")
def RemoveAdapter(self, device_name):
    remove_adapter(self, device_name)


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="")
def RemoveAdapterWithDevices(self, device_name):
    """Same as RemoveAdapter: bluetoothd always removes the devices first."""
    remove_adapter(self, device_name)


def release_all(state, include_pending=False):
    for reg in list(state.regs):
        if reg.active:
            state.log.append(("release", reg.sender, reg.path))
            # src/advertising.c client_release: a method call whose reply nobody waits for.
            bus().call_async(reg.sender, reg.path, ADV_IFACE, "Release", "", (),
                             reply_handler=lambda *_: None,
                             error_handler=lambda e, p=reg.path: root().log(f"Release {p} failed: {e}"))
            state.regs.remove(reg)
        elif include_pending:
            state.regs.remove(reg)
            reg.fail(failed("Failed to complete registration"))


# --- advertising -------------------------------------------------------------------------------


def parse_advertisement(props):
    """src/advertising.c parse_advertisement and its parsers (parse_type, parse_service_uuids,
    parse_service_data, ...): a property of the wrong type or value refuses the whole registration
    with "Failed to parse advertisement." (org.bluez.Error.Failed, not InvalidArguments). Missing
    properties are fine. MinInterval, MaxInterval and TxPower are read only with -E (experimental);
    this mock behaves as bluetoothd -E. Returns True when bluetoothd would accept the properties."""
    def string(key, allowed=None):
        value = props.get(key)
        return value is None or (isinstance(value, dbus.String) and (allowed is None or value in allowed))

    def uint16(key):
        return key not in props or isinstance(props[key], dbus.UInt16)

    def uuid_list(key):
        value = props.get(key)
        if value is None:
            return True
        return isinstance(value, dbus.Array) and all(full_uuid(u) for u in value if isinstance(u, dbus.String))

    def data_dict(key, valid_key):
        value = props.get(key)
        if value is None:
            return True
        return isinstance(value, dbus.Dictionary) and all(valid_key(k) and is_bytes(v) for k, v in value.items())

    def interval(key):
        value = props.get(key)
        # ms / 0.625 must lie in 0x20..0xFFFFFF (Core 5.2 Vol 4 Part E 7.8.53)
        return value is None or (isinstance(value, dbus.UInt32) and 0x20 <= int(value / 0.625) <= 0xFFFFFF)

    includes = props.get("Includes", dbus.Array([], signature="s"))
    checks = [
        string("Type", ("broadcast", "peripheral")),
        uuid_list("ServiceUUIDs"),
        uuid_list("SolicitUUIDs"),
        data_dict("ManufacturerData", lambda k: True),
        data_dict("ServiceData", full_uuid),
        isinstance(includes, dbus.Array),
        string("LocalName") and not ("LocalName" in props and "local-name" in includes),
        uint16("Appearance"), uint16("Duration"), uint16("Timeout"), uint16("DiscoverableTimeout"),
        "Discoverable" not in props or isinstance(props["Discoverable"], dbus.Boolean),
        string("SecondaryChannel", ("1M", "2M", "Coded")),
        interval("MinInterval"), interval("MaxInterval"),
        "TxPower" not in props or (isinstance(props["TxPower"], dbus.Int16) and -127 <= props["TxPower"] <= 20),
    ]
    if not all(checks):
        return False
    # "Broadcast cannot set flags": Discoverable true adds the Flags AD (parse_discoverable).
    if props.get("Type", "broadcast") == "broadcast" and props.get("Discoverable", False):
        return False
    # A present MinInterval with no MaxInterval compares against 0 and fails, as in bluetoothd.
    if int(props.get("MinInterval", 0) / 0.625) > int(props.get("MaxInterval", 0) / 0.625):
        return False
    if props.get("Timeout", 0) and props["Timeout"] < props.get("DiscoverableTimeout", 0):
        return False
    return True


def read_advertisement(sender, path, done, fail):
    """gdbus/client.c as used by src/advertising.c client_create (g_dbus_client_new_full(conn, sender,
    path, path)): first ObjectManager.GetManagedObjects on the advertisement's own path; if that
    fails (most clients answer UnknownMethod) or does not list LEAdvertisement1 at that path, then
    Properties.GetAll("org.bluez.LEAdvertisement1"). Both are asynchronous, so the mock keeps
    serving other callers meanwhile.

    Deviation, on purpose: bluetoothd sends both with libdbus's default 25 s timeout and, when they
    fail, goes on with an empty property set (get_all_properties_reply -> proxy_added), which
    registers an empty advertisement. The mock instead gives both calls together GETALL_TIMEOUT and
    refuses the registration, so that a client which cannot answer while it waits (a blocking
    send_with_reply_and_block) is caught in seconds."""
    deadline = time.monotonic() + GETALL_TIMEOUT

    def remaining():
        return max(deadline - time.monotonic(), 0.001)

    def got_all(props):
        done(props)

    def getall_failed(e):
        fail(e)

    def get_all():
        bus().call_async(sender, path, PROPS_IFACE, "GetAll", "s", (ADV_IFACE,), reply_handler=got_all,
                         error_handler=getall_failed, timeout=remaining())

    def got_objects(objects):
        interfaces = objects.get(dbus.ObjectPath(path), {})
        if ADV_IFACE in interfaces:
            done(interfaces[ADV_IFACE])
        else:
            get_all()

    def objects_failed(e):
        if time.monotonic() >= deadline:
            fail(e)
        else:
            get_all()

    bus().call_async(sender, path, OBJECT_MANAGER_IFACE, "GetManagedObjects", "", (), reply_handler=got_objects,
                     error_handler=objects_failed, timeout=remaining())


def take_failure(slot):
    """FailNext*: returns the error to inject and counts it down, or None."""
    if not slot or slot[2] <= 0:
        return None
    slot[2] -= 1
    return error(slot[0], slot[1])


class Adapter:
    """Methods installed on each adapter object (kept in a class so that AddTemplate does not also
    export them on /)."""

    @staticmethod
    @dbus.service.method(ADV_MANAGER_IFACE, in_signature="oa{sv}", out_signature="", sender_keyword="sender",
                         message_keyword="message", async_callbacks=("ok", "err"))
    def RegisterAdvertisement(adapter, path, options, sender=None, message=None, ok=None, err=None):
        """src/advertising.c register_advertisement: checks in this order, replying at once:
        arguments (InvalidArguments), the same sender and path already in the queue, pending or not
        (AlreadyExists "Already Exists"), a free instance (NotPermitted "Maximum advertisements
        reached"). Then it replies only once the properties have been read (client_proxy_added ->
        parse_advertisement -> add_adv_callback)."""
        state = ADAPTERS[adapter.path]

        def refuse(e):
            state.refusals.append(f"{e.get_dbus_name()}: {e.get_dbus_message()}")
            err(e)

        if message.get_signature() != "oa{sv}":
            return refuse(invalid_args())
        if any(r.sender == sender and r.path == path for r in state.regs):
            return refuse(error("org.bluez.Error.AlreadyExists", "Already Exists"))
        if len(state.regs) >= state.max_ads:
            return refuse(error("org.bluez.Error.NotPermitted", "Maximum advertisements reached"))
        reg = Registration(sender, str(path))
        reg.fail = refuse
        state.regs.append(reg)
        sync_instances(adapter, state, emit=False)

        def still_pending():
            # Dropped meanwhile: the client left, unregistered, or the adapter went away.
            return reg in state.regs and ADAPTERS.get(adapter.path) is state

        def done(props):
            if not still_pending():
                return
            reg.props = dict(props)
            refusal = None if parse_advertisement(reg.props) else failed("Failed to parse advertisement.")
            refusal = refusal or take_failure(state.fail_register)
            if refusal:
                state.regs.remove(reg)
                sync_instances(adapter, state, emit=False)
                refuse(refusal)
                return
            reg.active = True
            reg.fail = None
            state.log.append(("register", sender, reg.path))
            ok()
            sync_instances(adapter, state, emit=True)

        def fail(e):
            if not still_pending():
                return
            root().log(f"RegisterAdvertisement {sender} {path}: reading the properties failed: {e}")
            state.regs.remove(reg)
            sync_instances(adapter, state, emit=False)
            # client_free's message for a registration that never completed, plus the cause.
            refuse(failed(f"Failed to complete registration: {e.get_dbus_name()}"))

        read_advertisement(sender, str(path), done, fail)
        return None

    @staticmethod
    @dbus.service.method(ADV_MANAGER_IFACE, in_signature="o", out_signature="", sender_keyword="sender",
                         message_keyword="message")
    def UnregisterAdvertisement(adapter, path, sender=None, message=None):
        """src/advertising.c unregister_advertisement: no such sender+path -> DoesNotExist "Does Not
        Exist"; otherwise client_remove, which does not call Release (only client_destroy does) and
        signals SupportedInstances and ActiveInstances. A registration still pending is answered
        "Failed to complete registration" (client_free)."""
        state = ADAPTERS[adapter.path]
        if message.get_signature() != "o":
            raise invalid_args()
        reg = next((r for r in state.regs if r.sender == sender and r.path == path), None)
        if reg is None:
            raise does_not_exist()
        refusal = take_failure(state.fail_unregister)
        if refusal:
            raise refusal
        state.regs.remove(reg)
        if reg.active:
            state.log.append(("unregister", sender, reg.path))
        else:
            reg.fail(failed("Failed to complete registration"))
        sync_instances(adapter, state, emit=True)

    @staticmethod
    @dbus.service.method(PROPS_IFACE, in_signature="ssv", out_signature="", async_callbacks=("ok", "err"))
    def Set(adapter, interface, name, value, ok=None, err=None):
        """gdbus/object.c properties_set and src/adapter.c property_set_mode for Adapter1."""
        writable = {"Alias": dbus.String, "Powered": dbus.Boolean, "Discoverable": dbus.Boolean,
                    "DiscoverableTimeout": dbus.UInt32, "Pairable": dbus.Boolean, "PairableTimeout": dbus.UInt32}
        props = adapter.props.get(interface)
        if props is None:
            return err(error("org.freedesktop.DBus.Error.InvalidArgs", f"No such interface '{interface}'"))
        if name not in props:
            return err(error("org.freedesktop.DBus.Error.UnknownProperty", f"No such property '{name}'"))
        if interface != ADAPTER_IFACE or name not in writable:
            return err(error("org.freedesktop.DBus.Error.PropertyReadOnly", f"Property '{name}' is not writable"))
        if not isinstance(value, writable[name]):
            return err(error("org.freedesktop.DBus.Error.InvalidSignature", f"Invalid signature for '{name}'"))
        value = writable[name](value)
        if props[name] == value:
            # property_set_mode: no change -> success and no signal.
            return ok()
        if name == "Powered":
            return set_powered(adapter, bool(value), ok)
        props[name] = value
        ok()
        emit_changed(adapter, ADAPTER_IFACE, {name: value})
        return None

    @staticmethod
    @dbus.service.method(ADAPTER_IFACE, in_signature="a{sv}", out_signature="", sender_keyword="sender",
                         message_keyword="message")
    def SetDiscoveryFilter(adapter, properties, sender=None, message=None):
        """src/adapter.c set_discovery_filter: NotReady when off; parse_discovery_filter_dict refuses
        an unknown key, a wrong type or range, or RSSI together with Pathloss, with InvalidArguments.
        An empty dict clears the filter. The filter is kept per sender, before and during discovery."""
        adapter_state = ADAPTERS[adapter.path]
        if not adapter.props[ADAPTER_IFACE]["Powered"]:
            raise not_ready()
        if message.get_signature() != "a{sv}":
            raise invalid_args()
        dfilter = parse_filter(properties)
        client = adapter_state.clients.get(sender)
        if client:
            client.filter = dfilter
            if dfilter is None and not client.discovering:
                del adapter_state.clients[sender]
        elif dfilter is not None:
            adapter_state.clients[sender] = DiscoveryClient(sender, dfilter)

    @staticmethod
    @dbus.service.method(ADAPTER_IFACE, in_signature="", out_signature="", sender_keyword="sender",
                         async_callbacks=("ok", "err"))
    def StartDiscovery(adapter, sender=None, ok=None, err=None):
        """src/adapter.c start_discovery: NotReady "Resource Not Ready" when off; a sender that is
        already discovering gets InProgress "Operation already in progress" (btd_error_busy). A filter
        is optional. The first session turns Discovering on after the reply (start_discovery_complete);
        a filter with Discoverable true makes the adapter discoverable (update_discovery_filter)."""
        state = ADAPTERS[adapter.path]
        props = adapter.props[ADAPTER_IFACE]
        if not props["Powered"]:
            return err(not_ready())
        client = state.clients.setdefault(sender, DiscoveryClient(sender, None))
        if client.discovering:
            return err(error("org.bluez.Error.InProgress", "Operation already in progress"))
        client.discovering = True
        ok()
        changed = {}
        if client.filter and client.filter["Discoverable"] and not props["Discoverable"]:
            state.discovery_discoverable = True
            props["Discoverable"] = changed["Discoverable"] = dbus.Boolean(True)
        if not props["Discovering"]:
            props["Discovering"] = changed["Discovering"] = dbus.Boolean(True)
        if changed:
            emit_changed(adapter, ADAPTER_IFACE, changed)
        return None

    @staticmethod
    @dbus.service.method(ADAPTER_IFACE, in_signature="", out_signature="", sender_keyword="sender",
                         async_callbacks=("ok", "err"))
    def StopDiscovery(adapter, sender=None, ok=None, err=None):
        """src/adapter.c stop_discovery: NotReady when off; Failed "No discovery started" for a
        sender without a session; otherwise discovery_stop."""
        state = ADAPTERS[adapter.path]
        if not adapter.props[ADAPTER_IFACE]["Powered"]:
            return err(not_ready())
        client = state.clients.get(sender)
        if not client or not client.discovering:
            return err(failed("No discovery started"))
        # Reports the kernel delivered before the stop completed reach the bus before the reply.
        for index in range(state.adverts_on_stop):
            SeeAdvert(None, state.name, "0A:%02X:%02X:%02X:00:01" % (index >> 16 & 0xFF, index >> 8 & 0xFF, index & 0xFF), "random",
                      dbus.Array(list(index.to_bytes(4, "big")) * 4 + [1, 2, 3, 4], signature="y"), dbus.Int16(-60))
        state.adverts_on_stop = 0
        ok()
        stop_session(adapter, state, client, keep_filter=True)
        return None

    @staticmethod
    @dbus.service.method(ADAPTER_IFACE, in_signature="", out_signature="as")
    def GetDiscoveryFilters(adapter):
        """src/adapter.c get_discovery_filters: the keys of its parser table, in order."""
        return dbus.Array(list(FILTER_PARSERS), signature="s")

    @staticmethod
    @dbus.service.method(ADAPTER_IFACE, in_signature="o", out_signature="")
    def RemoveDevice(adapter, path):
        """src/adapter.c remove_device: unknown -> DoesNotExist, adapter off -> NotReady."""
        state = ADAPTERS[adapter.path]
        if str(path) not in devices_of(state):
            raise does_not_exist()
        if not adapter.props[ADAPTER_IFACE]["Powered"]:
            raise not_ready()
        remove_device(str(path))


# --- discovery ---------------------------------------------------------------------------------


def parse_rssi(value):
    # -127 <= RSSI <= +20 (Core 4.2 Vol 2 Part E 7.7.65.2)
    return int(value) if isinstance(value, dbus.Int16) and -127 <= value <= 20 else None


def parse_uuids(value):
    if not isinstance(value, dbus.Array):
        return None
    uuids = [full_uuid(u) if isinstance(u, dbus.String) else None for u in value]
    return None if None in uuids else uuids


# src/adapter.c parsers[] (SetDiscoveryFilter keys) -> a function returning the parsed value or None.
FILTER_PARSERS = {
    "UUIDs": parse_uuids,
    "RSSI": parse_rssi,
    "Pathloss": lambda v: int(v) if isinstance(v, dbus.UInt16) and v <= 137 else None,  # PATHLOSS_MAX
    "Transport": lambda v: str(v) if isinstance(v, dbus.String) and v in ("auto", "bredr", "le") else None,
    "DuplicateData": lambda v: bool(v) if isinstance(v, dbus.Boolean) else None,
    "Discoverable": lambda v: bool(v) if isinstance(v, dbus.Boolean) else None,
    "Pattern": lambda v: str(v) if isinstance(v, dbus.String) else None,
}


def parse_filter(properties):
    """src/adapter.c parse_discovery_filter_dict. Returns None for an empty dict (no filter)."""
    if not properties:
        return None
    dfilter = {"UUIDs": [], "RSSI": None, "Pathloss": None, "Transport": "auto", "DuplicateData": False,
               "Discoverable": False, "Pattern": None}
    for key, value in properties.items():
        parser = FILTER_PARSERS.get(str(key))
        parsed = parser(value) if parser else None
        if parsed is None:
            raise invalid_args()
        dfilter[str(key)] = parsed
    if dfilter["RSSI"] is not None and dfilter["Pathloss"] is not None:
        raise invalid_args()
    return dfilter


def stop_session(adapter, state, client, keep_filter):
    """src/adapter.c discovery_stop / discovery_remove: the client leaves the discovery list (its
    filter stays for a later StartDiscovery unless it left the bus). When it was the last session:
    set_discovery_discoverable(false), discovery_cleanup (RSSI of found devices is invalidated and
    temporary devices that are not connectable are removed at once; the timeout argument is unused in
    5.66), then Discovering false (stop_discovery_complete)."""
    client.discovering = False
    if not (keep_filter and client.filter):
        state.clients.pop(client.sender, None)
    if any(c.discovering for c in state.clients.values()):
        return
    props = adapter.props[ADAPTER_IFACE]
    changed = {}
    if state.discovery_discoverable:
        state.discovery_discoverable = False
        props["Discoverable"] = changed["Discoverable"] = dbus.Boolean(False)
    discovery_cleanup(state)
    props["Discovering"] = changed["Discovering"] = dbus.Boolean(False)
    emit_changed(adapter, ADAPTER_IFACE, changed)


def discovery_cleanup(state):
    for path in devices_of(state):
        device = mockobject.objects[path]
        if is_temporary(device) and not getattr(device, "connectable", True):
            remove_device(path)
        elif path in state.found and "RSSI" in device.props[DEVICE_IFACE]:
            # invalidate_rssi_and_tx_power: RSSI 0 means "no RSSI", so the property disappears.
            del device.props[DEVICE_IFACE]["RSSI"]
            emit_changed(device, DEVICE_IFACE, {}, ["RSSI"])
    state.found.clear()


def set_powered(adapter, on, ok):
    """src/adapter.c property_set_mode(MGMT_SETTING_POWERED). Powering off first clears
    discoverable and removes all temporary devices (remove_temporary_devices), replies, then
    adapter_stop ends every discovery session and drops every filter (remove_discovery_list), runs
    discovery_cleanup and signals Discovering false (always) with Powered. Advertising
    registrations are not touched: adapter_stop does not call into src/advertising.c, the kernel
    keeps the instances and advertises them again at power on, so they stay registered and
    ActiveInstances keeps its value. Powering on only signals Powered."""
    state = ADAPTERS[adapter.path]
    props = adapter.props[ADAPTER_IFACE]
    changed = {}
    if not on:
        if props["Discoverable"]:
            props["Discoverable"] = changed["Discoverable"] = dbus.Boolean(False)
        state.discovery_discoverable = False
        for path in devices_of(state):
            if is_temporary(mockobject.objects[path]):
                remove_device(path)
    ok()
    if not on:
        state.clients.clear()
        discovery_cleanup(state)
        props["Discovering"] = changed["Discovering"] = dbus.Boolean(False)
    props["Powered"] = changed["Powered"] = dbus.Boolean(on)
    emit_changed(adapter, ADAPTER_IFACE, changed)


def sender_left(name, old_owner, new_owner):
    """A client left the bus. src/advertising.c client_disconnect_cb -> client_remove for its
    registrations; src/adapter.c discovery_disconnect -> discovery_stop for its session and
    filter."""
    if new_owner or not name.startswith(":"):
        return
    for path, state in list(ADAPTERS.items()):
        adapter = mockobject.objects[path]
        mine = [r for r in state.regs if r.sender == name]
        for reg in mine:
            state.regs.remove(reg)
            state.log.append(("dropped", reg.sender, reg.path))
        if mine:
            sync_instances(adapter, state, emit=True)
        client = state.clients.get(name)
        if client and client.discovering:
            stop_session(adapter, state, client, keep_filter=False)
        elif client:
            del state.clients[name]


# --- devices -----------------------------------------------------------------------------------


class Device(mockobject.DBusMockObject):
    """A Device1 object. `connectable` is the bearer state bluetoothd keeps from the last report
    (device_update_last_seen); FD6F adverts are ADV_NONCONN_IND, so SeeAdvert devices are not."""

    connectable = False
    paired = False
    connected = False


def is_temporary(device):
    # src/device.c: a device stays temporary until it is paired, bonded, trusted or connected.
    props = device.props.get(DEVICE_IFACE, {})
    return not any(bool(props.get(k, False)) for k in ("Paired", "Bonded", "Trusted", "Connected"))


def device_path(state, address):
    return f"{state.path}/dev_{address.upper().replace(':', '_')}"


def devices_of(state):
    prefix = state.path + "/dev_"
    return [p for p in mockobject.objects if p.startswith(prefix)]


def new_device(state, address, address_type, extra):
    """src/device.c device_properties for a device that has only been seen: Name, Class,
    Appearance, Icon, RSSI, ServiceData, ManufacturerData and TxPower are absent until known, and
    Alias falls back to the address with dashes (dev_property_get_alias)."""
    path = device_path(state, address)
    props = {
        "Address": dbus.String(address.upper()),
        "AddressType": dbus.String(address_type),
        "Alias": dbus.String(address.upper().replace(":", "-")),
        "Paired": dbus.Boolean(False),
        "Bonded": dbus.Boolean(False),
        "Trusted": dbus.Boolean(False),
        "Blocked": dbus.Boolean(False),
        "LegacyPairing": dbus.Boolean(False),
        "Connected": dbus.Boolean(False),
        "UUIDs": dbus.Array([], signature="s"),
        "Adapter": dbus.ObjectPath(state.path),
        "ServicesResolved": dbus.Boolean(False),
    }
    props.update(extra)
    root().AddObject(path, DEVICE_IFACE, props, [
        ("CancelPairing", "", "", ""),
        ("Connect", "", "", bluez5.Connect),
        ("ConnectProfile", "s", "", ""),
        ("Disconnect", "", "", bluez5.Disconnect),
        ("DisconnectProfile", "s", "", ""),
        ("Pair", "", "", bluez5.Pair),
    ], mock_class=Device)
    return mockobject.objects[path]


def remove_device(path):
    interfaces = list(mockobject.objects[path].props)
    root().RemoveObject(path)
    emit_removed(path, interfaces)


@dbus.service.method(MOCK_IFACE, in_signature="sss", out_signature="s")
def AddDevice(self, adapter_name, address, alias):
    """As the stock AddDevice (an unpaired device with a name, RSSI -79, InterfacesAdded), but with
    bluetoothd's property set and types: no empty aa{sv} ServiceData or aa{qv} ManufacturerData (an
    empty one is absent in bluetoothd), no experimental AdvertisingFlags/AdvertisingData. It counts
    as seen over a connectable advert, so stopping discovery keeps it."""
    _, state = lookup(adapter_name)
    if device_path(state, address) in mockobject.objects:
        raise error("org.freedesktop.DBus.Mock.NameError", f"device {address} already exists")
    extra = {"RSSI": dbus.Int16(-79), "AddressType": dbus.String("public")}
    if alias:
        extra.update({"Name": dbus.String(alias), "Alias": dbus.String(alias)})
    device = new_device(state, address, "public", extra)
    device.connectable = True
    emit_added(device.path, device.props)
    return device.path


def kernel_filter(clients):
    """Linux net/bluetooth/mgmt.c is_filter_match on the merged filter bluetoothd sends with Start
    Service Discovery (src/adapter.c merge_discovery_filters): an RSSI threshold only when every
    filtering client has one and no client runs unfiltered (the lowest wins), UUIDs only when every
    filtering client lists some. With a threshold, reports below it and reports with RSSI 127
    (not available) are dropped. Returns (rssi threshold or None, uuid set or None)."""
    filters = [c.filter for c in clients]
    if any(f is None for f in filters):
        return None, None
    thresholds = [f["RSSI"] for f in filters]
    threshold = None if None in thresholds else min(thresholds)
    uuids = None if any(not f["UUIDs"] for f in filters) else {u for f in filters for u in f["UUIDs"]}
    return threshold, uuids


def client_filter_match(clients, rssi):
    """src/adapter.c is_filter_match: some discovering client without a filter, or whose UUIDs are
    empty or include FD6F and whose proximity test passes. The proximity test is as written in
    5.66: it passes when RSSI is unset, or the report is at least RSSI, or Pathloss is unset; and
    the advert carries no TX power, so that is the whole test."""
    for client in clients:
        f = client.filter
        if f is None:
            return True
        if f["UUIDs"] and FD6F not in f["UUIDs"]:
            continue
        if f["RSSI"] is None or f["RSSI"] <= rssi or f["Pathloss"] is None:
            return True
    return False


@dbus.service.method(MOCK_IFACE, in_signature="su", out_signature="")
def SeeAdvertsWhenStopping(self, adapter_name, count):
    """Test control: the next StopDiscovery on the adapter first signals `count` sightings of
    distinct addresses and RPIs, as bluetoothd passes on the reports the kernel delivered before
    the stop completed."""
    _, state = lookup(adapter_name)
    state.adverts_on_stop = int(count)


@dbus.service.method(MOCK_IFACE, in_signature="sssayn", out_signature="b")
def SeeAdvert(self, adapter_name, address, address_type, service_data, rssi):
    """What bluetoothd does with an LE advertising report that carries Flags 0x1A, the FD6F service
    UUID list and FD6F service data (src/adapter.c btd_adapter_update_found_device). Returns true
    when the sighting reached Device1 (InterfacesAdded with RSSI and ServiceData, or a
    PropertiesChanged); false when the kernel or bluetoothd dropped it or nothing changed."""
    adapter, state = lookup(adapter_name)
    if address_type not in ("public", "random"):
        raise error("org.freedesktop.DBus.Error.InvalidArgs", "address_type must be public or random")
    aprops = adapter.props[ADAPTER_IFACE]
    clients = [c for c in state.clients.values() if c.discovering]
    if not (aprops["Powered"] and aprops["Discovering"] and clients):
        raise error(MOCK_IFACE + ".NotDiscovering", f"{adapter_name} is not discovering")
    rssi = int(rssi)
    address = str(address).upper()  # ba2str prints upper-case hex

    # LE is scanned unless every session asked for Transport bredr (merge_discovery_filters).
    if all(c.filter and c.filter["Transport"] == "bredr" for c in clients):
        return False
    threshold, uuids = kernel_filter(clients)
    if threshold is not None and (rssi == 127 or rssi < threshold):
        return False
    if uuids is not None and FD6F not in uuids:
        return False

    # device_is_discoverable: with any filter active every report counts, otherwise the Flags must
    # say discoverable (0x1A has LE General Discoverable). A Pattern narrows it to matching addresses.
    filtered = any(c.filter is not None for c in clients)
    discoverable = True
    patterns = [c.filter["Pattern"] for c in clients if c.filter and c.filter["Pattern"] is not None]
    if patterns:
        discoverable = any(address.startswith(p) for p in patterns)

    path = device_path(state, address)
    device = mockobject.objects.get(path)
    created = device is None
    if created:
        if not discoverable:
            return False
        # adapter_create_device puts the object on the bus before the filter check below.
        device = new_device(state, address, address_type, {})
    props = device.props[DEVICE_IFACE]
    device.connectable = False  # device_update_last_seen with ADV_NONCONN_IND

    if not discoverable or (filtered and not client_filter_match(clients, rssi)):
        if created:
            emit_added(path, device.props)  # a bare device, as bluetoothd publishes it
        return False

    changed, invalidated = {}, []
    # device_set_rssi_with_delta: with a filter active the delta is 0 (every report is signalled,
    # even an unchanged value); without, only a change of RSSI_THRESHOLD (8) dB or more. RSSI 0 means
    # none. RSSI 127 from the controller is passed on by the kernel for LE and kept as 127.
    old = int(props.get("RSSI", 0))
    delta = 0 if filtered else 8
    if (rssi == 0 or old == 0) and rssi != old or (rssi != 0 and old != 0 and abs(rssi - old) >= delta):
        if rssi == 0:
            props.pop("RSSI", None)
            invalidated.append("RSSI")
        else:
            props["RSSI"] = changed["RSSI"] = dbus.Int16(rssi)
    # device_add_eir_uuids: UUIDs changes only when a new UUID appears.
    if FD6F not in props["UUIDs"]:
        props["UUIDs"] = changed["UUIDs"] = dbus.Array(list(props["UUIDs"]) + [FD6F], signature="s")
    # device_set_service_data: with DuplicateData true in any session's filter the data is cleared
    # and re-added, so it is signalled every time; otherwise bt_ad_add_service_data signals only new
    # bytes. Data longer than 27 bytes does not fit an AD structure and is ignored.
    duplicate = any(c.filter and c.filter["DuplicateData"] for c in clients)
    data = bytes(service_data)
    current = props.get("ServiceData", {})
    if duplicate and current:
        props.pop("ServiceData")
        current = {}
    if len(data) <= 27 and (duplicate or bytes(current.get(FD6F, b"\xff" * 40)) != data):
        value = dbus.Array(data, signature="y")
        props["ServiceData"] = changed["ServiceData"] = dbus.Dictionary({FD6F: value}, signature="sv")
    state.found.add(path)

    if created:
        emit_added(path, device.props)
        return True
    if changed or invalidated:
        # gdbus coalesces one report's changes into one PropertiesChanged.
        emit_changed(device, DEVICE_IFACE, changed, invalidated)
        return True
    return False


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="")
def ExpireDevices(self, adapter_name):
    """What bluetoothd's temporary-device timer (TemporaryTimeout, 30 s, src/device.c
    set_temporary_timer) does, for every temporary device at once: InterfacesRemoved."""
    _, state = lookup(adapter_name)
    for path in devices_of(state):
        if is_temporary(mockobject.objects[path]):
            remove_device(path)


# --- test controls ---------------------------------------------------------------------------------


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="a(soa{sv})")
def GetAdvertisements(self, adapter_name):
    """Registered advertisements: sender, path and the properties read from the client."""
    _, state = lookup(adapter_name)
    return dbus.Array([(r.sender, dbus.ObjectPath(r.path), dbus.Dictionary(r.props, signature="sv"))
                       for r in state.regs if r.active], signature="(soa{sv})")


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="a(sso)")
def GetRegistrationLog(self, adapter_name):
    """(event, sender, path) since AddAdapter; event is register, unregister, release or dropped."""
    _, state = lookup(adapter_name)
    return dbus.Array([(e, s, dbus.ObjectPath(p)) for e, s, p in state.log], signature="(sso)")


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="as")
def GetRegistrationRefusals(self, adapter_name):
    """"name: message" of every RegisterAdvertisement refused since AddAdapter, in order: a test
    compares its client's retries with them, and a refusal it did not inject is named."""
    _, state = lookup(adapter_name)
    return dbus.Array(state.refusals, signature="s")


@dbus.service.method(MOCK_IFACE, in_signature="sssu", out_signature="")
def FailNextRegistrations(self, adapter_name, error_name, message, count):
    """The next `count` RegisterAdvertisement calls read the properties and then fail with this."""
    _, state = lookup(adapter_name)
    state.fail_register = [str(error_name), str(message), int(count)]


@dbus.service.method(MOCK_IFACE, in_signature="sssu", out_signature="")
def FailNextUnregistrations(self, adapter_name, error_name, message, count):
    """The next `count` UnregisterAdvertisement calls of a registered path fail with this and keep it."""
    _, state = lookup(adapter_name)
    state.fail_unregister = [str(error_name), str(message), int(count)]


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="")
def ReleaseAdvertisements(self, adapter_name):
    """Calls Release() on every registered advertisement without waiting and drops them, as
    bluetoothd does when it stops managing them (src/advertising.c client_destroy)."""
    adapter, state = lookup(adapter_name)
    before = len(state.regs)
    release_all(state)
    if len(state.regs) != before:
        sync_instances(adapter, state, emit=True)


@dbus.service.method(MOCK_IFACE, in_signature="sy", out_signature="")
def SetSupportedInstances(self, adapter_name, count):
    """The controller's number of advertising instances (max_ads, from MGMT Read Advertising
    Features). SupportedInstances then reports count minus the registrations, as bluetoothd does."""
    adapter, state = lookup(adapter_name)
    state.max_ads = int(count)
    sync_instances(adapter, state, emit=True)


@dbus.service.method(MOCK_IFACE, in_signature="s", out_signature="a(sba{sv})")
def GetDiscoverySessions(self, adapter_name):
    """(sender, discovering, filter as given to SetDiscoveryFilter after parsing; UUIDs 128-bit)."""
    _, state = lookup(adapter_name)
    sessions = []
    for c in state.clients.values():
        f = {}
        for key, value in (c.filter or {}).items():
            if value is None:
                continue
            if key == "UUIDs":
                f[key] = dbus.Array(value, signature="s")
            elif key in ("RSSI",):
                f[key] = dbus.Int16(value)
            elif key == "Pathloss":
                f[key] = dbus.UInt16(value)
            elif isinstance(value, bool):
                f[key] = dbus.Boolean(value)
            else:
                f[key] = dbus.String(value)
        sessions.append((c.sender, dbus.Boolean(c.discovering), dbus.Dictionary(f, signature="sv")))
    return dbus.Array(sessions, signature="(sba{sv})")


def load(mock, parameters):
    # /org/bluez with AgentManager1 and ProfileManager1, as the stock template makes it.
    bluez5.load(mock, parameters)
    mock.bus_name.get_bus().add_signal_receiver(
        sender_left, "NameOwnerChanged", "org.freedesktop.DBus", "org.freedesktop.DBus", "/org/freedesktop/DBus")
