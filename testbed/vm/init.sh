#!/bin/sh
# PID 1 of the vm-test guest: two virtual LE controllers and real bluetoothd. The wall clock is
# set a day behind at boot, as fake-hwclock restores a stale time on a board with no RTC, and no
# time daemon runs. Stage 1: gaend on hci1 through the kernel's user channel, bluetoothd's
# discovery on hci0. Stage 2: gaend on hci1 through bluetoothd (`--radio bluez:hci1`), the same
# checks. Both vouch for the clock (`--clock system`). Stage 3: the clock (`clock =
# synchronized`): gaend scans and does not advertise, then a time daemon's step and
# synchronization (clock.py) make it advertise within 2 s on the true interval, with what it heard
# before in the contact log at the true times. Stage 4: the status LED on a uleds LED, given to
# user gaend by the package's udev rule: on the air, radio off, exposed after a detection, the
# previous trigger back at stop. Prints "VM-TEST PASS" or "VM-TEST FAIL reason", then powers off.
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
# The kernel's monitor beside gaend (issue 36): btmon's capture of hci1, imported into a fresh log
# by gaenctl, must give gaend's own aggregates. It checks the capture reader against a capture tool
# nobody here wrote.
btmon -i hci1 -w /tmp/hci1.btsnoop >/tmp/btmon.log 2>&1 &
monitor=$!
sleep 1
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
kill -INT "$monitor" 2>/dev/null
wait "$monitor" 2>/dev/null
# Each aggregate as RPI, reports and strongest RSSI, in order: times are the two clocks' own.
/opt/gaend/gaenctl tools log import /tmp/hci1.btsnoop --data-dir /tmp/imported >/tmp/import.log 2>&1 \
    || finish FAIL "btmon: gaenctl tools log import: $(cat /tmp/import.log)"
sed 's/^/  import: /' /tmp/import.log
ours=$(/opt/gaend/gaenctl tools log export --data-dir /tmp/gaend | awk '{ print $2, $4, $7 }')
theirs=$(/opt/gaend/gaenctl tools log export --data-dir /tmp/imported | awk '{ print $2, $4, $7 }')
if [ -z "$ours" ] || [ "$ours" != "$theirs" ]; then
    echo "  gaend's aggregates:"; echo "$ours" | sed 's/^/    /' | head -10
    echo "  btmon's, imported:"; echo "$theirs" | sed 's/^/    /' | head -10
    finish FAIL "btmon: the capture imported does not give gaend's aggregates"
fi
echo "VM stage hci: PASS (btmon's capture imported: $(echo "$ours" | wc -l) aggregates, as gaend's log)"

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
advertiser=$!
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

