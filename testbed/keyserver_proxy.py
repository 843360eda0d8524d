#!/usr/bin/env python3
"""Meets a gaen-keyserver started with `--trusted-proxy 127.0.0.2` as clients behind a proxy and
as clients without one, from chosen loopback source addresses (127.0.0.0/8 is all loopback), and
prints one JSON object of what each step was answered; the Swift test (KeyServerProxyTests)
asserts on it. Usage: keyserver_proxy.py PORT DEVICE_KEY ADMIN_KEY [GUESSES] (default 1000: the
wrong codes of the client behind the proxy)"""
import http.client
import json
import sys
from collections import Counter

port, device_key, admin_key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
proxied_guesses = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
connections = {}


def post(source, path, body, key, forwarded=None, header='X-Forwarded-For'):
    """One POST on a kept-alive connection from `source`; (status, parsed body)."""
    for attempt in range(2):
        connection = connections.get(source)
        if connection is None:
            connection = http.client.HTTPConnection('127.0.0.1', port, timeout=10, source_address=(source, 0))
            connections[source] = connection
        headers = {'Content-Type': 'application/json', 'X-API-Key': key}
        if forwarded is not None:
            headers[header] = forwarded
        try:
            connection.request('POST', path, body=json.dumps(body), headers=headers)
            response = connection.getresponse()
            data = response.read()
            if response.getheader('Connection', '').lower() == 'close':
                connection.close()
                del connections[source]
            try:
                parsed = json.loads(data)
            except ValueError:
                parsed = {}
            return response.status, parsed
        except (http.client.HTTPException, OSError):
            connection.close()
            connections.pop(source, None)
    return 0, {}


def guesses(count, source, forwarded=None):
    statuses = Counter()
    for guess in range(count):
        status, _ = post(source, '/api/verify', {'code': '%08d' % ((guess * 7919) % 100000000)}, device_key, forwarded)
        statuses[status] += 1
    return dict((str(status), n) for status, n in sorted(statuses.items()))


def issue(source, forwarded=None):
    status, body = post(source, '/admin/codes', {'testType': 'confirmed'}, admin_key, forwarded)
    return status, body.get('code')


result = {}
# Through the trusted proxy: wrong codes from one forwarded client.
result['proxied_guesses'] = guesses(proxied_guesses, '127.0.0.2', '192.0.2.99, 198.51.100.10')
# The administrator, through the proxy from that very client's address, and from its own.
result['admin_as_guesser'], _ = issue('127.0.0.2', '198.51.100.10')
result['admin_through_proxy'], code = issue('127.0.0.2', '203.0.113.1')
# Another forwarded client verifies the code; the guesser cannot, even with it.
result['guesser_with_right_code'], _ = post('127.0.0.2', '/api/verify', {'code': code}, device_key, '198.51.100.10')
result['other_client_verifies'], _ = post('127.0.0.2', '/api/verify', {'code': code}, device_key, '198.51.100.11')
# RFC 7239's header names a client too: another one, with a budget of its own.
status, _ = post('127.0.0.2', '/api/verify', {'code': '00000000'}, device_key, 'for="[2001:db8::7]:4711"', header='Forwarded')
result['forwarded_rfc7239'] = status
# Not from a proxy: forged X-Forwarded-For changes nothing, every guess is 127.0.0.3's.
forged = Counter()
for guess in range(40):
    status, _ = post('127.0.0.3', '/api/verify', {'code': '%08d' % guess}, device_key, '198.51.100.%d' % (20 + guess))
    forged[status] += 1
result['forged_guesses'] = dict((str(status), n) for status, n in sorted(forged.items()))
# 300 wrong codes from 127.0.0.1, then the administrator there.
result['direct_guesses'] = guesses(300, '127.0.0.1')
result['admin_after_direct_guesses'], _ = issue('127.0.0.1')
# A trusted proxy that sends garbage: 400 naming the header, and the server goes on.
status, body = post('127.0.0.2', '/api/verify', {'code': '00000000'}, device_key, '198.51.100.12, not-an-address')
result['malformed'] = [status, body.get('error')]
result['after_malformed'], _ = issue('127.0.0.2', '203.0.113.1')
print(json.dumps(result, sort_keys=True))
