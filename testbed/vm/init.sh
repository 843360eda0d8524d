#!/bin/sh
# PID 1 of the vm-test guest: two virtual LE controllers, real bluetoothd, gaend on hci1 through
# the kernel's user channel, bluetoothd's discovery on hci0. Prints "VM-TEST PASS" or
# "VM-TEST FAIL reason", then powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /run/dbus
finish() {
    echo "VM-TEST $*"
    sync
    echo o > /proc/sysrq-trigger
    sleep 10
}
for module in bluetooth hci_vhci algif_skcipher algif_hash ecdh_generic cmac; do modprobe "$module" 2>/dev/null; done
dbus-daemon --system --fork || finish FAIL "dbus-daemon did not start"
btvirt -L -l2 >/tmp/btvirt.log 2>&1 &
sleep 2
bluetoothd=$(ls /usr/libexec/bluetooth/bluetoothd /usr/lib/bluetooth/bluetoothd 2>/dev/null | head -1)
"$bluetoothd" -n -E >/tmp/bluetoothd.log 2>&1 &
sleep 2
echo "VM controllers: $(ls /sys/class/bluetooth | tr '\n' ' ')"

# hci1 to gaend: the user channel needs the adapter down in BlueZ.
btmgmt --index 1 power off >/dev/null 2>&1
btmgmt --index 0 power on >/dev/null 2>&1
# hci0 advertises the official vectors' service data through bluetoothd, as an app would.
python3 /opt/gaend/advertise.py hci0 20 >/tmp/advertise.log 2>&1 &
sleep 2

export LD_LIBRARY_PATH=/opt/gaend/lib
/opt/gaend/gaend --radio hci:hci1 --data-dir /tmp/gaend --scan-window 1 --scan-interval 1-1 >/tmp/gaend.log 2>&1 &
gaend=$!
sleep 4
# Discovery on hci0, restarted a few times (btvirt reports only on scan-enable edges).
python3 /opt/gaend/discover.py hci0 4 >/tmp/discover.log 2>&1
kill -TERM "$gaend"
wait "$gaend"
status=$?
sed 's/^/  gaend: /' /tmp/gaend.log | head -20
sed 's/^/  discovery: /' /tmp/discover.log | head -10
sed 's/^/  advertiser: /' /tmp/advertise.log | head -5
stats=$(/opt/gaend/gaenctl tools log stats --data-dir /tmp/gaend 2>&1)
echo "$stats" | sed 's/^/  log: /'
aggregates=$(echo "$stats" | awk 'NR == 2 && $2 ~ /^[0-9]+$/ { print $2 }')
if [ "$status" != 0 ]; then
    finish FAIL "gaend exited $status"
elif ! grep -q "controller ready" /tmp/gaend.log; then
    finish FAIL "gaend did not get hci1 ready"
elif ! grep -q "^FOUND" /tmp/discover.log; then
    finish FAIL "bluetoothd's discovery on hci0 did not see gaend's advertisement"
elif [ "${aggregates:-0}" -lt 1 ]; then
    finish FAIL "gaend logged no advertiser from hci0"
elif ! /opt/gaend/gaenctl tools log export --data-dir /tmp/gaend | grep -q 8be6cd371c5c891604bfbe49df845096; then
    finish FAIL "gaend's log lacks the RPI hci0 advertises"
else
    finish PASS
fi
