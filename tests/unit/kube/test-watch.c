/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "kube/watch.h"

struct lines {
        char got[16][128];
        size_t n;
        int fail_at; /* return -EPIPE on this line number (1-based), 0 = never */
};

static int collect(void *userdata, const char *line, size_t len)
{
        struct lines *l = userdata;

        cr_assert_eq(strlen(line), len, "line must be NUL-terminated at len");
        cr_assert_lt(l->n, ELEMENTSOF(l->got));
        cr_assert_lt(len, sizeof(l->got[0]));
        memcpy(l->got[l->n], line, len + 1);
        l->n++;
        if (l->fail_at > 0 && (size_t)l->fail_at == l->n)
                return -EPIPE;
        return 0;
}

Test(watch_splitter, lines_split_across_chunks_at_every_position)
{
        static const char stream[] = "{\"a\":1}\n{\"b\":2}\r\n\n  \n{\"c\":3}\n";
        size_t total = strlen(stream);

        for (size_t cut1 = 0; cut1 <= total; cut1++)
                for (size_t cut2 = cut1; cut2 <= total; cut2++) {
                        struct watch_splitter s;
                        struct lines l = { 0 };

                        watch_splitter_init(&s, 0);
                        cr_assert_eq(watch_splitter_feed(&s, stream, cut1, collect, &l), 0);
                        cr_assert_eq(watch_splitter_feed(&s, stream + cut1, cut2 - cut1, collect,
                                                         &l),
                                     0);
                        cr_assert_eq(watch_splitter_feed(&s, stream + cut2, total - cut2, collect,
                                                         &l),
                                     0);
                        cr_assert_eq(watch_splitter_finish(&s), 0);
                        cr_assert_eq(l.n, 3, "cuts %zu/%zu: expected 3 lines, got %zu", cut1, cut2,
                                     l.n);
                        cr_assert_str_eq(l.got[0], "{\"a\":1}");
                        cr_assert_str_eq(l.got[1], "{\"b\":2}", "the \\r must be stripped");
                        cr_assert_str_eq(l.got[2], "{\"c\":3}");
                        watch_splitter_release(&s);
                }
}

