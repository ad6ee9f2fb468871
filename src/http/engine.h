/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The connection engine: the project's own HTTP/1.1 front on http1.c, under every server
 * (server.h), so that every refusal (a malformed head, a bad Content-Length, a bad chunk, a head
 * over its limits) gets the server's JSON body. Non-blocking sockets and one epoll loop per
 * thread of a small pool; the listening socket is in every loop (EPOLLEXCLUSIVE) and a
 * connection stays on the loop that accepted it. The handler runs on the loop's thread. Keep-alive and pipelining (one request at a time per connection: the
 * next pipelined request is parsed once the previous answer is written). Deadlines: the request
 * head (header_timeout, from accept or from the end of the previous answer, so it also ends idle
 * keep-alive connections) and one request outside the handler (request_timeout). Limits: per
 * client address (refused with 429 and Retry-After) and in all, past which the oldest connection with no request
 * in progress is shut down to make room (the new one is refused with 503 when there is none).
 * Bodies past body_max get 413 (Content-Length at once; a chunked body once it ended, or once
 * HTTP_DRAIN_MAX bytes were discarded). Every refusal closes the connection after its answer.
 * TLS through an optional transport (struct http_engine_transport, tls-conn.c), whose handshake
 * runs in the loop like any other read or write.
 * Design and limits: docs/http.md, "The connection engine".
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "http/server.h"
#include "util/buf.h"
#include "util/macro.h"

struct http_engine;

/* One complete request, borrowed for the duration of the serve call. */
struct http_engine_req {
        const char *method;  /* NUL-terminated */
        const char *target;  /* the raw request target, NUL-terminated */
        const char **fields; /* 2 * n_fields: name, value, ... (values without surrounding space) */
        size_t n_fields;
        unsigned version_minor;
        struct buf body; /* the body, NUL-terminated; the serve call may move it out */
        const struct sockaddr *peer;
        socklen_t peer_len;
};

/*
 * The transport seam: how a connection's bytes are read and written. NULL in the config is
 * plain TCP (recv/send on the socket); tls-conn.c provides TLS. Every call is non-blocking and
 * answers -EAGAIN when the socket must become ready first (readable, or writable when
 * wants_write says so). The engine keeps owning the descriptor.
 */
struct http_engine_transport {
        void *(*open)(void *userdata, int fd);           /* per-connection state; NULL: close it */
        int (*handshake)(void *t);                       /* 0 done, -EAGAIN, else failed (closed) */
        ssize_t (*recv)(void *t, void *buf, size_t len); /* > 0, 0 at EOF, -errno */
        ssize_t (*send)(void *t, const void *buf, size_t len);
        bool (*wants_write)(void *t); /* the direction the -EAGAIN call waits for */
        size_t (*pending)(void *t);   /* bytes readable without the socket */
        void (*bye)(void *t);         /* before the write side is shut */
        void (*close)(void *t);
};

struct http_engine_config {
        const char *address; /* borrowed for the call to http_engine_start(); IPv6 if it has ':' */
        uint16_t port;       /* 0 picks a free port */
        size_t body_max;
        unsigned header_timeout;  /* seconds; 0 disables */
        unsigned request_timeout; /* seconds; 0 disables */
        unsigned max_connections;
        unsigned max_per_ip; /* 0: no limit; past it 429 with Retry-After */
        /* Peers not counted against max_per_ip; borrowed for the engine's life. */
        const struct cidr *per_ip_exempt;
        size_t n_per_ip_exempt;
        unsigned threads;
        /* Answers one request into resp (status, body, headers); called on a loop thread. */
        void (*serve)(void *userdata, struct http_engine_req *req, struct http_resp *resp);
        /* Fills resp with a refusal's body; thread-safe. */
        void (*refuse)(void *userdata, unsigned status, const char *message,
                       struct http_resp *resp);
        void *userdata;
        /* Optional (NULL: plain). A connection's handshake has handshake_timeout seconds from
         * accept (0 disables); it counts towards the limits and is shed like an idle one. */
        const struct http_engine_transport *transport;
        void *transport_userdata;
        unsigned handshake_timeout;
        /* Seconds without a byte read or written, outside the handler, before a connection is
         * cut (a request whose body stalls; server.h's connection_timeout); 0 disables. */
        unsigned idle_timeout;
        /* The time the deadlines above are measured in (borrowed; NULL: the monotonic clock).
         * Tests pass a fake one to cut a connection without waiting or depending on load. */
        const struct clock *clock;
};

_warn_unused_result_ int http_engine_start(const struct http_engine_config *cfg,
                                           struct http_engine **ret);
/* Stops the loops (a handler in progress finishes first), closes every connection. NULL ok. */
struct http_engine *http_engine_free(struct http_engine *e);
DEFINE_CLEANUP_FUNC(struct http_engine *, http_engine_free)
uint16_t http_engine_port(const struct http_engine *e);
uint64_t http_engine_shed_count(const struct http_engine *e);
uint64_t http_engine_deadline_cuts(const struct http_engine *e);
/* The connections holding an input buffer now (allocated at the first read, not at accept). */
size_t http_engine_input_buffers(const struct http_engine *e);

/* The first field named name (case-insensitive), borrowed; NULL when absent. */
const char *http_engine_req_field(const struct http_engine_req *req, const char *name);
