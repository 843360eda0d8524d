// SPDX-License-Identifier: GPL-3.0-or-later
// What Swift cannot import from the C libraries' headers: macros that expand to casts or calls, and
// function-like macros. Each symbol is prefixed `cgaend_` and says why it exists. Only the wrapper
// modules (ENCrypto, DBus, HCI) import this target.
#ifndef GAEND_CGAENDSHIMS_H
#define GAEND_CGAENDSHIMS_H

#include <stddef.h>
#include <stdint.h>

// MARK: libdbus

// DBUS_TYPE_* are defined as ((int) 's') and the like; Swift imports only plain literals.
extern const int cgaend_dbus_type_invalid;
extern const int cgaend_dbus_type_byte;
extern const int cgaend_dbus_type_boolean;
extern const int cgaend_dbus_type_int16;
extern const int cgaend_dbus_type_uint16;
extern const int cgaend_dbus_type_int32;
extern const int cgaend_dbus_type_uint32;
extern const int cgaend_dbus_type_int64;
extern const int cgaend_dbus_type_uint64;
extern const int cgaend_dbus_type_double;
extern const int cgaend_dbus_type_string;
extern const int cgaend_dbus_type_object_path;
extern const int cgaend_dbus_type_signature;
extern const int cgaend_dbus_type_unix_fd;
extern const int cgaend_dbus_type_array;
extern const int cgaend_dbus_type_variant;
extern const int cgaend_dbus_type_struct;
extern const int cgaend_dbus_type_dict_entry;

// MARK: libcrypto

// BIO_get_mem_data is a macro over BIO_ctrl; returns the length and sets *data.
long cgaend_bio_get_mem_data(void *bio, char **data);


#endif
