/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * HTTP/1.1 message syntax (RFC 9112, RFC 9110), a pure core with no I/O: an incremental head
 * parser (requests for the servers, responses for the agent's proxy), an incremental
 * chunked-body decoder and a per-connection message stream over both. They are fed bytes as
 * they arrive and answer "need more", "complete" or "refuse with this status and this message".
 * The message names what was wrong, for the server's JSON error body. Unit-tested
 * (tests/unit/http/test-http1.c) and fuzzed (tests/fuzz/fuzz-http1.c, fuzz-agent-proxy.c). The
 * rules and why are in docs/http.md, "The HTTP/1.1 parser".
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
        /* An HTTP/1.1 request without Host is accepted (the agent's proxy, which passes requests
         * on as KServe's agent did; a server refuses it, RFC 9112 §3.2). */
        bool host_optional;
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
 * The state of one head. Initialise with http1_head_init() (a request) or
 * http1_head_init_response(); the fields are read-only outside the module. Offsets are into the
 * caller's buffer (see http1_head_feed()).
 *
 * A response is checked by the same field rules as a request (no Host rule); its framing
 * (Content-Length, Transfer-Encoding) is refused on the same terms, chunked being the only coding
 * read and Content-Length with Transfer-Encoding refused rather than overridden (RFC 9112 §6.3
 * lets a client treat it as an error; a proxy that passed it on would be a smuggling vector).
 * Every refusal of a response has status 502, what a gateway answers for it.
 */
struct http1_head {
        struct http1_limits limits;
        bool response;      /* a response head (http1_head_init_response()) */
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
        size_t head_len;  /* offset of the first byte after the head (body or next request) */
        size_t start_off; /* offset of the start line (after empty lines before it) */
        size_t method_off, method_len; /* request */
        size_t target_off, target_len; /* request */
        unsigned code;                 /* response: the status code, 100-599 */
        size_t reason_off, reason_len; /* response: the reason phrase (may be empty) */
        unsigned version_minor;        /* 0 or 1 (HTTP/1.2 and later minors are treated as 1.1) */
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
void http1_head_init_response(struct http1_head *h, const struct http1_limits *limits);

/*
 * Parses what is new in buf[0..len): the bytes of the message so far, from its first byte. Between
 * calls the caller may only append (buf may move, its first len bytes must stay the same). Bytes
 * after the head (a body, a pipelined request) are not looked at. Returns HTTP1_COMPLETE once the
 * empty line that ends the head is in buf (h->head_len is its end), HTTP1_REFUSE when the head
 * cannot be a valid request whatever follows (h->status, h->message), else HTTP1_NEED_MORE. Once
 * COMPLETE or REFUSE, further calls return the same.
 */
enum http1_state http1_head_feed(struct http1_head *h, const char *buf, size_t len);

/* Whether the connection stays open after this message (RFC 9112 §9.3): HTTP/1.1 unless
 * "Connection: close", HTTP/1.0 only with "Connection: keep-alive". */
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
 * One connection's stream of messages (keep-alive, pipelining): head, body (Content-Length,
 * chunked or, for a response, until the connection closes), end, next head. Initialise with
 * http1_stream_init() for the requests a server reads, or http1_stream_init_response() for the
 * responses a client (the agent's proxy) reads; fields read-only outside.
 *
 * Responses (RFC 9112 §6.3): a response to HEAD (say so with http1_stream_set_head_request()
 * before its head), a 1xx, a 204 and a 304 have no body; an interim 1xx other than 101 is
 * followed by the final response's head (HTTP1_EV_HEAD again, no HTTP1_EV_END between); after a
 * 101 the stream is closed (another protocol follows); a response with neither Content-Length
 * nor chunked runs until the server closes (http1_stream_eof()) and is the last one.
 *
 * While a body is read, the bytes each event consumes are that body's bytes as they arrived,
 * chunk framing and trailers included, checked before they are consumed: a proxy passes them on
 * as they are (NEED_MORE may consume framing bytes too); HTTP1_EV_DATA's span is the payload
 * among them.
 */
enum http1_event {
        HTTP1_EV_NEED_MORE, /* feed more bytes (keep the ones not consumed, at the front) */
        HTTP1_EV_HEAD,      /* a head is complete: s->head, offsets into this call's buf */
        HTTP1_EV_DATA,      /* body bytes: buf + data_off, data_len */
        HTTP1_EV_END,       /* the message (its body included) ended */
        HTTP1_EV_REFUSE,    /* answer s->status with s->message, then close */
};

/* How a message's body is framed (RFC 9112 §6.3). */
enum http1_body {
        HTTP1_BODY_NONE,        /* no body: a request without one; a 1xx, 204, 304, HEAD answer */
        HTTP1_BODY_LENGTH,      /* head.content_length bytes (maybe 0) */
        HTTP1_BODY_CHUNKED,     /* the chunked coding */
        HTTP1_BODY_UNTIL_CLOSE, /* a response with neither: until the server closes */
};

struct http1_stream {
        struct http1_limits limits;
        int state;            /* enum in http1.c */
        enum http1_body body; /* the current message's, valid from its HTTP1_EV_HEAD */
        bool response;        /* a stream of responses */
        bool head_request;    /* response stream: the current response answers a HEAD */
        uint64_t remaining;   /* Content-Length bytes still to come */
        struct http1_head head;
        struct http1_chunked chunked;
        bool close_after;    /* the current message is the last one (Connection: close, 1.0) */
        unsigned status;     /* valid after HTTP1_EV_REFUSE (502 for every response refusal) */
        const char *message; /* valid after HTTP1_EV_REFUSE: points into head, chunked or a
                                constant */
};

struct http1_step {
        size_t consumed; /* bytes of buf the event used: drop them before the next call */
        size_t data_off; /* HTTP1_EV_DATA: the body bytes, within the consumed ones */
        size_t data_len;
};

void http1_stream_init(struct http1_stream *s, const struct http1_limits *limits);
void http1_stream_init_response(struct http1_stream *s, const struct http1_limits *limits);

/* A response stream: whether the request that the next response answers is a HEAD (then that
 * response has no body). Call before its head; it holds until that response ends. */
void http1_stream_set_head_request(struct http1_stream *s, bool head_request);

/*
 * Advances over buf[0..len): the connection's bytes not consumed yet, oldest first. Returns one
 * event and stores in *ret_step what it used. Once a message that closes the connection has
 * ended, or after a refusal, further bytes are consumed and ignored (HTTP1_EV_NEED_MORE).
 */
enum http1_event http1_stream_feed(struct http1_stream *s, const char *buf, size_t len,
                                   struct http1_step *ret_step);

/*
 * The peer closed the connection with @pending bytes not consumed (call after
 * http1_stream_feed() asked for more). Returns HTTP1_EV_END when that ends a response read until
 * close, HTTP1_EV_NEED_MORE when it came between messages (nothing pending) or after the last
 * one, HTTP1_EV_REFUSE when it cut a message short (s->status 400 for a request, 502 for a
 * response). The stream is closed after.
 */
enum http1_event http1_stream_eof(struct http1_stream *s, size_t pending);
