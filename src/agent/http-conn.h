/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * One side of a connection of the agent's proxy (proxy.c, forward.c): a blocking socket, the
 * bytes read from it and not used yet, and http/http1.h's message stream over them (the requests
 * of a client, or the responses of a server). Messages are read event by event: a head whole in
 * the buffer, a body as it arrives (never buffered whole), the end. The framing rules are
 * http1's; this module only reads the socket and keeps the buffer (it grows to the head limit
 * only while a head needs it).
 */

#include <stdbool.h>
#include <stddef.h>

#include "http/http1.h"
#include "util/macro.h"

#define HTTP_CONN_FIELDS_MAX 128U

/* The limits of the proxy's connections (clients, the model server, other replicas): heads up
 * to 64 KiB and 128 fields, a target as long as the head allows, and requests without Host
 * passed on (the limits the proxy had before http1; the servers' are for the APIs). */
#define HTTP_CONN_LIMITS_INIT                                                             \
        {                                                                                 \
                .head_max = (size_t)64 * 1024, .target_max = (size_t)64 * 1024,           \
                .fields_max = HTTP_CONN_FIELDS_MAX, .field_bytes_max = (size_t)64 * 1024, \
                .chunk_ext_max = HTTP1_CHUNK_EXT_MAX, .host_optional = true               \
        }

struct http_conn {
        int fd;                 /* borrowed: the caller closes it */
        struct http1_stream st; /* the caller may read it, and set the HEAD flag of responses */
        /* the rest is read-only outside http-conn.c */
        char *b; /* owned; cap bytes; b[s..e) read, not used yet */
        size_t cap, s, e;
        size_t max;  /* cap's limit: a whole head and one more read */
        size_t used; /* bytes the last event handed out, dropped at the next call */
        bool eof;    /* the peer closed */
};

enum http_conn_kind {
        HTTP_CONN_HEAD,   /* a head: bytes, len (st.head's offsets are relative to bytes) */
        HTTP_CONN_BODY,   /* body bytes as they came (bytes, len; chunk framing included), the
                             payload among them: data, data_len (maybe 0) */
        HTTP_CONN_END,    /* the message ended; bytes, len: its last bytes (a chunked body's end) */
        HTTP_CONN_CLOSED, /* the peer closed between messages, or after the last one */
        HTTP_CONN_REFUSE, /* st.status, st.message: the bytes are not a valid message */
};

/* One event; the bytes it points at stay valid until the next call on the connection. */
struct http_conn_event {
        enum http_conn_kind kind;
        const char *bytes;
        size_t len;
        const char *data;
        size_t data_len;
};

/* @limits: NULL for http1's defaults. @response: a stream of responses (else of requests). */
void http_conn_init(struct http_conn *c, int fd, bool response, const struct http1_limits *limits);
/* Frees the buffer (not the socket). The connection may be http_conn_init()ed again. */
void http_conn_release(struct http_conn *c);

/*
 * The next event, reading from the socket when http1 needs more bytes. Returns 0, or a negative
 * errno from recv() (-EAGAIN: the socket's receive timeout passed) or -ENOMEM. After
 * HTTP_CONN_CLOSED, HTTP_CONN_REFUSE or the end of a message that closes the connection
 * (st.close_after), do not call it again.
 */
_warn_unused_result_ int http_conn_next(struct http_conn *c, struct http_conn_event *ret);

/* Whether bytes were read that no event has handed out (a server that sent more than its
 * answer: the connection must not be reused). */
bool http_conn_has_unread(const struct http_conn *c);

/* Sends all of @data (MSG_NOSIGNAL). Returns 0 or a negative errno. */
_warn_unused_result_ int http_conn_write_all(int fd, const void *data, size_t len);
