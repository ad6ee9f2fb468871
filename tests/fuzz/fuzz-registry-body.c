/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry's request body decoder: the first byte picks the entity kind and the schema
 * (Create, Update, full), the rest is the body. Parses it as the server does (bounded JSON,
 * duplicate keys rejected), decodes it strictly, checks required fields and encodes what was
 * decoded. A rejection must name what was wrong; an accepted body must encode. Also the path of
 * a U+0000 (reg_body_nul_field), on the same bytes.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "registry/codec.h"
#include "registry/kinds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const enum reg_schema schemas[] = { REG_SCHEMA_CREATE, REG_SCHEMA_UPDATE,
                                                   REG_SCHEMA_FULL };
        const struct reg_kind *k;
        struct reg_input in = { 0 };
        struct error_detail err = { 0 };
        json_t *body = NULL, *out;
        char msg[256];
        int r;

        if (size < 1)
                return 0;
        /* the U+0000 refusal's field: when found, a non-empty path that fits */
        if (reg_body_nul_field((const char *)data + 1, size - 1, msg, sizeof(msg)) &&
            (msg[0] == '\0' || strnlen(msg, sizeof(msg)) == sizeof(msg)))
                __builtin_trap();
        k = reg_kind((enum reg_kind_id)(data[0] % REG_KIND__MAX));
        if (!k || json_parse_bounded((const char *)data + 1, size - 1, &body, NULL) < 0)
                return 0;
        r = reg_decode(k, schemas[(data[0] / REG_KIND__MAX) % 3], body, &in, &err);
        if (r < 0) {
                if (err.message[0] == '\0')
                        __builtin_trap();
        } else {
                in.vals.type = (char *)k->type;
                (void)reg_check_required(&in, &err);
                out = reg_encode(k, &in.vals);
                in.vals.type = NULL;
                if (!out)
                        __builtin_trap();
                json_decref(out);
                reg_input_done(&in);
        }
        json_decref(body);
        return 0;
}
