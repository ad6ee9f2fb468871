/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * HTTP/1.1 message framing for the agent's reverse proxy (proxy.c): a buffered socket reader,
 * heads split in place, the framing of a body (RFC 9112 6) and copying a body on unchanged while
 * checking its framing. Blocking I/O on file descriptors; no allocation except the head buffer
 * the caller passes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/macro.h"

/* A receive buffer over a socket. Fields are read-only outside http1.c, except fd. */
struct http1_rd {
        int fd;
        size_t s, e;
        char b[16384];
};

/* One header line of a head: both strings point into the head's text. */
struct http1_header {
        char *name; /* points into the head buffer */
        char *value;
};

/* A head split in place by http1_parse_head(); strings point into its text. */
struct http1_head {
        char *start[3]; /* request: method target version; response: version code reason */
        struct http1_header h[128];
        size_t n;
};

enum http1_framing {
        HTTP1_FRAME_NONE,
        HTTP1_FRAME_LENGTH,
        HTTP1_FRAME_CHUNKED,
        HTTP1_FRAME_EOF,
};

/* Sends all of @data (MSG_NOSIGNAL). Returns 0 or a negative errno. */
_warn_unused_result_ int http1_write_all(int fd, const void *data, size_t len);

/* Reads a head (through the empty line) into @head, whose limit bounds it; empty lines before it
 * are skipped. Returns 0, -ENODATA (clean EOF before any byte), -EMSGSIZE, -EBADMSG (EOF inside),
 * other errno. */
_warn_unused_result_ int http1_read_head(struct http1_rd *r, struct buf *head);

/* Splits a head in place (start line, then "name: value" lines; no obs-fold, at most
 * ELEMENTSOF(hd->h) headers). Returns 0 or -EBADMSG. */
_warn_unused_result_ int http1_parse_head(char *text, struct http1_head *hd);

/* The value of the first header @name (case-insensitive), borrowed from @hd, or NULL. */
const char *http1_head_get(const struct http1_head *hd, const char *name);

/* Whether the comma-separated @list (may be NULL) holds @token, case-insensitively. */
bool http1_token_in_list(const char *list, const char *token);

/* The framing of a message and, for HTTP1_FRAME_LENGTH, its length. -EBADMSG for a bad or
 * conflicting Content-Length or CL+TE, -ENOTSUP for a transfer coding other than chunked. */
_warn_unused_result_ int http1_framing_of(const struct http1_head *hd, enum http1_framing *ret,
                                          uint64_t *ret_len);

/* Passes one body from @r to @out as @f says, checking chunked framing (a bad chunk line is
 * refused before it is passed on). Returns 0 or a negative errno (-EBADMSG for bad framing). */
_warn_unused_result_ int http1_copy_body(struct http1_rd *r, int out, enum http1_framing f,
                                         uint64_t len);
