/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `modelplane async-upload` takes from an OCI registry's authentication: the first line of
 * the input is a WWW-Authenticate header's value (transfer/oci.h's challenge parser) and an image
 * reference (the same line, as a user's MODEL_SYNC_DESTINATION_OCI_URI); the rest is a token
 * endpoint's answer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transfer/oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *nl = memchr(data, '\n', size);
        size_t head = nl ? (size_t)(nl - (const char *)data) : size;
        char *line = strndup((const char *)data, head);
        struct oci_challenge c;
        struct oci_ref ref;
        char *token = NULL;
        struct error_detail e = { 0 }; /* messages formatted: their arguments read */

        if (!line)
                return 0;
        if (oci_challenge_parse(line, &c, &e) == 0) {
                if (c.scheme == OCI_AUTH_BEARER &&
                    (!c.realm ||
                     (strncmp(c.realm, "http://", 7) != 0 && strncmp(c.realm, "https://", 8) != 0)))
                        __builtin_trap(); /* a Bearer challenge always has an http(s) realm */
                oci_challenge_release(&c);
        }
        if (oci_ref_parse(line, &ref, &e) == 0) {
                if (!ref.host || !ref.repository || (!ref.tag && !ref.digest) ||
                    strlen(ref.repository) > OCI_REPOSITORY_MAX + 8)
                        __builtin_trap();
                oci_ref_release(&ref);
        }
        free(line);
        if (nl && oci_token_parse(nl + 1, size - head - 1, &token, &e) == 0) {
                for (const char *p = token; *p; p++)
                        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                                __builtin_trap(); /* it goes into a header line */
                free(token);
        }
        return 0;
}
