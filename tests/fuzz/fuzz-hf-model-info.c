/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What an hf source takes from the hub: a model info document (JSON) converted to a catalog
 * model, a Link header's next cursor and a Go duration (the first line of the input).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/hf.h"
#include "util/parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *nl = memchr(data, '\n', size);
        size_t head = nl ? (size_t)(nl - (const char *)data) : size;
        char *line = strndup((const char *)data, head);
        struct catalog_model_data d = { 0 };
        char *cursor = NULL;
        json_t *info;
        usec_t u;
        int64_t ms;

        if (!line)
                return 0;
        (void)!parse_go_duration_usec(line, &u);
        (void)!catalog_hf_parse_time(line, &ms);
        if (catalog_hf_link_next_cursor(line, &cursor) == 0)
                free(cursor);
        free(line);
        info = json_loadb((const char *)data, size, JSON_DISABLE_EOF_CHECK, NULL);
        if (!info)
                return 0;
        if (catalog_hf_model_from_info(info, "fuzz/fallback", "card", 1, &d) == 0) {
                if (!d.name || !json_is_object(d.model) || !json_is_array(d.artifacts_json))
                        __builtin_trap();
                json_decref(d.model);
                json_decref(d.artifacts_json);
        } else if (json_is_object(info))
                __builtin_trap(); /* an object always converts (only ENOMEM could fail) */
        json_decref(info);
        return 0;
}
