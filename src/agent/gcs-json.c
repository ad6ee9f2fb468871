/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/gcs-json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "util/parse-util.h"

int gcs_list_parse(const char *json, size_t len, struct s3_list *l)
{
        json_auto_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
        const json_t *items, *tok;
        size_t i;
        json_t *it;
        int r;

        if (!json_is_object(doc))
                return -EBADMSG;
        items = json_object_get(doc, "items");
        if (items && !json_is_array(items))
                return -EBADMSG;
        json_array_foreach(items, i, it) {
                const char *name = json_string_value(json_object_get(it, "name"));
                const char *size = json_string_value(json_object_get(it, "size"));
                const char *md5 = json_string_value(json_object_get(it, "md5Hash"));
                uint64_t n = S3_SIZE_UNKNOWN;
                char *key, *sum = NULL;

                if (!name)
                        return -EBADMSG;
                /* the JSON API writes sizes as decimal strings */
                if (size && safe_atou64(size, &n) < 0)
                        n = S3_SIZE_UNKNOWN;
                key = strdup(name);
                if (md5 && key)
                        sum = strdup(md5);
                if (!key || (md5 && !sum)) {
                        free(key);
                        return -ENOMEM;
                }
                r = s3_list_add(l, key, n, sum);
                if (r < 0)
                        return r;
        }
        tok = json_object_get(doc, "nextPageToken");
        free(l->next_token);
        l->next_token = NULL;
        l->truncated = false;
        if (json_is_string(tok) && json_string_length(tok) > 0) {
                l->next_token = strdup(json_string_value(tok));
                if (!l->next_token)
                        return -ENOMEM;
                l->truncated = true;
        }
        return 0;
}

bool gcs_error_parse(const char *json, size_t len, char *buf, size_t buf_len)
{
        json_auto_t *doc = json_loadb(json, len, 0, NULL);
        const json_t *err = json_object_get(doc, "error");
        const char *msg = json_string_value(json_object_get(err, "message"));

        if (!json_is_object(err) || !msg)
                return false;
        (void)snprintf(buf, buf_len, "%lld: %s",
                       (long long)json_integer_value(json_object_get(err, "code")), msg);
        return true;
}
