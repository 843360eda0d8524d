// SPDX-License-Identifier: GPL-3.0-or-later
#include "CGaendShims.h"

#include <dbus/dbus.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <openssl/bio.h>

// The mirrored values must be what the libraries' own headers say; these asserts fail the build if a
// header ever changes under us.
_Static_assert(DBUS_TYPE_STRING == 's', "libdbus type codes are ASCII letters");
_Static_assert(sizeof(le_set_advertising_parameters_cp) == LE_SET_ADVERTISING_PARAMETERS_CP_SIZE,
               "the packed HCI command struct has its wire size");

const int cgaend_dbus_type_invalid = DBUS_TYPE_INVALID;
const int cgaend_dbus_type_byte = DBUS_TYPE_BYTE;
const int cgaend_dbus_type_boolean = DBUS_TYPE_BOOLEAN;
const int cgaend_dbus_type_int16 = DBUS_TYPE_INT16;
const int cgaend_dbus_type_uint16 = DBUS_TYPE_UINT16;
const int cgaend_dbus_type_int32 = DBUS_TYPE_INT32;
const int cgaend_dbus_type_uint32 = DBUS_TYPE_UINT32;
const int cgaend_dbus_type_int64 = DBUS_TYPE_INT64;
const int cgaend_dbus_type_uint64 = DBUS_TYPE_UINT64;
const int cgaend_dbus_type_double = DBUS_TYPE_DOUBLE;
const int cgaend_dbus_type_string = DBUS_TYPE_STRING;
const int cgaend_dbus_type_object_path = DBUS_TYPE_OBJECT_PATH;
const int cgaend_dbus_type_signature = DBUS_TYPE_SIGNATURE;
const int cgaend_dbus_type_unix_fd = DBUS_TYPE_UNIX_FD;
const int cgaend_dbus_type_array = DBUS_TYPE_ARRAY;
const int cgaend_dbus_type_variant = DBUS_TYPE_VARIANT;
const int cgaend_dbus_type_struct = DBUS_TYPE_STRUCT;
const int cgaend_dbus_type_dict_entry = DBUS_TYPE_DICT_ENTRY;

long cgaend_bio_get_mem_data(void *bio, char **data) {
    return BIO_get_mem_data((BIO *)bio, data);
}


