#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Seeds for the file and request fuzz targets, made from what the project reads in real use:

- key-zip, export-bin, export-sig: the Apache-2.0 samples in Tests/KeyFilesTests/Fixtures (Google's
  reference server and apps) and an archive written by `gaenctl tools export`, and their entries;
- contact-log: segments written by the real writer (`gaenctl tools log append`), whole, with a torn
  tail and with a damaged record;
- config: etc/gaend.conf and a file that sets every key;
- keyserver: the request bodies gaend's clients send (Sources/KeyFiles/Clients) and the API tests
  use, one per route;
- server-answers: what a real gaen-keyserver on loopback answers those clients, its exposure
  configuration and its export index, and the configurations real authorities served
  (Tests/DetectionTests/Fixtures/configurations, SOURCES.md there);
- scoring: each of those configurations with windows, gaend's own and Corona-Warn-App's test
  vectors' (Tests/DetectionTests/Fixtures/windows), the configuration's length in two bytes first.

The first byte of a contact-log seed is the target's flag (1: checksums are made right), of a
keyserver seed the route (0 publish, 1 publish with a signed `$CERT`, 2 verify, 3 certificate,
4 codes), of a server-answers seed what is read (0 configuration, 1 index, 2 verification, 3
publish) and the next byte the HTTP status (200, 400, 401, 500); see Tests/Fuzz/Targets.

Usage: write_seeds.py GAENCTL GAEN_KEYSERVER CORPUS_DIR
"""
import base64
import hashlib
import hmac
import io
import json
import os
import struct
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(ROOT, 'Tests/KeyFilesTests/Fixtures')
SAMPLES = [
    'google-ens-testExport-2-records-1-of-1.zip', 'google-ens-sample-export.zip',
    'google-en-android-sample_diagnosis_key_file-2020-07.zip', 'google-ens-1605818700-1605819000-0001-ff23e2-unsigned.zip',
]
# The key server target's fixed clock, 2025-11-23 12:13:20 UTC, and that day's first interval.
NOW = 1_763_900_000
TODAY = NOW // 600 // 144 * 144


def write(corpus, target, name, data):
    directory = os.path.join(corpus, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), 'wb') as file:
        file.write(data)


def key_files(gaenctl, corpus, scratch):
    archives = {name: open(os.path.join(FIXTURES, name), 'rb').read() for name in SAMPLES}
    keys = [{'key': base64.b64encode(bytes([day] * 16)).decode(), 'rollingStartNumber': TODAY - 144 * day,
             'rollingPeriod': 144, 'transmissionRisk': 4, 'reportType': 1, 'daysSinceOnsetOfSymptoms': 1 - day} for day in range(1, 4)]
    with open(f'{scratch}/keys.json', 'w') as file:
        json.dump(keys, file)
    subprocess.run(['openssl', 'ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f'{scratch}/signing.pem'], check=True)
    subprocess.run([gaenctl, 'tools', 'export', '--keys', f'{scratch}/keys.json', '--private-key', f'{scratch}/signing.pem',
                    '--key-id', '310', '--key-version', 'v1', '--region', 'CH', '--out', f'{scratch}/gaenctl-export.zip'], check=True)
    archives['gaenctl-export.zip'] = open(f'{scratch}/gaenctl-export.zip', 'rb').read()
    for name, data in archives.items():
        stem = name.removesuffix('.zip')
        write(corpus, 'key-zip', name, data)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            write(corpus, 'export-bin', stem + '.bin', archive.read('export.bin'))
            write(corpus, 'export-sig', stem + '.sig', archive.read('export.sig'))
    write(corpus, 'export-bin', 'google-en-internals-cpp-testdata-export.bin',
          open(os.path.join(FIXTURES, 'google-en-internals-cpp-testdata-export.bin'), 'rb').read())


def contact_log(gaenctl, corpus, scratch):
    # Today by the system clock: the writer refuses days past the retention (the target names the
    # file by the day in the header).
    subprocess.run([gaenctl, 'tools', 'log', 'append', '--data-dir', f'{scratch}/data', '--aggregates', '12', '--per-window', '4',
                    '--distinct-rpis', '8'], check=True, capture_output=True)
    [name] = [name for name in os.listdir(f'{scratch}/data/contacts') if name.endswith('.log')]
    segment = open(f'{scratch}/data/contacts/{name}', 'rb').read()
    write(corpus, 'contact-log', 'segment', b'\x00' + segment)
    write(corpus, 'contact-log', 'segment-checksums-made', b'\x01' + segment)
    write(corpus, 'contact-log', 'torn-tail', b'\x00' + segment[:-20])
    damaged = bytearray(segment)
    damaged[48 * 3 + 10] ^= 0xFF
    write(corpus, 'contact-log', 'damaged-record', b'\x00' + bytes(damaged))
    write(corpus, 'contact-log', 'header-only', b'\x00' + segment[:48])


def config(corpus):
    write(corpus, 'config', 'etc-gaend.conf', open(os.path.join(ROOT, 'etc/gaend.conf'), 'rb').read())
    every_key = """# A beacon that shares and detects: every key set.
