#!/bin/sh
# Run by gaen-check.service in deb-test's systemd boot: the package as installed, gaend started by
# systemd in its unit's sandbox as user gaend, with `indicator-led = ACT` on a uleds LED named ACT
# that the package's udev rule gave to group gaend. gaend (radio none: "paused") must turn the
# LED off (trigger none, brightness 0) through the unit's ReadWritePaths, and put back the
# heartbeat trigger found before it at `systemctl stop`; and, with deb-test's busy log, detect its
# exposure under the unit's MemoryMax without being killed. Prints "GAEN-SYSTEMD PASS ..." or
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
pid=$(systemctl show -p MainPID --value gaend)
user=$(ps -o user= -p "$pid" 2>/dev/null)
# A busy log (deb-test put it in /var/lib/gaend): one detection under the unit's MemoryMax, the key
# files served on loopback. The exposure must be found by the same gaend, not a restarted one.
detected="skipped (no busy log)"
if [ -d /opt/gaend-check/busy ]; then
    day=$(cat /opt/gaend-check/busy/exposure-day)
    python3 -m http.server 8000 --bind 127.0.0.1 --directory /opt/gaend-check/busy >/dev/null 2>&1 &
    server=$!
    gaenctl enable >/dev/null 2>&1
    started=$(date +%s)
    answer=$(timeout 600 gaenctl detect 2>&1 | grep -v '^progress' | head -3 | tr '\n' ' ')
    took=$(( $(date +%s) - started ))
    kill "$server"
    cgroup=/sys/fs/cgroup$(cut -d: -f3 "/proc/$pid/cgroup" 2>/dev/null)
    limit=$(cat "$cgroup/memory.max" 2>/dev/null)
    peak=$(cat "$cgroup/memory.peak" 2>/dev/null)
    kills=$(sed -n 's/^oom_kill //p' "$cgroup/memory.events" 2>/dev/null)
    hwm=$(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
    after=$(systemctl show -p MainPID --value gaend)
    detected="[$answer] in $took s; memory.max $limit, memory.peak $peak, oom_kill ${kills:-?}, VmHWM $hwm"
    case $answer in
        "exposure on $day"*) [ "$after" = "$pid" ] && [ "${kills:-0}" = 0 ] || busy_failure="gaend was killed or restarted ($pid then $after): $detected" ;;
        *) busy_failure="no exposure on $day found: $detected" ;;
    esac
fi
say "  systemd: busy detection $detected"
systemctl stop gaend
stopped=$(shows | cut -d' ' -f1)
say "  systemd: gaend $state as ${user:-?}; ACT ($given): while gaend ran [$running], after systemctl stop [$stopped]"
if [ "$state" != active ]; then
    finish FAIL "gaend.service is $state"
elif [ "$given" != "gaend:-rw-rw---- gaend:-rw-rw---- " ]; then
    finish FAIL "the package's udev rule did not give group gaend the LED alone: $given"
elif [ "$running" != "none 0" ]; then
    finish FAIL "under its unit gaend did not turn the LED off: [$running]"
elif journalctl -b -u gaend --no-pager -o cat | grep -q "indicator LED cannot be written\|refused a value"; then
    finish FAIL "gaend could not write the LED in its sandbox"
elif [ -n "${busy_failure:-}" ]; then
    finish FAIL "busy detection: $busy_failure"
elif [ "$stopped" != heartbeat ]; then
    finish FAIL "after systemctl stop the trigger is [$stopped], not heartbeat"
fi
finish PASS "(gaend as ${user:-?}, LED ACT off while it ran, heartbeat back after stop; busy detection $detected)"
