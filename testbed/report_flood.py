#!/usr/bin/env python3
"""A minimal H4 controller on a unix socket that floods its host with LE Advertising Reports.

For measuring how many reports gaend handles per second, not for behaviour: every command is
answered with success (and zeroed return parameters, so the controller offers only legacy
commands), and while scanning is enabled the socket is kept full of legacy reports carrying GAEN
frames from a crowd of RPIS distinct RPIs. Writes block when the host falls behind, so the rate is
the host's. On exit (SIGTERM or --seconds) it prints "SENT n" with the reports written; none is
written after a scan's disable is answered (nor before its enable arrives).

With --chunks-per-second R the flood is paced (R chunks of about 2,000 reports a second, or of
the RPIs once each when there are more), for tests that need a steady radio rather than a load.

Usage: report_flood.py [--rpis N] [--seconds S] [--chunks-per-second R] SOCKET_PATH
"""
import argparse
import os
import signal
import socket
import threading

LE_SET_SCAN_ENABLE = 0x200C


def report(index):
    rpi = index.to_bytes(4, 'big') * 4
    data = bytes.fromhex('02011a03036ffd17166ffd') + rpi + bytes.fromhex('72033874')
    # LE Meta, Advertising Report: one report, ADV_NONCONN_IND (3), random address, RSSI -60.
    body = bytes([0x02, 0x01, 0x03, 0x01]) + bytes([index & 0xFF, 1, 2, 3, 4, 0xC5]) + bytes([len(data)]) + data + bytes([0xC4])
    return bytes([0x04, 0x3E, len(body)]) + body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--rpis', type=int, default=200)
    parser.add_argument('--seconds', type=float, default=60)
    parser.add_argument('--chunks-per-second', type=float, default=0)
    parser.add_argument('path')
    arguments = parser.parse_args()

    chunk = b''.join(report(i) for i in range(arguments.rpis)) * max(1, 2000 // arguments.rpis)
    per_chunk = max(1, 2000 // arguments.rpis) * arguments.rpis
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(arguments.path):
        os.unlink(arguments.path)
    server.bind(arguments.path)
    server.listen(1)
    print('READY', flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Timer(arguments.seconds, done.set).start()
    server.settimeout(arguments.seconds)
    try:
        connection, _ = server.accept()
    except socket.timeout:
        print('SENT 0 (no host connected)', flush=True)
        os.unlink(arguments.path)
        return
    scanning = threading.Event()
    sent = [0]
    lock = threading.Lock()

    def flood():
        while not done.is_set():
            if not scanning.wait(0.1):
                continue
            # Checked under the lock the replies are sent under, after the flag was cleared: no
            # chunk goes after a disable's reply, so every report sent belongs to a window
            # (reports sent = logged + counted).
            with lock:
                if not scanning.is_set():
                    continue
                connection.sendall(chunk)
                sent[0] += per_chunk
            if arguments.chunks_per_second > 0:
                done.wait(1 / arguments.chunks_per_second)

    def commands():
        buffer = b''
        while not done.is_set():
            incoming = connection.recv(4096)
            if not incoming:
                done.set()
                return
            buffer += incoming
            while len(buffer) >= 4 and len(buffer) >= 4 + buffer[3]:
                opcode = buffer[1] | buffer[2] << 8
                parameters = buffer[4:4 + buffer[3]]
                buffer = buffer[4 + buffer[3]:]
                # The flag changes at once, outside the lock: the flood thread, which takes the
                # lock again as soon as it lets it go, would otherwise starve this reply.
                if opcode == LE_SET_SCAN_ENABLE:
                    (scanning.set if parameters[0] else scanning.clear)()
                reply = bytes([0x0E, 12, 1, opcode & 0xFF, opcode >> 8, 0]) + bytes(8)
                with lock:
                    connection.sendall(bytes([0x04]) + reply)

    for target in (flood, commands):
        threading.Thread(target=target, daemon=True).start()
    try:
        done.wait()
    finally:
        print(f'SENT {sent[0]}', flush=True)
        os.unlink(arguments.path)
        os._exit(0)


if __name__ == '__main__':
    main()
