#!/bin/sh
# PID 1 of the vm-test guest: two virtual LE controllers and real bluetoothd. The wall clock is
# set a day behind at boot, as fake-hwclock restores a stale time on a board with no RTC, and no
# time daemon runs. Stage 1: gaend on hci1 through the kernel's user channel, bluetoothd's
# discovery on hci0. Stage 2: gaend on hci1 through bluetoothd (`--radio bluez:hci1`), the same
# checks. Both vouch for the clock (`--clock system`). Stage 3: the clock (`clock =
# synchronized`): gaend scans and does not advertise, then a time daemon's step and
# synchronization (clock.py) make it advertise within 2 s on the true interval, with what it heard
# before in the contact log at the true times. Prints "VM-TEST PASS" or "VM-TEST FAIL reason",
# then powers off.
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
date -s "@$(( $(date +%s) - 86400 ))" >/dev/null
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
/opt/gaend/gaend --clock system --radio hci:hci1 --bus none --enable true --data-dir /tmp/gaend --scan-window 1 --scan-interval 1-1 >/tmp/gaend.log 2>&1 &
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
/opt/gaend/gaend --clock system --radio bluez:hci1 --bus none --enable true --data-dir /tmp/gaend-bluez --scan-window 1 --scan-interval 1-1 --rotation-interval 3-3 \
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

# Stage 3: the clock, a day behind, not synchronized; gaend as it ships (clock = synchronized).
btmgmt --index 1 power off >/dev/null 2>&1
python3 /opt/gaend/advertise.py hci0 60 >/tmp/advertise3.log 2>&1 &
sleep 2
started=$(date +%s)
/opt/gaend/gaend --radio hci:hci1 --bus none --enable true --data-dir /tmp/gaend-clock --scan-window 1 --scan-interval 1-1 --log-level debug \
    >/tmp/gaend-clock.log 2>&1 &
gaend=$!
sleep 8
python3 /opt/gaend/discover.py hci0 3 >/tmp/discover3.log 2>&1
held=$(stat -c %s /tmp/gaend-clock/held-sightings 2>/dev/null || echo 0)
before_step=$(grep -c "advertising rotated" /tmp/gaend-clock.log)
python3 /opt/gaend/clock.py 86400 >/tmp/clock.log 2>&1
stepped=$(date +%s)
up0=$(cut -d' ' -f1 /proc/uptime)
tries=0
while ! grep -q "advertising rotated" /tmp/gaend-clock.log && [ "$tries" -lt 100 ]; do sleep 0.05; tries=$((tries + 1)); done
up1=$(cut -d' ' -f1 /proc/uptime)
advertised_after=$(awk -v a="$up0" -v b="$up1" 'BEGIN { printf "%.2f", b - a }')
interval=$(grep "advertising rotated" /tmp/gaend-clock.log | head -1 | sed -n 's/.*interval=\([0-9]*\).*/\1/p')
sleep 3
python3 /opt/gaend/discover.py hci0 4 >/tmp/discover3b.log 2>&1
kill -TERM "$gaend"
wait "$gaend"
status=$?
sed 's/^/  gaend: /' /tmp/gaend-clock.log | grep -v " debug " | head -16
sed 's/^/  clock: /' /tmp/clock.log
# The test advertiser's sightings: when gaend's log says they were heard.
heard=$(/opt/gaend/gaenctl tools log export --data-dir /tmp/gaend-clock | grep 8be6cd371c5c891604bfbe49df845096 | awk '{ print $1 }' \
    | while read -r time; do date -d "$time" +%s; done | sort -n)
earliest=$(echo "$heard" | head -1)
before=$(echo "$heard" | awk -v s="$stepped" '$1 != "" && $1 < s' | wc -l)
echo "  clock: started $started (a day behind), stepped at $stepped; held $held bytes; advertised ${advertised_after} s after the step on interval $interval; heard before the step: $before, earliest $earliest"
if [ "$status" != 0 ]; then
    failure="gaend exited $status"