radio = h4+tcp:127.0.0.1:9101
scan-window = 4.5
scan-interval = 210-300
rotation-interval = 600-1200
tx-power = -8
rssi-correction = 5
calibration-confidence = medium
data-dir = /var/lib/gaend
bus = unix:path=/run/gaend/bus
enable = true
region = CH
test-mode = false
index-url = https://keys.example/exposureKeyExport-CH/index.txt
export-base-url = https://keys.example/
export-key = 310:v1:/etc/gaend/keys/export-310.pem
export-key = 311:v1:/etc/gaend/keys/export-311.pem
exposure-configuration = https://keys.example/configuration.json
detection-interval = 4
verification-url = https://verify.example/api
verification-api-key = 0123456789abcdef
publish-url = https://keys.example/v1/publish
health-authority-id = ch.example
"""
    write(corpus, 'config', 'every-key.conf', every_key.encode())
    write(corpus, 'config', 'radios.conf', b'radio = hci:hci1\nradio = bluez:hci0\nradio = h4:/dev/ttyUSB0@1000000\n'
          b'radio = h4+unix:/run/bumble.sock\nradio = none\nscan-interval = continuous\n')


def keyserver_requests(corpus):
    secret = base64.b64encode(bytes(range(32))).decode()
    keys = [{'key': base64.b64encode(bytes([0x10 + day] * 16)).decode(), 'rollingStartNumber': TODAY - 144 * day,
             'rollingPeriod': 144, 'transmissionRisk': 0} for day in range(1, 4)]
    # PublishClient.publish's body; the first with a certificate that is not one, as the HTTP tests send.
    publish = {'temporaryExposureKeys': keys, 'healthAuthorityID': 'fuzz.example', 'verificationPayload': 'a.b.c', 'hmacKey': secret}
    write(corpus, 'keyserver', 'publish', b'\x00' + json.dumps(publish).encode())
    certified = dict(publish, verificationPayload='$CERT', symptomOnsetInterval=TODAY - 144 * 3)
    write(corpus, 'keyserver', 'publish-certified', b'\x01' + json.dumps(certified).encode())
    today = dict(keys[0], rollingStartNumber=TODAY, rollingPeriod=73)
    revised = dict(publish, verificationPayload='$CERT', temporaryExposureKeys=keys + [today], traveler=True,
                   revisionToken='AAAA', padding='cGFkZGluZw==')
    write(corpus, 'keyserver', 'publish-certified-revision', b'\x01' + json.dumps(revised).encode())
    write(corpus, 'keyserver', 'verify', b'\x02' + json.dumps({'code': '12345678', 'accept': ['confirmed', 'likely', 'negative']}).encode())
    write(corpus, 'keyserver', 'certificate', b'\x03' + json.dumps({'token': 'a.b.c', 'ekeyhmac': secret}).encode())
    write(corpus, 'keyserver', 'codes', b'\x04' + json.dumps({'testType': 'confirmed', 'symptomDate': '2025-11-20', 'testDate': '2025-11-21'}).encode())


# Apple's sample app's v2 configuration, as Tests/DetectionTests/ConfigurationTests.swift has it.
EXPOSURE_CONFIGURATION = {
    'immediateDurationWeight': 100, 'nearDurationWeight': 100, 'mediumDurationWeight': 100, 'otherDurationWeight': 100,
    'infectiousnessForDaysSinceOnsetOfSymptoms': {'unknown': 1, '-14': 1, '-1': 1, '0': 1, '1': 1, '14': 1},
    'infectiousnessStandardWeight': 100, 'infectiousnessHighWeight': 100, 'reportTypeConfirmedTestWeight': 100,
    'reportTypeConfirmedClinicalDiagnosisWeight': 100, 'reportTypeSelfReportedWeight': 100, 'reportTypeRecursiveWeight': 100,
    'reportTypeNoneMap': 1, 'minimumRiskScore': 0, 'attenuationDurationThresholds': [50, 70],
    'attenuationLevelValues': [1, 2, 3, 4, 5, 6, 7, 8], 'daysSinceLastExposureLevelValues': [1, 2, 3, 4, 5, 6, 7, 8],
    'durationLevelValues': [1, 2, 3, 4, 5, 6, 7, 8], 'transmissionRiskLevelValues': [1, 2, 3, 4, 5, 6, 7, 8],
}
STATUSES = [200, 400, 401, 500]  # the server-answers target's second byte


def server_answers(keyserver, corpus, scratch):
    """A real gaen-keyserver on loopback answering gaend's clients: the configuration, a code's
    verification and certificate, a publish and its refusal, and the export index."""
    def answer(name, route, status, body):
        write(corpus, 'server-answers', name, bytes([route, STATUSES.index(status)]) + body)

    def request(path, body=None, key='device-key'):
        data = json.dumps(body).encode() if body is not None else None
        call = urllib.request.Request(base + path, data=data, headers={'X-API-Key': key, 'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(call, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    for name in ('verification', 'export'):
        subprocess.run(['openssl', 'ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f'{scratch}/{name}.pem'], check=True)
    with open(f'{scratch}/configuration.json', 'w') as file:
        json.dump(EXPOSURE_CONFIGURATION, file)
    server = subprocess.Popen(
        [keyserver, 'serve', '--data-dir', f'{scratch}/server', '--port', '0', '--verification-key', f'{scratch}/verification.pem',
         '--export-key', f'{scratch}/export.pem', '--device-api-key', 'device-key', '--admin-api-key', 'admin-key',
         '--health-authority', 'ch.example', '--region', 'CH', '--exposure-configuration', f'{scratch}/configuration.json',
         '--release-same-day-keys', '--export-interval', '1'], stdout=subprocess.PIPE, text=True)
    try:
        port = re.search(r':(\d+)', server.stdout.readline()).group(1)
        base = f'http://127.0.0.1:{port}'
        answer('configuration', 0, *request('/configuration.json'))
        status, body = request('/admin/codes', {'testType': 'confirmed'}, key='admin-key')
        code = json.loads(body)['code']
        answer('verify', 2, *request('/api/verify', {'code': code, 'accept': ['confirmed', 'likely', 'negative']}))
        token = json.loads(open(f'{corpus}/server-answers/verify', 'rb').read()[2:])['token']
        answer('verify-refused', 2, *request('/api/verify', {'code': '00000000', 'accept': ['confirmed']}))
        # The device's keys and their HMAC, as the verification protocol has the device make them.
        today = int(time.time()) // 600 // 144 * 144
        secret = bytes(range(32))
        keys = [{'key': base64.b64encode(bytes([0x20 + day] * 16)).decode(), 'rollingStartNumber': today - 144 * day,
                 'rollingPeriod': 144, 'transmissionRisk': 0} for day in range(1, 4)]
        text = ','.join(f"{k['key']}.{k['rollingStartNumber']}.{k['rollingPeriod']}.{k['transmissionRisk']}"
                        for k in sorted(keys, key=lambda k: k['key']))
        mac = base64.b64encode(hmac.new(secret, text.encode(), hashlib.sha256).digest()).decode()
        status, body = request('/api/certificate', {'token': token, 'ekeyhmac': mac})
        answer('certificate', 3, status, body)
        publish = {'temporaryExposureKeys': keys, 'healthAuthorityID': 'ch.example', 'verificationPayload': json.loads(body)['certificate'],
                   'hmacKey': base64.b64encode(secret).decode()}
        answer('publish', 3, *request('/v1/publish', publish))
        answer('publish-refused', 3, *request('/v1/publish', publish))
        time.sleep(3)
        answer('index', 1, *request('/exports/exposureKeyExport-CH/index.txt'))
    finally:
        server.terminate()
        server.wait(timeout=10)


def http_requests(corpus):
    """What clients send gaen-keyserver on one connection, for the http-request target (its limits:
    request line 64, headers 256 bytes and 8 lines, body 512); the first byte picks the read size."""
    publish = b'{"temporaryExposureKeys":[],"healthAuthorityID":"x"}'
    write(corpus, 'http-request', 'get-kept-alive', b'\x07GET /exports/index.txt HTTP/1.1\r\nHost: x\r\n\r\n'
          b'GET /configuration.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    write(corpus, 'http-request', 'post-length', b'\x20POST /v1/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
          b'Content-Length: %d\r\n\r\n' % len(publish) + publish)
    write(corpus, 'http-request', 'post-chunked', b'\x03POST /api/verify HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n'
          b'5;ext=1\r\n{"cod\r\n0d\r\ne":"1234567"}\r\n0\r\nTrailer: t\r\n\r\n')
    write(corpus, 'http-request', 'expect-continue', b'\x40POST /admin/codes HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}')
    write(corpus, 'http-request', 'http10-blank-lines', b'\x01\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\nX-A: 1\r\nx-a: 2\r\n\r\n')
    write(corpus, 'http-request', 'forwarded-for', b'\x09GET / HTTP/1.1\r\nX-Forwarded-For: 1.2.3.4, [2001:db8::1]:80\r\n'
          b'X-Forwarded-For: 10.0.0.1\r\n\r\n')
    write(corpus, 'http-request', 'forwarded', b'\x05GET / HTTP/1.1\r\nForwarded: for=192.0.2.1;by=x, FOR="[::1]:4"\r\n\r\n')
    write(corpus, 'http-request', 'smuggling', b'\x11POST /v1/publish HTTP/1.1\r\nContent-Length: 600\r\nTransfer-Encoding: chunked\r\n\r\n'
          b'GET /x HTTP/1.1\r\n\r\n')


AUTHORITY_CONFIGURATIONS = {
    'cwa-ios-exposure-configuration.json': 'cwa-ios', 'enx-sample.json': 'enx', 'koronavilkku-v2.json': 'koronavilkku',
    'nl-RiskCalcDefaults.json': 'nl-v1', 'swisscovid-app-ios-config-response.json': 'swisscovid-answer',
    'swisscovid-gaensdkconfig.json': 'swisscovid',
}


def scoring(corpus):
    """The authorities' configurations as served answers, and each with windows to score."""
    fixtures = os.path.join(ROOT, 'Tests/DetectionTests/Fixtures')
    with open(os.path.join(fixtures, 'windows/cwa-exposure-windows-risk-calculation.json')) as file:
        cases = json.load(file)['testCases']
    own = json.dumps([
        {'day': '2024-10-03', 'report_type': 'confirmed-test', 'infectiousness': 'standard', 'calibration_confidence': 'medium',
         'scan_instances': [{'typical_attenuation': 40, 'minimum_attenuation': 38, 'seconds_since_last_scan': 960},
                            {'typical_attenuation': 58, 'minimum_attenuation': 50, 'seconds_since_last_scan': 300}]},
        {'day': '2024-10-04', 'report_type': 'self-report', 'infectiousness': 'high', 'calibration_confidence': 'low',
         'scan_instances': [{'typical_attenuation': 95, 'minimum_attenuation': 90, 'seconds_since_last_scan': 1800}]}]).encode()
    for index, (file_name, name) in enumerate(sorted(AUTHORITY_CONFIGURATIONS.items(), key=lambda item: item[1])):
        with open(os.path.join(fixtures, 'configurations', file_name), 'rb') as file:
            body = file.read()
        write(corpus, 'server-answers', f'configuration-{name}', bytes([0, 0]) + body)
        windows = json.dumps(cases[(index * 5) % len(cases)]['exposureWindows']).encode() if index % 2 else own
        write(corpus, 'scoring', name, len(body).to_bytes(2, 'big') + body + windows)
    # Corona-Warn-App's case with a negative secondsSinceLastScan, under SwissCovid's rule.
    with open(os.path.join(fixtures, 'configurations/swisscovid-gaensdkconfig.json'), 'rb') as file:
        body = file.read()
    write(corpus, 'scoring', 'swisscovid-negative-seconds', len(body).to_bytes(2, 'big') + body + json.dumps(cases[27]['exposureWindows']).encode())


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def held_entry(start, aggregates):
    """One held window (HeldFormat in Sources/ContactLog/Held): boot-clock milliseconds."""
    none = -(1 << 63)
    payload = struct.pack('<qqIIIqI', start, start + 4000, 5 * len(aggregates), 2 * len(aggregates), len(aggregates), none, 4000)
    for number in range(len(aggregates)):
        rpi = bytes([number + 1] * 16)
        payload += rpi + bytes([9, 8, 7, number]) + struct.pack('<qqHbBiHq', start + 100, start + 2100, 2, -60, 1, -130, 2, none)
    return struct.pack('<II', len(payload), crc32c(payload)) + payload