Test(watch_splitter, byte_by_byte)
{
        static const char stream[] = "first line\nsecond\n";
        struct watch_splitter s;
        struct lines l = { 0 };

        watch_splitter_init(&s, 64);
        for (size_t i = 0; i < strlen(stream); i++)
                cr_assert_eq(watch_splitter_feed(&s, stream + i, 1, collect, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.got[0], "first line");
        cr_assert_str_eq(l.got[1], "second");
        watch_splitter_release(&s);
}

Test(watch_splitter, over_long_line_is_rejected_and_sticky)
{
        struct watch_splitter s;
        struct lines l = { 0 };
        char big[100];

        memset(big, 'x', sizeof(big));
        watch_splitter_init(&s, 16);
        cr_assert_eq(watch_splitter_feed(&s, "exactly-16-bytes\n", 17, collect, &l), 0,
                     "a line of exactly the limit is accepted");
        cr_assert_eq(l.n, 1);
        cr_assert_eq(watch_splitter_feed(&s, big, 10, collect, &l), 0);
        cr_assert_eq(watch_splitter_feed(&s, big, 10, collect, &l), -EBADMSG,
                     "17+ bytes without a newline must fail");
        cr_assert_eq(watch_splitter_feed(&s, "ok\n", 3, collect, &l), -EBADMSG,
                     "a broken splitter stays broken");
        cr_assert_eq(watch_splitter_finish(&s), -EBADMSG);
        cr_assert_eq(l.n, 1);
        watch_splitter_release(&s);
}

Test(watch_splitter, long_line_in_one_chunk_is_rejected)
{
        struct watch_splitter s;
        struct lines l = { 0 };
        char big[64];

        memset(big, 'y', sizeof(big));
        big[63] = '\n';
        watch_splitter_init(&s, 16);
        cr_assert_eq(watch_splitter_feed(&s, big, sizeof(big), collect, &l), -EBADMSG);
        cr_assert_eq(l.n, 0);
        watch_splitter_release(&s);
}

Test(watch_splitter, nul_byte_is_garbage)
{
        struct watch_splitter s;
        struct lines l = { 0 };

        watch_splitter_init(&s, 0);
        cr_assert_eq(watch_splitter_feed(&s, "ab\0cd\n", 6, collect, &l), -EBADMSG);
        cr_assert_eq(l.n, 0);
        watch_splitter_release(&s);
}

Test(watch_splitter, empty_chunk_without_buffer_is_a_no_op)
{
        struct watch_splitter s;
        struct lines l = { 0 };

        /* (NULL, 0) is accepted; under UBSan it must not reach memchr(NULL, ..., 0) */
        watch_splitter_init(&s, 0);
        cr_assert_eq(watch_splitter_feed(&s, "{}\n{", 4, collect, &l), 0);
        cr_assert_eq(watch_splitter_feed(&s, NULL, 0, collect, &l), 0);
        cr_assert_eq(watch_splitter_feed(&s, "}\n", 2, collect, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.got[1], "{}");
        cr_assert_eq(watch_splitter_feed(&s, NULL, 1, collect, &l), -EINVAL);
        watch_splitter_release(&s);
}

Test(watch_splitter, truncated_last_line_is_reported)
{
        struct watch_splitter s;
        struct lines l = { 0 };

        watch_splitter_init(&s, 0);
        cr_assert_eq(watch_splitter_feed(&s, "{\"a\":1}\n{\"type\":\"ADD", 20, collect, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_eq(watch_splitter_finish(&s), -EBADMSG);
        watch_splitter_release(&s);

        watch_splitter_init(&s, 0);
        cr_assert_eq(watch_splitter_feed(&s, "{}\n \r", 5, collect, &l), 0);
        cr_assert_eq(watch_splitter_finish(&s), 0, "trailing blank space is not a truncated line");
        watch_splitter_release(&s);
}

Test(watch_splitter, callback_error_stops_feeding)
{
        struct watch_splitter s;
        struct lines l = { .fail_at = 2 };

        watch_splitter_init(&s, 0);
        cr_assert_eq(watch_splitter_feed(&s, "1\n2\n3\n", 6, collect, &l), -EPIPE);
        cr_assert_eq(l.n, 2, "no line after the failing one is delivered");
        watch_splitter_release(&s);
}

Test(watch_event, decode_valid_events)
{
        static const char *const lines[] = {
                "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\"}}",
                "{\"type\":\"MODIFIED\",\"object\":{}}",
                "{\"type\":\"DELETED\",\"object\":{}}",
                "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}",
                "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}",
        };
        static const enum watch_event_type want[] = { WATCH_EVENT_ADDED, WATCH_EVENT_MODIFIED,
                                                      WATCH_EVENT_DELETED, WATCH_EVENT_BOOKMARK,
                                                      WATCH_EVENT_ERROR };

        for (size_t i = 0; i < ELEMENTSOF(lines); i++) {
                enum watch_event_type t;
                json_t *obj = NULL;

                cr_assert_eq(watch_event_decode(lines[i], strlen(lines[i]), &t, &obj), 0, "%s",
                             lines[i]);
                cr_assert_eq(t, want[i]);
                cr_assert(json_is_object(obj));
                if (i == 0)
                        cr_assert_str_eq(json_string_value(json_object_get(obj, "kind")),
                                         "ConfigMap", "the object itself is returned");
                json_decref(obj);
        }
}

Test(watch_event, garbage_is_ebadmsg)
{
        static const char *const lines[] = {
                "not json",
                "{\"type\":\"ADDED\"",
                "[1,2]",
                "{\"type\":\"ADDED\"}",
                "{\"type\":\"ADDED\",\"object\":\"x\"}",
                "{\"type\":\"RENAMED\",\"object\":{}}",
                "{\"type\":7,\"object\":{}}",
                "{\"object\":{}}",
                "{\"type\":\"ADDED\",\"object\":{}} trailing",
        };

        for (size_t i = 0; i < ELEMENTSOF(lines); i++) {
                enum watch_event_type t = WATCH_EVENT__INVALID;
                json_t *obj = NULL;

                cr_assert_eq(watch_event_decode(lines[i], strlen(lines[i]), &t, &obj), -EBADMSG,
                             "line %zu: %s", i, lines[i]);
                cr_assert_null(obj, "no object on failure");
                cr_assert_eq(t, WATCH_EVENT__INVALID, "type untouched on failure");
        }
}

Test(watch_event, type_strings_round_trip)
{
        for (int t = 0; t < WATCH_EVENT__MAX; t++)
                cr_assert_eq(watch_event_type_from_string(watch_event_type_to_string(t)), t);
        cr_assert_eq(watch_event_type_from_string("added"), WATCH_EVENT__INVALID);
        cr_assert_null(watch_event_type_to_string(WATCH_EVENT__MAX));
}
