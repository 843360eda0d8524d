#!/bin/sh
# Run by gaen-check.service in deb-test's systemd boot: the package as installed, gaend started by
# systemd in its unit's sandbox as user gaend, with `indicator-led = ACT` on a uleds LED named ACT
# that the package's udev rule gave to group gaend. gaend (radio none: "paused") must turn the
# LED off (trigger none, brightness 0) through the unit's ReadWritePaths, and put back the
# heartbeat trigger found before it at `systemctl stop`. Prints "GAEN-SYSTEMD PASS ..." or
# "GAEN-SYSTEMD FAIL reason" on the serial console, then powers off.
led=/sys/class/leds/ACT
say() { printf "\n%s\n" "$*" >/dev/ttyS0; }
finish() {
    journalctl -b -u gaend -u uled-act --no-pager -o cat 2>/dev/null | tail -15 | sed 's/^/  journal: /' >/dev/ttyS0
    say "GAEN-SYSTEMD $*"
    systemctl poweroff --no-block
    exit 0
}
shows() { echo "$(sed -n 's/.*\[\([^]]*\)\].*/\1/p' "$led/trigger") $(cat "$led/brightness")"; }
[ -e "$led/trigger" ] || finish FAIL "no LED ACT: $(ls /sys/class/leds | tr '\n' ' ')"
given=$(stat -c '%G:%A' "$led/trigger" "$led/brightness" | tr '\n' ' ')
tries=0
while [ "$(systemctl is-active gaend)" != active ] && [ "$tries" -lt 120 ]; do sleep 0.5; tries=$((tries + 1)); done
state=$(systemctl is-active gaend)
tries=0
while [ "$(shows)" != "none 0" ] && [ "$tries" -lt 60 ]; do sleep 0.5; tries=$((tries + 1)); done
running=$(shows)
user=$(ps -o user= -p "$(systemctl show -p MainPID --value gaend)" 2>/dev/null)
systemctl stop gaend
stopped=$(shows | cut -d' ' -f1)
say "  systemd: gaend $state as ${user:-?}; ACT ($given): while gaend ran [$running], after systemctl stop [$stopped]"
if [ "$state" != active ]; then
    finish FAIL "gaend.service is $state"
elif [ "$given" != "gaend:-rw-rw-r-- gaend:-rw-rw-r-- " ]; then
    finish FAIL "the package's udev rule did not give group gaend the LED: $given"
elif [ "$running" != "none 0" ]; then
    finish FAIL "under its unit gaend did not turn the LED off: [$running]"
elif journalctl -b -u gaend --no-pager -o cat | grep -q "indicator LED cannot be written\|refused a value"; then
    finish FAIL "gaend could not write the LED in its sandbox"
elif [ "$stopped" != heartbeat ]; then
    finish FAIL "after systemctl stop the trigger is [$stopped], not heartbeat"
fi
finish PASS "(gaend as ${user:-?}, LED ACT off while it ran, heartbeat back after stop)"
