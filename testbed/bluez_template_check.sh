#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs testbed/bluez_template_check.py against testbed/bluez_template.py on a private bus:
# starts dbus-daemon and the mock, waits for org.bluez, runs the check, and stops exactly the two
# processes it started. Usage: testbed/bluez_template_check.sh [PYTHON] (default .venv-dbusmock).
set -eu
# The check waits out the mock's property-read bound once; a short one keeps it quick.
export GAEND_MOCK_GETALL_TIMEOUT="${GAEND_MOCK_GETALL_TIMEOUT:-5}"

here=$(cd "$(dirname "$0")" && pwd)
python=${1:-$here/../.venv-dbusmock/bin/python}
dir=$(mktemp -d)
bus_pid=""
mock_pid=""

cleanup() {
	# Only the PIDs started here, never by name.
	[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
	[ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

cat >"$dir/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/bus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF

dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile --print-address=1 >"$dir/address" 2>"$dir/bus.log" &
bus_pid=$!
tries=0
until [ -s "$dir/address" ]; do
	tries=$((tries + 1)); [ $tries -lt 100 ] || { echo "FAIL dbus-daemon did not start"; exit 1; }
	sleep 0.05
done
DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$dir/address")
export DBUS_SYSTEM_BUS_ADDRESS

"$python" -m dbusmock --system -t "$here/bluez_template.py" >"$dir/mock.log" 2>&1 &
mock_pid=$!
tries=0
until gdbus call --address "$DBUS_SYSTEM_BUS_ADDRESS" -d org.freedesktop.DBus -o /org/freedesktop/DBus \
	-m org.freedesktop.DBus.NameHasOwner org.bluez 2>/dev/null | grep -q true; do
	tries=$((tries + 1)); [ $tries -lt 200 ] || { echo "FAIL org.bluez did not appear"; cat "$dir/mock.log"; exit 1; }
	kill -0 "$mock_pid" 2>/dev/null || { echo "FAIL the mock exited"; cat "$dir/mock.log"; exit 1; }
	sleep 0.05
done

status=0
"$python" "$here/bluez_template_check.py" || status=$?
if [ $status -ne 0 ]; then
	echo "--- mock log (tail)"
	tail -n 40 "$dir/mock.log"
fi
exit $status
