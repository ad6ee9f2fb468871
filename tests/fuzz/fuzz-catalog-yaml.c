/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one YAML reader (json/yaml-doc) and the catalog's loaders on top of it, from memory: the
 * reader under small bounds (load, convert the whole document to JSON, look keys up), then a
 * catalog (models / MCP servers) and a sources file. Every refusal but out-of-memory comes with
 * a message and its own errno; a document converts to exactly one JSON value.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "catalog/sources.h"
#include "catalog/yaml-catalog.h"
#include "json/yaml-doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct yaml_limits small = {
        .size_max = (size_t)64 * 1024,
        .depth_max = 16,
        .nodes_max = 4096,
        .cpu_usec_max = 2ULL * 1000000ULL,
};

static void check_refusal(int r, const struct error_detail *e)
{
        if (r == -ENOMEM)
                return;
        if (!e->message[0] || e->error != r || e->kind != ERROR_INVALID ||
            strnlen(e->message, sizeof(e->message)) >= sizeof(e->message))
                __builtin_trap();
}

static void reader(const uint8_t *data, size_t size)
{
        struct error_detail e = { 0 };
        struct ydoc d;
        json_t *v = NULL;
        yaml_node_t *root;
        int r;

        r = ydoc_load(&d, "fuzz.yaml", (const char *)data, size, &small, &e);
        if (r < 0) {
                check_refusal(r, &e);
                return;
        }
        root = ydoc_root(&d);
        if (root) {
                r = ydoc_to_json(&d, root, &v, &e);
                if (r < 0)
                        check_refusal(r, &e);
                else if (!v)
                        __builtin_trap();
                json_decref(v);
                (void)ydoc_map_get(&d, root, "models");
        }
        ydoc_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct catalog_models *m = NULL;
        struct catalog_config c = { 0 };
        struct error_detail e = { 0 };

        reader(data, size);
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