def clock(corpus):
    """clock: a held-sightings file as gaend writes it (first byte 0), a server's Date (1)."""
    header = b'GAENHELD' + struct.pack('<H', 1) + b'0f6a1c9e-2d3b-4c5d-8e7f-123456789abc'
    held = header + held_entry(600_000, [0, 1]) + held_entry(660_000, [2])
    write(corpus, 'clock', 'held-sightings', b'\x00' + held)
    write(corpus, 'clock', 'held-sightings-torn', b'\x00' + held[:-7])
    write(corpus, 'clock', 'date', b'\x01' + b'Sun, 06 Nov 1994 08:49:37 GMT')
    write(corpus, 'clock', 'date-obsolete', b'\x01' + b'Sunday, 06-Nov-94 08:49:37 GMT')


def btsnoop(corpus):
    """btsnoop: the packets of the h4 seeds (Bumble's controllers answering gaend) in a btsnoop
    container as Android and btmon write it, and the same cut inside its last record."""
    def container(packets):
        data = b'btsnoop\0' + struct.pack('>II', 1, 1002)
        stamp = (1_596_110_400_000_000 + 0x00dcddb30f2f8000)
        for index, packet in enumerate(packets):
            data += struct.pack('>IIIIq', len(packet), len(packet), 1, 0, stamp + index * 1000) + packet
        return data
    for name in ('scanner-stream', 'advertiser-stream'):
        seed = open(os.path.join(corpus, 'h4', name), 'rb').read()

        def events(stream):
            # Events only (type 4): an event's parameter length is its third byte.
            found, offset = [], 0
            while offset + 3 <= len(stream) and stream[offset] == 4 and offset + 3 + stream[offset + 2] <= len(stream):
                end = offset + 3 + stream[offset + 2]
                found.append(stream[offset:end])
                offset = end
            return found
        # The h4 target's first byte chooses where reads are cut; the stream follows it.
        packets = max(events(seed), events(seed[1:]), key=len)
        # A command of gaend's advertiser (LE Set Advertising Data with a GAEN frame) first.
        frame = bytes.fromhex('02011a03036ffd17166ffd') + bytes(range(16)) + bytes.fromhex('40080000')
        packets.insert(0, b'\x01\x08\x20\x20' + bytes([len(frame)]) + frame + bytes(31 - len(frame)))
        data = container(packets)
        write(corpus, 'btsnoop', name, data)
        write(corpus, 'btsnoop', name + '-cut', data[:-5])


def main():
    gaenctl, keyserver, corpus = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory(prefix='gaend-seeds-') as scratch:
        key_files(gaenctl, corpus, scratch)
        contact_log(gaenctl, corpus, scratch)
        server_answers(keyserver, corpus, scratch)
    config(corpus)
    scoring(corpus)
    keyserver_requests(corpus)
    http_requests(corpus)
    clock(corpus)
    btsnoop(corpus)


if __name__ == '__main__':
    main()
