/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The files `modelplane async-upload` reads (transfer/config.h, transfer/metadata.h): the first
 * line of the input is a registry name, the rest a .dockerconfigjson; the first line is also a
 * metadata ConfigMap key (split at '=' into key and value: "ModelVersion.custom_properties={...}")
 * and the rest the same key's value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transfer/config.h"
#include "transfer/metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *nl = memchr(data, '\n', size);
        size_t head = nl ? (size_t)(nl - (const char *)data) : size;
        char *line = strndup((const char *)data, head), *rest, *eq;
        struct transfer_docker_auth a;
        struct transfer_metadata m = { 0 };
        bool plain, skipped;
        struct error_detail e = { 0 }; /* messages formatted: their arguments read */

        if (!line)
                return 0;
        if (nl && transfer_dockerconfig_parse(nl + 1, size - head - 1, line, &a, &plain, &e) == 0) {
                if (!a.username != !a.password)
                        __builtin_trap(); /* both or neither */
                transfer_docker_auth_release(&a);
        }
        rest = nl ? strndup(nl + 1, size - head - 1) : strdup("");
        eq = strchr(line, '=');
        if (rest && eq) {
                *eq = '\0';
                (void)!transfer_metadata_add(&m, line, eq + 1, &skipped, &e);
        }
        if (rest)
                (void)!transfer_metadata_add(&m, line, rest, &skipped, &e);
        for (int i = 0; i < 3; i++)
                (void)!transfer_metadata_validate(&m, true, (enum transfer_intent)i, &e);
        if (m.version_props || m.version_api_props) {
                json_t *cp = transfer_custom_properties(m.version_props, m.version_api_props);

                json_decref(cp);
        }
        transfer_metadata_release(&m);
        free(rest);
        free(line);
        return 0;
}
