/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The request logger's records of outside input (agent/cloudevent.h): the input is split at NUL
 * bytes into a request id, a content type, header names and values (pairs) and a body, the way a
 * client sends them through the agent.
 * Invariants: no header line has a CR or LF (no header injection), each is "Name: value"; the
 * metadata is a JSON object; the json record parses as an object; the csv record ends in "\n".
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cloudevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PARTS 12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *part[PARTS] = { 0 }, *names[4], *values[4];
        const char *allow[] = { "x-user", "X-Tenant" };
        char *text = malloc(size + 1), **hv = NULL, *md, *js, *csv;
        size_t n = 0, nh = 0;
        json_t *j;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        for (char *p = text; n < PARTS; p += strlen(p) + 1) {
                part[n++] = p;
                if (p + strlen(p) >= text + size)
                        break;
        }
        for (size_t i = 2; i + 1 < n - 1 && nh < 4; i += 2, nh++) {
                names[nh] = part[i];
                values[nh] = part[i + 1];
        }
        md = ce_metadata_json(allow, 2, names, values, nh);
        if (md) {
                j = json_loads(md, 0, NULL);
                if (!json_is_object(j))
                        abort();
                json_decref(j);
        }
        struct ce_event ev = {
                .id = part[0],
                .type = CE_TYPE_RESPONSE,
                .source = "http://src/",
                .content_type = n > 1 ? part[1] : NULL,
                .metadata_json = md,
                .annotations_json = n > 2 ? part[2] : NULL,
                .endpoint = n > 3 ? part[3] : NULL,
                .body = part[n - 1],
                .body_len = strlen(part[n - 1]),
        };
        if (ce_http_headers(&ev, &hv) == 0) {
                for (size_t i = 0; hv[i]; i++)
                        if (strpbrk(hv[i], "\r\n") || !strstr(hv[i], ": "))
                                abort();
                ce_strv_free(hv);
        }
        js = ce_record_json(&ev);
        if (js) {
                j = json_loads(js, 0, NULL);
                /* jansson refuses invalid UTF-8 in strings, so a record may be NULL, never
                 * malformed */
                if (!json_is_object(j))
                        abort();
                json_decref(j);
        }
        csv = ce_record_csv(&ev);
        if (csv && (!*csv || csv[strlen(csv) - 1] != '\n'))
                abort();
        free(js);
        free(csv);
        free(md);
        free(text);
        return 0;
}
