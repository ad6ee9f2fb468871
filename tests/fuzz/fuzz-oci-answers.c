/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What `modelplane async-upload` takes from an OCI registry's answers (transfer/oci.h): a
 * manifest or index (a base image's), an error body, and a config the ModelCar config is built
 * on. The whole input is each of them in turn.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transfer/oci.h"

#define DIFF_ID "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;
        struct oci_manifest *m = malloc(sizeof(*m));
        char digest[OCI_DIGEST_LEN], msg[256];
        char *cfg, *man;
        struct error_detail e = { 0 }; /* messages formatted: their arguments read */

        if (!m)
                return 0;
        if (oci_manifest_parse(s, size, m, &e) == 0) {
                if (m->n_layers > OCI_LAYERS_MAX || !oci_digest_valid(m->config.digest))
                        __builtin_trap();
                man = oci_manifest_build(m->docker, &m->config, m->layers, m->n_layers);
                free(man);
        }
        free(m);
        if (oci_index_pick(s, size, "linux", "amd64", digest, &e) == 0 && !oci_digest_valid(digest))
                __builtin_trap();
        oci_error_message(s, size, msg, sizeof(msg));
        if (strlen(msg) >= sizeof(msg))
                __builtin_trap();
        for (const char *p = msg; *p; p++)
                if ((unsigned char)*p < 0x20)
                        __builtin_trap(); /* it goes into a log line */
        cfg = oci_config_build(s, size, DIFF_ID, "linux", "amd64", NULL, &e);
        free(cfg);
        return 0;
}
