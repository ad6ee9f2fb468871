/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * HTTP/1.1 message syntax (RFC 9112, RFC 9110), a pure core with no I/O: an incremental
 * request-head parser and an incremental chunked-body decoder. Both are fed bytes as they arrive
 * and answer "need more", "complete" or "refuse with this status and this message". The message
 * names what was wrong, for the server's JSON error body. Unit-tested (tests/unit/http/
 * test-http1.c) and fuzzed (tests/fuzz/fuzz-http1.c). The rules and why are in docs/http.md,
 * "The HTTP/1.1 parser".
 *
 * Line ends: the head accepts CRLF or a bare LF (RFC 9112 §2.2); a bare CR anywhere is refused.
 * Chunk framing and trailers want CRLF exactly (no leniency in the body's framing, where a
 * disagreement with a proxy in front would be a request-smuggling vector).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

enum http1_state {
        HTTP1_NEED_MORE, /* feed more bytes */
        HTTP1_COMPLETE,  /* the head (or the chunked body) ended */
        HTTP1_REFUSE,    /* answer ->status with ->message and close */
};

struct http1_limits {
        size_t head_max;        /* bytes of the head, request line and empty line included: 431 */
        size_t target_max;      /* bytes of the request target: 414 */
        size_t fields_max;      /* header (or trailer) fields: 431 */
        size_t field_bytes_max; /* bytes of field names and values together: 431 */
        size_t chunk_ext_max;   /* bytes of one chunk-size line's extensions: 400 */
};

#define HTTP1_HEAD_MAX      ((size_t)64 * 1024)
#define HTTP1_CHUNK_EXT_MAX 4096U
/* The limits the servers use (the target and header limits of http/server.h). */
#define HTTP1_LIMITS_DEFAULT                                          \
        ((struct http1_limits){ .head_max = HTTP1_HEAD_MAX,           \
                                .target_max = 8192U,                  \
                                .fields_max = 100U,                   \
                                .field_bytes_max = (size_t)32 * 1024, \
                                .chunk_ext_max = HTTP1_CHUNK_EXT_MAX })

#define HTTP1_MESSAGE_MAX 160

/*
 * The state of one request head. Initialise with http1_head_init(); the fields are read-only
 * outside the module. Offsets are into the caller's buffer (see http1_head_feed()).
 */
struct http1_head {
        struct http1_limits limits;
        size_t pos;         /* start of the first line not parsed yet */
        bool in_fields;     /* the request line is parsed */
        size_t n_fields;    /* fields so far */
        size_t field_bytes; /* bytes of names and values so far */
        /* Transfer-Encoding, over all its fields */
        unsigned te_codings;  /* codings named */
        unsigned te_chunked;  /* how many of them are "chunked" */
        bool te_chunked_last; /* the last one named is "chunked" */
        bool te_syntax_bad;   /* an element that is not a token */
        char te_unknown[48];  /* the first coding other than chunked, truncated */
        bool has_te;          /* a Transfer-Encoding field was seen */
        unsigned n_host;      /* Host fields */

        /* results, valid once http1_head_feed() returned HTTP1_COMPLETE */
        size_t head_len; /* offset of the first byte after the head (body or next request) */
        size_t method_off, method_len;
        size_t target_off, target_len;
        unsigned version_minor; /* 0 or 1 (HTTP/1.2 and later minors are treated as 1.1) */
        bool has_content_length;
        uint64_t content_length;
        bool chunked;         /* Transfer-Encoding: chunked */
        bool conn_close;      /* Connection: close */
        bool conn_keep_alive; /* Connection: keep-alive (HTTP/1.0) */
        bool expect_continue; /* Expect: 100-continue */

        /* valid once http1_head_feed() returned HTTP1_REFUSE */
        unsigned status;
        char message[HTTP1_MESSAGE_MAX];
};

void http1_head_init(struct http1_head *h, const struct http1_limits *limits);

/*
 * Parses what is new in buf[0..len): the bytes of the request so far, from its first byte. Between
 * calls the caller may only append (buf may move, its first len bytes must stay the same). Bytes
 * after the head (a body, a pipelined request) are not looked at. Returns HTTP1_COMPLETE once the
 * empty line that ends the head is in buf (h->head_len is its end), HTTP1_REFUSE when the head
 * cannot be a valid request whatever follows (h->status, h->message), else HTTP1_NEED_MORE. Once
 * COMPLETE or REFUSE, further calls return the same.
 */
