/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/watch.h"

#include <string.h>

#include <jansson.h>

#include "json/json-util.h"

static const char *const event_names[WATCH_EVENT__MAX] = {
        [WATCH_EVENT_ADDED] = "ADDED",     [WATCH_EVENT_MODIFIED] = "MODIFIED",
        [WATCH_EVENT_DELETED] = "DELETED", [WATCH_EVENT_BOOKMARK] = "BOOKMARK",
        [WATCH_EVENT_ERROR] = "ERROR",
};

const char *watch_event_type_to_string(enum watch_event_type t)
{
        if (t < 0 || t >= WATCH_EVENT__MAX)
                return NULL;
        return event_names[t];
}

enum watch_event_type watch_event_type_from_string(const char *s)
{
        if (!s)
                return WATCH_EVENT__INVALID;
        for (size_t i = 0; i < ELEMENTSOF(event_names); i++)
                if (streq(event_names[i], s))
                        return (enum watch_event_type)i;
        return WATCH_EVENT__INVALID;
}

void watch_splitter_init(struct watch_splitter *s, size_t max_line)
{
        if (max_line == 0)
                max_line = WATCH_LINE_MAX;
        /* buf's max counts the NUL */
        buf_init(&s->pending, max_line + 1);
        s->max_line = max_line;
        s->broken = false;
}

void watch_splitter_release(struct watch_splitter *s)
{
        buf_release(&s->pending);
        s->broken = false;
}

static bool is_blank(const char *p, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
                        return false;
        return true;
}

/* Delivers one complete line held in a NUL-terminated writable buffer. */
static int deliver(char *line, size_t len, watch_line_fn fn, void *userdata)
{
        if (len > 0 && line[len - 1] == '\r')
                line[--len] = '\0';
        if (is_blank(line, len))
                return 0;
        return fn(userdata, line, len);
}

int watch_splitter_feed(struct watch_splitter *s, const char *data, size_t len, watch_line_fn fn,
                        void *userdata)
{
        int r;

        if (!s || !fn || (!data && len > 0))
                return -EINVAL;
        if (s->broken)
                return -EBADMSG;
        if (len > 0 && memchr(data, '\0', len)) { /* memchr(NULL, c, 0) is undefined */
                s->broken = true;
                return -EBADMSG;
        }

        while (len > 0) {
                const char *nl = memchr(data, '\n', len);
                size_t take = nl ? (size_t)(nl - data) : len;

                if (s->pending.len + take > s->max_line) {
                        s->broken = true;
                        return -EBADMSG;
                }
                r = buf_append(&s->pending, data, take);
                if (r == -E2BIG) {
                        s->broken = true;
                        return -EBADMSG;
                }
                if (r < 0)
                        return r;
                if (!nl)
                        return 0;

                data += take + 1;
                len -= take + 1;

                /* The callback gets the buffer's own storage; reset it before the next line. */
                r = s->pending.p ? deliver(s->pending.p, s->pending.len, fn, userdata) : 0;
                buf_reset(&s->pending);
                if (r < 0)
                        return r;
        }
        return 0;
}

int watch_splitter_finish(struct watch_splitter *s)
{
        if (!s)
                return -EINVAL;
        if (s->broken)
                return -EBADMSG;
        if (s->pending.len > 0 && !is_blank(s->pending.p, s->pending.len))
                return -EBADMSG;
        return 0;
}

int watch_event_decode(const char *line, size_t len, enum watch_event_type *ret_type,
                       json_t **ret_object)
{
        json_auto_t *ev = NULL;
        enum watch_event_type t;
        json_t *obj;
        int r;

        if (!line || !ret_type || !ret_object)
                return -EINVAL;

        r = json_parse_bounded_flags(line, len, JSON_PARSE_ALLOW_NUL, &ev,
                                     /* reterr= */ NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !json_is_object(ev))
                return -EBADMSG;

        t = watch_event_type_from_string(json_get_string_path(ev, "type", NULL));
        if (t < 0)
                return -EBADMSG;
        obj = json_object_get(ev, "object");
        if (!json_is_object(obj))
                return -EBADMSG;

        *ret_type = t;
        *ret_object = json_incref(obj);
        return 0;
}
