/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batcher's parsers of outside input (agent/batch.h): the first byte picks the protocol (even
 * V1, odd V2); the rest is split at NUL bytes into up to three request bodies and the model
 * server's answer (the last part). Requests that parse and share the first one's key are merged;
 * the merged body must parse again as one request of the summed rows and the same key, and the
 * answer is split back.
 * Invariants: a split hands out exactly one answer per request, each a JSON object; a merge
 * parses back as one request with the summed rows and the same key.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/batch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct batch_req reqs[3] = { 0 }, again = { 0 };
        const char *parts[4];
        size_t lens[4], n_parts = 0, n = 0, rows = 0;
        enum batch_kind kind;
        char *text, *merged, *out[3], err[256];
        const char *p, *end;

        if (size < 1)
                return 0;
        kind = data[0] % 2 ? BATCH_V2 : BATCH_V1;
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = 0;
        p = text;
        end = text + size - 1;
        while (n_parts < 4) {
                const char *z = memchr(p, 0, (size_t)(end - p));
                parts[n_parts] = p;
                lens[n_parts++] = z ? (size_t)(z - p) : (size_t)(end - p);
                if (!z)
                        break;
                p = z + 1;
        }
        for (size_t i = 0; i + 1 < n_parts || (n_parts == 1 && i == 0); i++) {
                struct batch_req r = { 0 };

                if (batch_req_parse(kind, parts[i], lens[i], &r) < 0)
                        continue;
                if (n > 0 && strcmp(r.key, reqs[0].key) != 0) {
                        batch_req_release(&r);
                        continue;
                }
                rows += r.rows;
                reqs[n++] = r;
                if (n_parts == 1)
                        break;
        }
        if (n > 0) {
                merged = batch_merge(reqs, n);
                if (merged) {
                        /* (a merge past the parser's 2^24 rows is not parsed back) */
                        if (batch_req_parse(kind, merged, strlen(merged), &again) == 0) {
                                if (again.rows != rows || strcmp(again.key, reqs[0].key) != 0)
                                        abort();
                                batch_req_release(&again);
                        } else if (rows <= ((size_t)1 << 24)) {
                                abort();
                        }
                        free(merged);
                }
                if (batch_split(reqs, n, parts[n_parts - 1], lens[n_parts - 1], "fuzz", out, err,
                                sizeof(err)) == 0)
                        for (size_t i = 0; i < n; i++) {
                                json_t *j = json_loads(out[i], 0, NULL);
                                if (!json_is_object(j))
                                        abort();
                                json_decref(j);
                                free(out[i]);
                        }
        }
        for (size_t i = 0; i < n; i++)
                batch_req_release(&reqs[i]);
        free(text);
        return 0;
}
