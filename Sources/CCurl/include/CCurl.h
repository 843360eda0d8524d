// SPDX-License-Identifier: GPL-3.0-or-later
// libcurl's easy interface for KeyFiles' CurlTransport. curl_easy_setopt and curl_easy_getinfo are
// variadic, which Swift cannot call: each use gets a typed function here. Only KeyFiles imports
// this target.
#ifndef GAEND_CCURL_H
#define GAEND_CCURL_H

#include <curl/curl.h>

// A body or header chunk: return `size * count` to go on, anything else aborts the transfer.
typedef size_t (*cgaend_curl_data_fn)(char *data, size_t size, size_t count, void *context);

CURLcode cgaend_curl_set_long(CURL *curl, CURLoption option, long value);
CURLcode cgaend_curl_set_string(CURL *curl, CURLoption option, const char *value);
CURLcode cgaend_curl_set_headers(CURL *curl, struct curl_slist *headers);
CURLcode cgaend_curl_set_error_buffer(CURL *curl, char *buffer);
CURLcode cgaend_curl_set_body(CURL *curl, const char *bytes, long length);
CURLcode cgaend_curl_set_write(CURL *curl, cgaend_curl_data_fn function, void *context);
CURLcode cgaend_curl_set_header_function(CURL *curl, cgaend_curl_data_fn function, void *context);
long cgaend_curl_response_code(CURL *curl);

#endif
