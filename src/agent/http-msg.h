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

/* A receive buffer over a socket. Fields are read-only outside http-msg.c, except fd and tee.
 * With @tee set, the payload bytes of every body copied from this reader (not the chunk framing)
 * are also appended to it; what does not fit its limit sets tee_over. */
struct http_msg_rd {
        int fd;
        struct buf *tee;
        bool tee_over;
        size_t s, e;
        char b[16384];
};

/* One header line of a head: both strings point into the head's text. */
struct http_msg_header {
        char *name; /* points into the head buffer */
        char *value;
};

/* A head split in place by http_msg_parse_head(); strings point into its text. */
struct http_msg_head {
        char *start[3]; /* request: method target version; response: version code reason */
        struct http_msg_header h[128];
        size_t n;
};

enum http_msg_framing {
        HTTP_MSG_FRAME_NONE,
        HTTP_MSG_FRAME_LENGTH,
        HTTP_MSG_FRAME_CHUNKED,
        HTTP_MSG_FRAME_EOF,
};

/* Sends all of @data (MSG_NOSIGNAL). Returns 0 or a negative errno. */
_warn_unused_result_ int http_msg_write_all(int fd, const void *data, size_t len);

/* Reads a head (through the empty line) into @head, whose limit bounds it; empty lines before it
 * are skipped. Returns 0, -ENODATA (clean EOF before any byte), -EMSGSIZE, -EBADMSG (EOF inside),
 * other errno. */
_warn_unused_result_ int http_msg_read_head(struct http_msg_rd *r, struct buf *head);

/* Splits a head in place (start line, then "name: value" lines; no obs-fold, at most
 * ELEMENTSOF(hd->h) headers). Returns 0 or -EBADMSG. */
_warn_unused_result_ int http_msg_parse_head(char *text, struct http_msg_head *hd);

/* The value of the first header @name (case-insensitive), borrowed from @hd, or NULL. */
const char *http_msg_head_get(const struct http_msg_head *hd, const char *name);

/* Whether the comma-separated @list (may be NULL) holds @token, case-insensitively. */
bool http_msg_token_in_list(const char *list, const char *token);

/* The framing of a message and, for HTTP_MSG_FRAME_LENGTH, its length. -EBADMSG for a bad or
 * conflicting Content-Length or CL+TE, -ENOTSUP for a transfer coding other than chunked. */
_warn_unused_result_ int http_msg_framing_of(const struct http_msg_head *hd,
                                             enum http_msg_framing *ret, uint64_t *ret_len);

/* Passes one body from @r to @out as @f says, checking chunked framing (a bad chunk line is
 * refused before it is passed on). @out < 0 reads the body without passing it on (r->tee keeps
 * the payload). Returns 0 or a negative errno (-EBADMSG for bad framing). */
_warn_unused_result_ int http_msg_copy_body(struct http_msg_rd *r, int out, enum http_msg_framing f,
                                            uint64_t len);
