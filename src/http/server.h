/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * HTTP server: the one HTTP stack of the registry, the catalog, the admission webhook, the UI and
 * the manager's probe/metrics endpoints, on the connection engine (http/engine.c over http1.c;
 * TLS on http/tls-conn.c). Knows nothing about any of them.
 *
 * An epoll event loop per thread of a small pool: an idle or stalled connection, TLS handshakes
 * included, holds no thread, only a socket. Handlers may block (a database call); while one
 * does, the other connections of its loop wait, so http_server_config.threads should exceed the
 * number of handlers expected to block at once. The front follows RFC 9112/9110 (see
 * docs/http.md): Content-Length with Transfer-Encoding and conflicting Content-Lengths get 400, a
 * transfer coding other than chunked 501, a request target with a byte outside visible ASCII
 * 400, a target or path over its limit or too many query parameters 414, a path or query that is
 * not percent-encoded UTF-8 400. The path is decoded once (by the router, per segment; req->path
 * stays encoded), query arguments once (by the server). Every refusal the server writes itself
 * has a JSON {code, message} body. Bounded request body (413 past http_server_config.body_max),
 * a deadline for the request head (header_timeout), for the TLS handshake and for the whole
 * request (request_timeout), a limit per client address, and a total limit past which the oldest
 * connection that has no request in progress is closed to make room. The handler gets a struct
 * http_req (everything borrowed for the duration of the call) and fills a struct http_resp; the
 * server sends it after the handler returns.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/cidr.h"
#include "util/time-util.h"
#include "util/macro.h"

struct http_server;
struct sockaddr;

#define HTTP_PARAMS_MAX 8

/* One path parameter captured by the router; both strings owned by the request. */
struct http_param {
        const char *name; /* borrowed from the route pattern */
        char *value;      /* owned; percent-decoded */
};

struct http_req {
        const char *method; /* borrowed */
        const char *path;   /* borrowed; the raw (still percent-encoded) path, without query */
        struct buf body;    /* owned; the request body, NUL-terminated */
        struct http_param params[HTTP_PARAMS_MAX];
        size_t n_params;
        void *route_data; /* borrowed; http_route.data of the matched route */
};

struct http_header {
        char *name;  /* owned */
        char *value; /* owned */
};

struct http_resp {
        unsigned status;
        char *content_type; /* owned; NULL means application/json */
        struct buf body;
        struct http_header *headers; /* owned */
        size_t n_headers;
};

/* Returns 0 after filling resp, or a negative errno that the server turns into a 500. */
typedef int (*http_handler_fn)(void *userdata, struct http_req *req, struct http_resp *resp);

struct http_server_config {
        const char *address;         /* borrowed; "127.0.0.1", "0.0.0.0", "::" ... */
        uint16_t port;               /* 0 picks a free port; see http_server_port() */
        size_t body_max;             /* request bodies above this get 413 */
        unsigned connection_timeout; /* seconds of inactivity before a connection is closed */
        /*
         * Seconds one request may take outside the handler (the TLS handshake, receiving headers
         * and body, sending the response), so a client trickling a byte per idle timeout is cut
         * off; handler time does not count, and each completed request restarts the clock of a
         * keep-alive connection. Must exceed connection_timeout (idle connections are the idle
         * timeout's business); 0 disables.
         */
        unsigned request_timeout;
        /*
         * Concurrent connections. Past it, the oldest connection with no request in progress
         * (idle keep-alive, or its head still incomplete) is closed to make room; when every
         * connection has a request in progress, the new one is closed.
         */
        unsigned max_connections;
        /*
         * Concurrent connections from one client address (0: no limit). One more is answered
         * 429 Too Many Requests with Retry-After (HTTP_PER_IP_RETRY_AFTER) and closed; a TLS
         * connection is closed without an answer (an answer would cost a handshake first).
         */
        unsigned max_per_ip;
        /*
         * Client addresses exempt from max_per_ip: proxies, ingresses, sidecars, behind which
         * many users share one address (borrowed for the call to http_server_start(), copied).
         */
        const struct cidr *trusted_proxies;
        size_t n_trusted_proxies;
        unsigned header_timeout; /* seconds from accept (or the last response) to a full head */
        unsigned tls_handshake_timeout; /* seconds from accept to a finished TLS handshake */
        unsigned threads;               /* event-loop threads (each serves many connections) */
        /* The shape of the JSON bodies the server writes itself (refusals). */
        enum http_error_style {
                /* {"message":"...","code":414}, as a Kubernetes Status (webhook, probes) */
                HTTP_ERROR_NUMERIC,
                /* {"code":"URI Too Long","message":"..."}: the Error schema of the Model Registry
                 * and Model Catalog APIs, whose code is a string (upstream's reason phrase) */
                HTTP_ERROR_REASON,
        } error_style;
        /*
         * Optional: builds the body of every refusal the server writes itself (new reference,
         * NULL on OOM) for an API whose error shape is neither of the above; overrides
         * error_style. Called from the event-loop threads: must be thread-safe.
         */
        json_t *(*error_body)(unsigned status, const char *message);
        http_handler_fn handler;
        void *userdata;
        /* TLS: both set means HTTPS. PEM contents, borrowed for the call to http_server_start(). */
        const char *tls_cert_pem;
        const char *tls_key_pem;
        /*
         * TLS from files, with rotation: both set means HTTPS (exclusive with the PEM fields).
         * Paths, copied. The pair is loaded at start (failure fails the start) and then consulted
         * on every new handshake: when either file changed (inode, size, mtime or ctime of the
         * file the path resolves to, so a Kubernetes secret volume's ..data symlink swap counts),
         * both are re-read and, if they parse and the key matches the certificate, new handshakes
         * use the new pair. A half-written or mismatched pair is ignored (the previous one keeps
         * being served) until the files change again. Open connections are never touched. The
         * cert file may hold a chain (leaf first). TLS below 1.2 is refused in both TLS modes.
         */
        const char *tls_cert_file;
        const char *tls_key_file;
        /*
         * Optional JSON body of the 413 reply sent for an oversized request body, so that an API
         * can keep its own error shape. Must have static storage (e.g. a string literal); NULL
         * means {"message":"request body too large","code":413}.
         */
        const char *too_large_json;
        /* The time the timeouts above are measured in (borrowed; NULL: the monotonic clock).
         * Tests pass tests/fakes/fake-clock.h to cut a connection without depending on load. */
        const struct clock *clock;
};