elif [ "$before_step" != 0 ] || grep -q "^FOUND" /tmp/discover3.log; then
    failure="gaend advertised on an unsynchronized clock"
elif [ "$held" -le 46 ]; then
    failure="nothing was held while the clock was not trusted"
elif ! awk -v t="$advertised_after" 'BEGIN { exit !(t <= 2.0) }' || ! grep -q "advertising rotated" /tmp/gaend-clock.log; then
    failure="gaend did not advertise within 2 s of the step (${advertised_after} s)"
elif [ "$interval" != $((stepped / 600)) ] && [ "$interval" != $(((stepped + 2) / 600)) ]; then
    failure="gaend advertised interval $interval, not the true clock's $((stepped / 600))"
elif ! grep -q "^FOUND" /tmp/discover3b.log; then
    failure="bluetoothd's discovery on hci0 did not see gaend's advertisement after the step"
elif [ "$before" -lt 1 ]; then
    failure="no sighting heard before the step is in the contact log"
elif [ "$earliest" -lt $((started + 86400 - 2)) ]; then
    failure="a sighting is filed at $earliest, before the true start $((started + 86400))"
fi
[ -z "$failure" ] || finish FAIL "clock: $failure"
echo "VM stage clock: PASS (advertised ${advertised_after} s after the step; $before sightings heard before it re-timed)"

# Stage 4: the status LED on a real LED of the kernel's LED class: the emulated PS/2 keyboard's
# scroll-lock LED (input-leds). Debian's kernel has no uleds (CONFIG_LEDS_USER is not set).
modprobe ledtrig-timer 2>/dev/null
led=$(ls /sys/class/leds 2>/dev/null | grep scrolllock | head -1)
[ -n "$led" ] || finish FAIL "led: no LED in /sys/class/leds ($(ls /sys/class/leds 2>&1 | tr '\n' ' '))"
attribute() { cat "/sys/class/leds/$led/$1" 2>/dev/null; }
trigger() { attribute trigger | sed -n 's/.*\[\([^]]*\)\].*/\1/p'; }
shows() { echo "$(trigger) $(attribute delay_on) $(attribute delay_off) $(attribute brightness)"; }
until_shows() { tries=0; while ! shows | grep -q "$1" && [ "$tries" -lt 150 ]; do sleep 0.1; tries=$((tries + 1)); done; shows; }
previous=$(trigger)
btmgmt --index 1 power on >/dev/null 2>&1
/opt/gaend/gaend --clock system --radio bluez:hci1 --bus none --enable true --data-dir /tmp/gaend-led --scan-window 1 --scan-interval 1-1 \
    --indicator-led "$led" >/tmp/gaend-led.log 2>&1 &
gaend=$!
on_air=$(until_shows "^timer 50 2950")
btmgmt --index 1 power off >/dev/null 2>&1
radio_off=$(until_shows "^none .* 0$")
kill -TERM "$gaend"
wait "$gaend"
status=$?
stopped=$(trigger)
grep -i "indicator\|radio status" /tmp/gaend-led.log | sed 's/^/  gaend: /' | head -8
echo "  led: $led: before gaend [$previous]; on the air [$on_air]; radio off [$radio_off]; after stop [$stopped]"
if [ "$status" != 0 ]; then
    failure="gaend exited $status"
elif ! echo "$on_air" | grep -q "^timer 50 2950"; then
    failure="on the air the LED shows [$on_air], not the timer at 50/2950 ms"
elif ! echo "$radio_off" | grep -q "^none .* 0$"; then
    failure="with the radio off the LED shows [$radio_off], not off"
elif [ "$stopped" != "$previous" ]; then
    failure="after stop the LED's trigger is [$stopped], not [$previous] as before"
fi
[ -z "$failure" ] || finish FAIL "led: $failure"
echo "VM stage led: PASS ($led)"
finish PASS
