/* SPDX-License-Identifier: Apache-2.0 */
/* The catalog's YAML loaders from memory: a catalog (models / MCP servers) and a sources file. */
#include <stdint.h>
#include <string.h>

#include "catalog/sources.h"
#include "catalog/yaml-catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct catalog_models *m = NULL;
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };

        if (catalog_models_parse("fuzz.yaml", (const char *)data, size, &m, &e) == 0) {
                if (!m)
                        __builtin_trap();
                catalog_models_unref(m);
        } else if (m)
                __builtin_trap();
        if (catalog_config_parse("fuzz-sources.yaml", (const char *)data, size, &c, &e) == 0)
                catalog_config_release(&c);
        return 0;
}
