// SPDX-License-Identifier: GPL-3.0-or-later
// Debian's zlib (zlib1g-dev), for KeyFiles' raw-deflate reader. Named apart from ZIPFoundation's
// own CZlib module, which is not a product another package can depend on.
#include <zlib.h>
