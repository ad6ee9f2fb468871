/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/hf-json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"

int hf_model_info_parse(const char *json, size_t len, struct s3_list *l, char **ret_sha)
{
        json_auto_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
        const json_t *sib, *sha;
        size_t i;
        json_t *it;
        int r;

        *ret_sha = NULL;
        if (!json_is_object(doc))
                return -EBADMSG;
        sib = json_object_get(doc, "siblings");
        if (!json_is_array(sib))
                return -EBADMSG;
        json_array_foreach(sib, i, it) {
                const char *name = json_string_value(json_object_get(it, "rfilename"));
                const json_t *size = json_object_get(it, "size");
                uint64_t n = S3_SIZE_UNKNOWN;
                char *key;

                if (!name)
                        return -EBADMSG;
                if (json_is_integer(size) && json_integer_value(size) >= 0)
                        n = (uint64_t)json_integer_value(size);
                key = strdup(name);
                if (!key)
                        return -ENOMEM;
                r = s3_list_add(l, key, n, NULL);
                if (r < 0)
                        return r;
        }
        sha = json_object_get(doc, "sha");
        if (json_is_string(sha) && json_string_length(sha) > 0) {
                const char *s = json_string_value(sha);
                /* a commit id: hex only, as it goes into a URL path */
                if (strspn(s, "0123456789abcdef") != strlen(s) || strlen(s) > 64)
                        return -EBADMSG;
                *ret_sha = strdup(s);
                if (!*ret_sha)
                        return -ENOMEM;
        }
        return 0;
}

bool hf_error_parse(const char *json, size_t len, char *buf, size_t buf_len)
{
        json_auto_t *doc = json_loadb(json, len, 0, NULL);
        const char *msg = json_string_value(json_object_get(doc, "error"));

        if (!msg)
                return false;
        (void)snprintf(buf, buf_len, "%s", msg);
        return true;
}
