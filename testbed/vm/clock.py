#!/usr/bin/env python3
"""What a time daemon does when it first hears the time (chrony's makestep, systemd-timesyncd's
first sync): steps the wall clock (clock_settime) by SECONDS, then tells the kernel the clock is
synchronized (adjtimex: STA_UNSYNC cleared, a small maximum and estimated error).
Usage: clock.py SECONDS"""
import ctypes
import sys
import time

ADJ_MAXERROR, ADJ_ESTERROR, ADJ_STATUS = 0x0004, 0x0008, 0x0010


class Timex(ctypes.Structure):
    # struct timex up to status; the kernel reads and writes the rest, which the padding holds.
    _fields_ = [('modes', ctypes.c_uint), ('offset', ctypes.c_long), ('freq', ctypes.c_long), ('maxerror', ctypes.c_long),
                ('esterror', ctypes.c_long), ('status', ctypes.c_int), ('rest', ctypes.c_byte * 200)]


time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME) + float(sys.argv[1]))
libc = ctypes.CDLL(None, use_errno=True)
state = Timex(modes=ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR, maxerror=20000, esterror=1000, status=0)
if libc.adjtimex(ctypes.byref(state)) < 0:
    sys.exit(f'adjtimex: errno {ctypes.get_errno()}')
check = Timex()
code = libc.adjtimex(ctypes.byref(check))
print(f'stepped {sys.argv[1]} s; adjtimex {code}, status {check.status:#x}, maxerror {check.maxerror} us', flush=True)
