#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Establishes what each key file sample holds without gaend: `protoc --decode` reads export.bin after
# its 16-byte header, and `openssl dgst -sha256 -verify` checks the first signature of export.sig
# against every public key beside the samples. The key-file tests assert the facts this prints.
#
#   testbed/keyfile-facts.sh [DIR]      (DIR defaults to ../shared/keyfiles)
#
# Needs protoc (Debian protobuf-compiler), openssl, python3 and unzip.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
samples=${1:-$root/../shared/keyfiles}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The DER signature of the first TEKSignature in a TEKSignatureList (field 1, then field 4).
first_signature() {
    python3 - "$1" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
def varint(b, i):
    value = shift = 0
    while True:
        byte = b[i]; i += 1
        value |= (byte & 0x7F) << shift; shift += 7
        if byte < 0x80: return value, i
def fields(b):
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        if tag & 7 == 2:
            length, i = varint(b, i); yield tag >> 3, b[i:i + length]; i += length
        elif tag & 7 == 0:
            _, i = varint(b, i)
        else:
            return
for number, value in fields(data):
    if number == 1:
        for inner, signature in fields(value):
            if inner == 4:
                sys.stdout.buffer.write(signature); sys.exit(0)
PY
}

for zip in "$samples"/*.zip "$samples"/*.bin; do
    [ -e "$zip" ] || continue
    name=$(basename "$zip")
    dir="$work/$name.d"
    mkdir -p "$dir"
    if [[ "$name" == *.bin && "$(head -c 2 "$zip")" != "PK" ]]; then cp "$zip" "$dir/export.bin"; else unzip -qo "$zip" -d "$dir" || true; fi
    bin=$(find "$dir" -name 'export*.bin' -not -path '*__MACOSX*' | head -1)
    sig=$(find "$dir" -name 'export.sig' -not -path '*__MACOSX*' | head -1)
    [ -n "$bin" ] || { echo "$name: no export.bin"; continue; }
    tail -c +17 "$bin" > "$work/body.pb"
    decoded=$(protoc --proto_path="$root/proto" --decode TemporaryExposureKeyExport export.proto < "$work/body.pb" 2>/dev/null) \
        || decoded="(protobuf does not decode)"
    keys=$(grep -c '^keys {' <<<"$decoded" || true)
    revised=$(grep -c '^revised_keys {' <<<"$decoded" || true)
    verifies="none"
    if [ -n "$sig" ] && [ -s "$sig" ]; then
        first_signature "$sig" > "$work/sig.der"
        for pem in "$samples"/*.pem; do
            if openssl dgst -sha256 -verify "$pem" -signature "$work/sig.der" "$bin" >/dev/null 2>&1; then
                verifies="$(basename "$pem")"
            fi
        done
    fi
    where=${bin#"$dir/"}
    echo "$name: $where, header '$(head -c 16 "$bin")', $keys keys, $revised revised, signature verifies with: $verifies"
done
