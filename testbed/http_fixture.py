#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A scriptable HTTP server on loopback for the key-server client tests.

It serves the routes the test configures (POST /_control/routes with {path: spec}) and records every
other request (GET /_requests). A spec may ask for a status, a body, headers, a delay before
answering, a body cut short (Content-Length larger than what is sent), a body repeated N times,
a body trickled a byte every `trickle` seconds (chunked, so the client cannot know its end),
503 for the first N requests, or to be held until the test releases the path (POST
/_control/release with {"path": path}): a client is then mid-request for exactly as long as the
test wants, whatever the machine's speed. Prints "port N" on its first line; runs until killed.
"""
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROUTES = {}
REQUESTS = []
COUNTS = {}
RELEASES = {}
LOCK = threading.Lock()
# A held request that is never released still ends, so a failed test cannot hang the fixture.
HOLD_LIMIT_SECONDS = 120


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status, body=b"", headers=None, declared=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(declared if declared is not None else len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _handle(self):
        body = self._body()
        path = self.path
        if path == "/_control/routes":
            with LOCK:
                ROUTES.update(json.loads(body))
            return self._send(204)
        if path == "/_control/reset":
            with LOCK:
                ROUTES.clear(); REQUESTS.clear(); COUNTS.clear()
            return self._send(204)
        if path == "/_control/release":
            with LOCK:
                RELEASES.setdefault(json.loads(body)["path"], threading.Event()).set()
            return self._send(204)
        if path == "/_requests":
            with LOCK:
                data = json.dumps(REQUESTS).encode()
            return self._send(200, data, {"Content-Type": "application/json"})
        with LOCK:
            REQUESTS.append({"method": self.command, "path": path, "headers": {k.lower(): v for k, v in self.headers.items()},
                             "body": base64.b64encode(body).decode()})
            spec = ROUTES.get(path)
            COUNTS[path] = COUNTS.get(path, 0) + 1
            count = COUNTS[path]
        if spec is None:
            return self._send(404, b"not found", {"Content-Type": "text/plain"})
        if count <= spec.get("fail_times", 0):
            return self._send(503, b"try later", {"Content-Type": "text/plain"})
        if spec.get("held"):
            with LOCK:
                release = RELEASES.setdefault(path, threading.Event())
            release.wait(HOLD_LIMIT_SECONDS)
        time.sleep(spec.get("delay", 0))
        payload = base64.b64decode(spec["body_b64"]) if "body_b64" in spec else spec.get("body", "").encode()
        payload = payload * spec.get("repeat_body", 1)
        if spec.get("trickle"):
            self.send_response(spec.get("status", 200))
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for index in range(len(payload)):
                    self.wfile.write(b"1\r\n" + payload[index:index + 1] + b"\r\n")
                    self.wfile.flush()
                    time.sleep(spec["trickle"])
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return
        if spec.get("truncate"):
            self._send(spec.get("status", 200), payload[: len(payload) // 2], spec.get("headers"), declared=len(payload))
            self.close_connection = True
            return
        self._send(spec.get("status", 200), payload, spec.get("headers"))

    do_GET = _handle
    do_POST = _handle


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