# Stage 4: the status LED as the package ships it, on a real LED of the kernel's LED class: a
# userspace LED (uleds: Debian's kernel has CONFIG_LEDS_USER unset, so scripts/vm-test builds the
# module from Debian's linux-source for this kernel with its linux-headers). The package's udev
# rule, under a real systemd-udevd, gives group gaend the LED, and gaend runs as user gaend. The
# kernel's trigger and timings are read for each state: on the air; the radio gone; an exposure
# found by a detection (a key file served on loopback, its sightings planted); stopped,
# the previous trigger back. uled.py records the brightness the kernel sets, so the blinking itself
# is seen too.
kill "$advertiser" 2>/dev/null
wait "$advertiser" 2>/dev/null
insmod /opt/gaend/uleds.ko || finish FAIL "led: the uleds module did not load"
modprobe ledtrig-timer 2>/dev/null
modprobe ledtrig-heartbeat 2>/dev/null
adduser --system --group --no-create-home --home /nonexistent gaend >/dev/null 2>&1 || finish FAIL "led: no user gaend"
mkdir -p /etc/udev/rules.d
sed 's/KERNEL=="ACT"/KERNEL=="gaend-test"/' /opt/gaend/60-gaend-indicator-led.rules >/etc/udev/rules.d/60-gaend-indicator-led.rules
/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1 || finish FAIL "led: systemd-udevd did not start"
python3 /opt/gaend/uled.py gaend-test /tmp/uled.events >/tmp/uled.log 2>&1 &
uled=$!
tries=0
while [ ! -e /sys/class/leds/gaend-test/trigger ] && [ "$tries" -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
udevadm settle --timeout=10
led=gaend-test
attribute() { cat "/sys/class/leds/$led/$1" 2>/dev/null; }
trigger() { attribute trigger | sed -n 's/.*\[\([^]]*\)\].*/\1/p'; }
shows() { echo "$(trigger) $(attribute delay_on) $(attribute delay_off) $(attribute brightness)"; }
until_shows() { tries=0; while ! shows | grep -q "$1" && [ "$tries" -lt 150 ]; do sleep 0.1; tries=$((tries + 1)); done; shows; }
# Brightness changes the kernel made in the next $1 seconds.
blinks() { before=$(wc -l </tmp/uled.events); sleep "$1"; echo $(($(wc -l </tmp/uled.events) - before)); }
echo heartbeat >"/sys/class/leds/$led/trigger"
udevadm settle --timeout=10
previous=$(trigger)
given=$(stat -c '%G:%A' "/sys/class/leds/$led/trigger" "/sys/class/leds/$led/brightness" | tr '\n' ' ')
# The exposure: btvirt reports no RSSI (127, "not available") and the matcher drops such
# sightings as Google's does, so a fresh TEK's sightings of yesterday are planted in gaend's
# contact log (`gaenctl tools log append --tek`: 48 windows, -55 dBm), and a key file holding that
# key, signed with the key scripts/vm-test made, is served by python on loopback.
ip link set lo up
tek=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
yesterday=$(date -u -d yesterday +%F)
mkdir -p /tmp/served /tmp/gaend-led
/opt/gaend/gaenctl tools log append --data-dir /tmp/gaend-led --aggregates 48 --tek "$tek" --last-day "$yesterday" >/dev/null \
    || finish FAIL "led: gaenctl tools log append --tek failed"
python3 -c 'import base64, json, sys
print(json.dumps([{"key": base64.b64encode(bytes.fromhex(sys.argv[1])).decode(), "rollingStartNumber": int(sys.argv[2]) // 600,
                   "rollingPeriod": 144, "transmissionRisk": 0, "reportType": 1, "daysSinceOnsetOfSymptoms": 0}]))' \
    "$tek" "$(date -u -d "$yesterday" +%s)" >/tmp/keys.json
/opt/gaend/gaenctl tools export --keys /tmp/keys.json --private-key /opt/gaend/export.pem --key-id 999 --key-version v1 --region 999 \
    --out /tmp/served/keys-1.zip >/tmp/export.log 2>&1 || finish FAIL "led: gaenctl tools export: $(cat /tmp/export.log)"
echo keys-1.zip >/tmp/served/index.txt
# Every window counts (weights 100 at every attenuation, minimum score 1).
cat >/tmp/served/configuration.json <<'JSON'
{"attenuationDurationThresholds": [55, 63, 73], "immediateDurationWeight": 100, "nearDurationWeight": 100,
 "mediumDurationWeight": 100, "otherDurationWeight": 100, "infectiousnessWhenDaysSinceOnsetMissing": 1,
 "infectiousnessForDaysSinceOnsetOfSymptoms": {"0": 1}, "reportTypeConfirmedTestWeight": 100, "minimumWindowScore": 1}
JSON
python3 -m http.server 8321 --bind 127.0.0.1 --directory /tmp/served >/tmp/http.log 2>&1 &
http=$!
mkdir -p /tmp/bus
cat >/tmp/bus/bus.conf <<'XML'
<busconfig>
  <type>session</type>
  <listen>unix:path=/tmp/bus/socket</listen>
  <policy context="default">
    <allow user="*"/> <allow own="*"/>
    <allow send_type="method_call"/> <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/> <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/> <allow receive_type="method_return"/> <allow receive_type="error"/>
    <allow receive_type="signal"/> <allow send_destination="org.freedesktop.DBus"/>
  </policy>
</busconfig>
XML
chown -R gaend:gaend /tmp/bus /tmp/gaend-led
# setpriv execs what it runs, so $! is that program's PID.
setpriv --reuid=gaend --regid=gaend --init-groups dbus-daemon --config-file=/tmp/bus/bus.conf --nofork --nopidfile >/tmp/bus/log 2>&1 &
bus=$!
tries=0
while [ ! -S /tmp/bus/socket ] && [ "$tries" -lt 100 ]; do sleep 0.1; tries=$((tries + 1)); done
address=unix:path=/tmp/bus/socket
btmgmt --index 1 power on >/dev/null 2>&1
setpriv --reuid=gaend --regid=gaend --init-groups /opt/gaend/gaend --clock system --radio bluez:hci1 --bus "$address" --enable true --data-dir /tmp/gaend-led --scan-window 1 --scan-interval 1-1 \
    --region 999 --index-url http://127.0.0.1:8321/index.txt --export-key 999:v1:/opt/gaend/export.pub.pem \
    --exposure-configuration /tmp/served/configuration.json --indicator-led "$led" >/tmp/gaend-led.log 2>&1 &
gaend=$!
on_air=$(until_shows "^timer 50 2950")
on_air_blinks=$(blinks 6)
btmgmt --index 1 power off >/dev/null 2>&1
radio_off=$(until_shows "^none .* 0$")
btmgmt --index 1 power on >/dev/null 2>&1
back=$(until_shows "^timer 50 2950")
detected=$(/opt/gaend/gaenctl detect --bus "$address" 2>&1)
exposed=$(until_shows "^timer 100 100")
exposed_blinks=$(blinks 2)
# The timer's attributes are given to the group and kept from other users (the pattern is the answer).
udevadm settle --timeout=10
timer_given=$(stat -c '%G:%A' "/sys/class/leds/$led/delay_on" "/sys/class/leds/$led/delay_off" | tr '\n' ' ')
kill -TERM "$gaend"
wait "$gaend"
status=$?
stopped=$(trigger)
kill "$http" "$bus" "$uled" 2>/dev/null
grep -i "indicator\|radio status\|detection\|warning\|error" /tmp/gaend-led.log | sed 's/^/  gaend: /' | head -12
echo "$detected" | sed 's/^/  detect: /' | cut -c1-600 | head -4
echo "  led: $led ($given; delays $timer_given): before gaend [$previous]; on the air [$on_air], $on_air_blinks changes in 6 s; radio off [$radio_off];" \
    "radio back [$back]; exposed [$exposed], $exposed_blinks changes in 2 s; after stop [$stopped]"
if [ "$status" != 0 ]; then
    failure="gaend exited $status"
elif [ "$given" != "gaend:-rw-rw---- gaend:-rw-rw---- " ]; then
    failure="the udev rule did not give group gaend the LED alone: $given"
elif [ "$timer_given" != "gaend:-rw-rw---- gaend:-rw-rw---- " ]; then
    failure="the udev rule did not give group gaend the timer's delays alone: $timer_given"
elif ! echo "$on_air" | grep -q "^timer 50 2950"; then
    failure="on the air the LED shows [$on_air], not the timer at 50/2950 ms"
elif [ "$on_air_blinks" -lt 2 ] || [ "$on_air_blinks" -gt 8 ]; then
    failure="on the air the kernel changed the LED $on_air_blinks times in 6 s, not a blink every 3 s"
elif ! echo "$radio_off" | grep -q "^none .* 0$"; then
    failure="with the radio off the LED shows [$radio_off], not off"
elif ! echo "$back" | grep -q "^timer 50 2950"; then
    failure="with the radio back the LED shows [$back], not on the air"
elif ! echo "$detected" | grep -q "exposure on"; then
    failure="the detection found no exposure: $(echo "$detected" | head -2 | tr '\n' ' ')"
elif ! echo "$exposed" | grep -q "^timer 100 100"; then
    failure="after the exposure the LED shows [$exposed], not the timer at 100/100 ms"
elif [ "$exposed_blinks" -lt 8 ]; then
    failure="while exposed the kernel changed the LED $exposed_blinks times in 2 s, not 5 blinks a second"
elif [ "$stopped" != "$previous" ]; then
    failure="after stop the LED's trigger is [$stopped], not [$previous] as before"
fi
[ -z "$failure" ] || finish FAIL "led: $failure"
echo "VM stage led: PASS (on the air $on_air_blinks changes in 6 s, exposed $exposed_blinks in 2 s)"
finish PASS
