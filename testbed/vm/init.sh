#!/bin/sh
# PID 1 of the vm-test guest: two virtual LE controllers and real bluetoothd. Stage 1: gaend on
# hci1 through the kernel's user channel, bluetoothd's discovery on hci0. Stage 2: gaend on hci1
# through bluetoothd (`--radio bluez:hci1`), the same checks. Prints "VM-TEST PASS" or
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
/opt/gaend/gaend --radio hci:hci1 --bus none --enable true --data-dir /tmp/gaend --scan-window 1 --scan-interval 1-1 >/tmp/gaend.log 2>&1 &
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
failure=""
if [ "$status" != 0 ]; then
    failure="gaend exited $status"
elif ! grep -q "controller ready" /tmp/gaend.log; then
    failure="gaend did not get hci1 ready"
elif ! grep -q "^FOUND" /tmp/discover.log; then
    failure="bluetoothd's discovery on hci0 did not see gaend's advertisement"
elif [ "${aggregates:-0}" -lt 1 ]; then
    failure="gaend logged no advertiser from hci0"
elif ! /opt/gaend/gaenctl tools log export --data-dir /tmp/gaend | grep -q 8be6cd371c5c891604bfbe49df845096; then
    failure="gaend's log lacks the RPI hci0 advertises"
fi
[ -z "$failure" ] || finish FAIL "hci: $failure"
echo "VM stage hci: PASS"

# Stage 2: hci1 back to bluetoothd, gaend beside it. bluetoothd and the kernel pick the address;
# discovery is restarted for every scan window, which is also what makes btvirt report.
btmgmt --index 1 power on >/dev/null 2>&1
python3 /opt/gaend/advertise.py hci0 30 >/tmp/advertise2.log 2>&1 &
sleep 2
/opt/gaend/gaend --radio bluez:hci1 --bus none --enable true --data-dir /tmp/gaend-bluez --scan-window 1 --scan-interval 1-1 --rotation-interval 3-3 \
    >/tmp/gaend-bluez.log 2>&1 &
gaend=$!
sleep 6
python3 /opt/gaend/discover.py hci0 6 >/tmp/discover2.log 2>&1
kill -TERM "$gaend"
wait "$gaend"
status=$?
sed 's/^/  gaend: /' /tmp/gaend-bluez.log | head -20
sed 's/^/  discovery: /' /tmp/discover2.log | head -10
stats=$(/opt/gaend/gaenctl tools log stats --data-dir /tmp/gaend-bluez 2>&1)
echo "$stats" | sed 's/^/  log: /'
# What hci0's discovery found other than the test advertiser: gaend's 20 bytes, through bluetoothd.
ours=$(grep "^FOUND" /tmp/discover2.log | grep -v 8be6cd371c5c891604bfbe49df845096 | head -1)
if [ "$status" != 0 ]; then
    failure="gaend exited $status"
elif ! grep -q "status=active" /tmp/gaend-bluez.log; then
    failure="gaend did not get active on bluetoothd"
elif [ -z "$ours" ]; then
    failure="bluetoothd's discovery on hci0 did not see gaend's advertisement from hci1"
elif ! /opt/gaend/gaenctl tools log export --data-dir /tmp/gaend-bluez | grep -q 8be6cd371c5c891604bfbe49df845096; then
    failure="gaend's log lacks the RPI hci0 advertises"
fi
[ -z "$failure" ] || finish FAIL "bluez: $failure"
echo "VM stage bluez: PASS ($ours)"
finish PASS
