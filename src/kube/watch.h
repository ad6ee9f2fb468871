/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The watch stream, without I/O: a bounded line splitter and the decoder of one watch event line.
 *
 * A watch response is a chunked stream of JSON objects, one per line in practice:
 *   {"type":"ADDED","object":{...}}\n{"type":"MODIFIED",...}\n
 * Chunk boundaries fall anywhere, so struct watch_splitter keeps the unfinished tail of the
 * previous chunk. Invariants:
 *  - a line is never longer than the limit given to watch_splitter_init(); a longer one is
 *    -EBADMSG, and the splitter is then broken (every later feed fails) until released;
 *  - blank lines (only spaces, tabs, \r) are skipped; a trailing \r is stripped;
 *  - the callback sees each complete line exactly once, in order, NUL-terminated.
 * Fields are private to watch.c.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/macro.h"

/* Longest watch event line accepted (one object, serialized): 16 MiB. etcd's own request limit
 * is 1.5 MiB per object, so a longer line is garbage or an attack. */
#define WATCH_LINE_MAX ((size_t)16 * 1024 * 1024)

struct watch_splitter {
        struct buf pending; /* the unterminated tail of earlier chunks */
        size_t max_line;
        bool broken;
};

/* Called with one complete line (without the newline, NUL-terminated, borrowed for the call).
 * Return < 0 to stop; that value is returned by watch_splitter_feed(). */
typedef int (*watch_line_fn)(void *userdata, const char *line, size_t len);

/* max_line 0 means WATCH_LINE_MAX. */
void watch_splitter_init(struct watch_splitter *s, size_t max_line);
void watch_splitter_release(struct watch_splitter *s);

/*
 * Feeds len bytes; calls fn for every line completed by them. Returns 0, fn's negative value,
 * -EBADMSG for an over-long line or a NUL byte, or -ENOMEM.
 */
_warn_unused_result_ int watch_splitter_feed(struct watch_splitter *s, const char *data, size_t len,
                                             watch_line_fn fn, void *userdata);

/*
 * At the end of the stream: 0 when nothing is pending (or only blank space), -EBADMSG when a
 * truncated line is left over.
 */
_warn_unused_result_ int watch_splitter_finish(struct watch_splitter *s);

enum watch_event_type {
        WATCH_EVENT_ADDED,
        WATCH_EVENT_MODIFIED,
        WATCH_EVENT_DELETED,
        WATCH_EVENT_BOOKMARK,
        WATCH_EVENT_ERROR,
        WATCH_EVENT__MAX,
        WATCH_EVENT__INVALID = -EINVAL,
};

const char *watch_event_type_to_string(enum watch_event_type t); /* NULL if out of range */
enum watch_event_type watch_event_type_from_string(const char *s);

/*
 * Decodes one line: a JSON object with a known string "type" and an object "object".
 * On success *ret_type is set and *ret_object is a new reference to the object.
 * Returns -EBADMSG for anything else (not JSON, unknown type, missing or non-object "object").
 */
_warn_unused_result_ int watch_event_decode(const char *line, size_t len,
                                            enum watch_event_type *ret_type, json_t **ret_object);
