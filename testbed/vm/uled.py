#!/usr/bin/env python3
"""Makes a userspace LED of the kernel's LED class with uleds (/dev/uleds: struct uleds_user_dev,
a 64-byte name and an int max_brightness) and keeps it while it runs: the kernel creates
/sys/class/leds/NAME, runs its triggers on it and hands every change of brightness to this
process as an int. Each change is written to EVENTS as "MONOTONIC_SECONDS BRIGHTNESS", so the
stage can see the blinking the kernel did, not only the attributes gaend wrote.
Prints "READY" once the LED exists. Usage: uled.py NAME EVENTS"""
import os
import struct
import sys
import time

name, events = sys.argv[1], sys.argv[2]
device = os.open('/dev/uleds', os.O_RDWR)
os.write(device, struct.pack('64si', name.encode(), 1))
print('READY', flush=True)
with open(events, 'w', buffering=1) as out:
    while True:
        value = os.read(device, 4)
        if len(value) != 4:
            break
        out.write(f'{time.monotonic():.3f} {struct.unpack("i", value)[0]}\n')
