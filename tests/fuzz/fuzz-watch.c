/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The watch stream decoder: the input is a byte stream cut into chunks at positions taken from
 * its first bytes, fed through the line splitter (small line limit so that over-long lines are
 * reached), every line decoded as a watch event, ERROR events and the whole input decoded as
 * metav1.Status too.
 */
#include <stdint.h>
#include <string.h>

#include "kube/status.h"
#include "kube/watch.h"

static int on_line(void *userdata, const char *line, size_t len)
{
        enum watch_event_type t;
        json_t *obj = NULL;
        struct kube_status st;

        if (strlen(line) != len)
                __builtin_trap(); /* the splitter promised a NUL at len and none before */
        if (watch_event_decode(line, len, &t, &obj) < 0)
                return 0;
        if (t == WATCH_EVENT_ERROR && kube_status_from_json(obj, &st) >= 0)
                __builtin_trap(); /* an ERROR event is never success */
        json_decref(obj);
        (*(unsigned *)userdata)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct watch_splitter s;
        struct kube_status st;
        unsigned events = 0;
        size_t pos = 0, step;
        int r = 0;

        if (size < 1)
                return 0;
        step = (size_t)data[0] % 64 + 1;
        data++;
        size--;

        watch_splitter_init(&s, 4096);
        while (pos < size && r >= 0) {
                size_t n = size - pos < step ? size - pos : step;

                r = watch_splitter_feed(&s, (const char *)data + pos, n, on_line, &events);
                pos += n;
        }
        if (r >= 0)
                (void)!watch_splitter_finish(&s);
        watch_splitter_release(&s);

        (void)kube_status_from_response(500, (const char *)data, size, &st);
        if (strlen(st.message) >= sizeof(st.message) || strlen(st.reason) >= sizeof(st.reason))
                __builtin_trap();
        return 0;
}