/* Seconds a client over the per-address limit is asked to wait (Retry-After of the 429): a
 * connection that ends gives its place back at once. */
#define HTTP_PER_IP_RETRY_AFTER "1" /* seconds, as the header value */

#define HTTP_SERVER_CONFIG_DEFAULTS                                               \
        .address = "127.0.0.1", .port = 0, .body_max = (size_t)1024 * 1024,       \
        .connection_timeout = 30, .request_timeout = 60, .max_connections = 4096, \
        .max_per_ip = 256, .header_timeout = 5, .tls_handshake_timeout = 3, .threads = 8

_warn_unused_result_ int http_server_start(const struct http_server_config *cfg,
                                           struct http_server **ret);
/* Stops accepting, waits for in-flight handlers, frees. Accepts NULL; returns NULL. */
struct http_server *http_server_free(struct http_server *s);
DEFINE_CLEANUP_FUNC(struct http_server *, http_server_free)
/* The bound port (useful with port 0). */
uint16_t http_server_port(const struct http_server *s);
/*
 * TLS-from-files servers: how many certificate pairs have been loaded so far (1 after start, +1
 * per accepted rotation). 0 for plain HTTP and static PEM. Thread-safe.
 */
uint64_t http_server_tls_generation(struct http_server *s);
/* How many connections a deadline (head, handshake, request) has cut off so far. Thread-safe. */
uint64_t http_server_deadline_cuts(struct http_server *s);
/* How many idle connections have been closed to make room for new ones. Thread-safe. */
uint64_t http_server_shed_count(struct http_server *s);
/* Connections holding an input buffer now. A connection gets
 * its buffer at its first read, so idle sockets that never send cost none. Thread-safe. */
size_t http_server_input_buffers(struct http_server *s);

/* Limits of the request target (the server answers 414 past them). */
#define HTTP_TARGET_MAX       8192U /* bytes of path and query together */
#define HTTP_PATH_MAX         2048U /* bytes of the path */
#define HTTP_QUERY_PARAMS_MAX 256U  /* query parameters */
/* Limits of the header section (431 past them). */
#define HTTP_HEADERS_MAX      100U                /* header fields */
#define HTTP_HEADER_BYTES_MAX ((size_t)32 * 1024) /* bytes of names and values together */
/*
 * A chunked body over body_max is read and discarded up to this many bytes before the 413 is
 * sent, so that a client that sends its whole body before reading gets the answer instead of a
 * reset; past it the connection is answered and closed at once.
 */
#define HTTP_DRAIN_MAX ((size_t)128 * 1024 * 1024)

/* Borrowed lookups, valid during the handler call. NULL when absent. */
const char *http_req_query(const struct http_req *req, const char *key);
const char *http_req_header(const struct http_req *req, const char *name);
const char *http_req_param(const struct http_req *req, const char *name);
/* The client's address (borrowed, valid during the handler call); NULL when unknown. */
const struct sockaddr *http_req_client_address(const struct http_req *req);
/* Calls fn for every query argument in order (repeated keys included); stops on a negative result. */
int http_req_query_foreach(const struct http_req *req,
                           int (*fn)(void *userdata, const char *key, const char *value),
                           void *userdata);

/* Response builders. They never fail visibly: on OOM the server answers 500. */
void http_resp_set_json(struct http_resp *resp, unsigned status,
                        json_t *body /* takes ownership */);
void http_resp_set_text(struct http_resp *resp, unsigned status, const char *content_type,
                        const char *text);
_warn_unused_result_ int http_resp_add_header(struct http_resp *resp, const char *name,
                                              const char *value);
/* Frees what a handler put in resp and zeroes it. */
void http_resp_release(struct http_resp *resp);

/* Limits for responses we build, so a handler cannot produce an unbounded body. */
#define HTTP_RESPONSE_MAX ((size_t)256 * 1024 * 1024)
