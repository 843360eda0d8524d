#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""An independent GAEN peer on Bumble's own host stack: advertises the GAEN frame of the official
test vectors (interval 0: RPI 8be6cd37..., AEM 72033874) as a non-connectable advertisement from a
random address, scans passively, and prints one line per advertisement heard:

    HEARD <address> <address type> <rssi> <legacy> <advertising data hex>

Usage: peer.py TRANSPORT SECONDS   (e.g. unix:/tmp/c2.sock 5). Prints READY once advertising and
scanning; exits after SECONDS. Run it under `timeout`: Bumble's host can hang if its controller dies.
"""
import asyncio
import sys

from bumble.device import Device, AdvertisingType
from bumble.hci import Address, OwnAddressType
from bumble.transport import open_transport

FRAME = bytes.fromhex('02011a03036ffd17166ffd' '8be6cd371c5c891604bfbe49df845096' '72033874')


async def run(transport_name, seconds):
    async with await open_transport(transport_name) as transport:
        device = Device.with_hci('gaen-peer', Address('1B:AD:C0:FF:EE:01'), transport.source, transport.sink)

        def on_advertisement(advertisement):
            print('HEARD', advertisement.address.to_string(False), advertisement.address.address_type, advertisement.rssi,
                  int(advertisement.is_legacy), bytes(advertisement.data).hex(), flush=True)

        device.on('advertisement', on_advertisement)
        await device.power_on()
        await device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED, own_address_type=OwnAddressType.RANDOM,
            advertising_data=FRAME, advertising_interval_min=200, advertising_interval_max=270)
        await device.start_scanning(active=False, filter_duplicates=False)
        print('READY', flush=True)
        await asyncio.sleep(seconds)


if __name__ == '__main__':
    asyncio.run(run(sys.argv[1], float(sys.argv[2])))
