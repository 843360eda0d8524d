// SPDX-License-Identifier: GPL-3.0-or-later
#include "CCurl.h"

CURLcode cgaend_curl_set_long(CURL *curl, CURLoption option, long value) { return curl_easy_setopt(curl, option, value); }

CURLcode cgaend_curl_set_string(CURL *curl, CURLoption option, const char *value) { return curl_easy_setopt(curl, option, value); }

CURLcode cgaend_curl_set_headers(CURL *curl, struct curl_slist *headers) { return curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers); }

CURLcode cgaend_curl_set_error_buffer(CURL *curl, char *buffer) { return curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, buffer); }

CURLcode cgaend_curl_set_body(CURL *curl, const char *bytes, long length) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, length);
    return code != CURLE_OK ? code : curl_easy_setopt(curl, CURLOPT_COPYPOSTFIELDS, bytes);
}

CURLcode cgaend_curl_set_write(CURL *curl, cgaend_curl_data_fn function, void *context) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, function);
    return code != CURLE_OK ? code : curl_easy_setopt(curl, CURLOPT_WRITEDATA, context);
}

CURLcode cgaend_curl_set_header_function(CURL *curl, cgaend_curl_data_fn function, void *context) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, function);
    return code != CURLE_OK ? code : curl_easy_setopt(curl, CURLOPT_HEADERDATA, context);
}

long cgaend_curl_response_code(CURL *curl) {
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    return code;
}