enum http1_state http1_head_feed(struct http1_head *h, const char *buf, size_t len);

/* Whether the connection stays open after this request's answer (RFC 9112 §9.3). */
bool http1_head_keep_alive(const struct http1_head *h);

/*
 * Walks the header fields of a complete head: *cursor starts at 0; each call stores the next
 * field's name and value (without surrounding whitespace) as views into buf and returns true,
 * false after the last one.
 */
bool http1_head_next_field(const struct http1_head *h, const char *buf, size_t *cursor,
                           const char **ret_name, size_t *ret_name_len, const char **ret_value,
                           size_t *ret_value_len);

/* The chunked-body decoder (RFC 9112 §7.1). Initialise with http1_chunked_init(). */
struct http1_chunked {
        struct http1_limits limits;
        int state;            /* enum in http1.c */
        uint64_t remaining;   /* bytes of chunk data still to come */
        uint64_t size;        /* the size being parsed */
        unsigned digits;      /* hex digits of the size being parsed */
        size_t ext_len;       /* bytes of extensions on the size line being parsed */
        size_t n_trailers;    /* trailer fields so far */
        size_t trailer_bytes; /* bytes of trailer lines so far */
        uint64_t body_len;    /* data bytes decoded so far */
        unsigned status;      /* valid after HTTP1_REFUSE */
        char message[HTTP1_MESSAGE_MAX];
};

void http1_chunked_init(struct http1_chunked *c, const struct http1_limits *limits);

/*
 * Decodes in[0..len), the body bytes that follow the head (or the previous call's consumed
 * bytes). Stores in *ret_consumed how many bytes of in were used, and in *ret_data_off and
 * *ret_data_len the one span of chunk data among them (length 0 if none). Returns HTTP1_NEED_MORE
 * (call again with in + *ret_consumed, or with new bytes once all are used), HTTP1_COMPLETE
 * (the last chunk and the trailer section ended at in + *ret_consumed; what follows is the next
 * request) or HTTP1_REFUSE (c->status, c->message). Trailer fields are checked and dropped.
 */
enum http1_state http1_chunked_feed(struct http1_chunked *c, const char *in, size_t len,
                                    size_t *ret_consumed, size_t *ret_data_off,
                                    size_t *ret_data_len);

/*
 * One connection's request stream (keep-alive, pipelining): head, body (Content-Length or
 * chunked), end, next head. Initialise with http1_stream_init(); fields read-only outside.
 */
enum http1_event {
        HTTP1_EV_NEED_MORE, /* feed more bytes (keep the ones not consumed, at the front) */
        HTTP1_EV_HEAD,      /* a request head is complete: s->head, offsets into this call's buf */
        HTTP1_EV_DATA,      /* body bytes: buf + data_off, data_len */
        HTTP1_EV_END,       /* the request (its body included) ended */
        HTTP1_EV_REFUSE,    /* answer s->status with s->message, then close */
};

struct http1_stream {
        struct http1_limits limits;
        int state;          /* enum in http1.c */
        uint64_t remaining; /* Content-Length bytes still to come */
        struct http1_head head;
        struct http1_chunked chunked;
        bool close_after;    /* the current request is the last one (Connection: close, 1.0) */
        unsigned status;     /* valid after HTTP1_EV_REFUSE */
        const char *message; /* valid after HTTP1_EV_REFUSE: points into head or chunked */
};

struct http1_step {
        size_t consumed; /* bytes of buf the event used: drop them before the next call */
        size_t data_off; /* HTTP1_EV_DATA: the body bytes, within the consumed ones */
        size_t data_len;
};

void http1_stream_init(struct http1_stream *s, const struct http1_limits *limits);

/*
 * Advances over buf[0..len): the connection's bytes not consumed yet, oldest first. Returns one
 * event and stores in *ret_step what it used. Once a request that closes the connection has
 * ended, or after a refusal, further bytes are consumed and ignored (HTTP1_EV_NEED_MORE).
 */
enum http1_event http1_stream_feed(struct http1_stream *s, const char *buf, size_t len,
                                   struct http1_step *ret_step);
