/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's serving port: an HTTP/1.1 reverse proxy to the model server on loopback, as
 * KServe's agent is (its readiness included). One thread per client connection, one upstream
 * connection per client connection, reused while both sides keep the connection alive. Messages
 * are framed by the project's one HTTP/1.1 parser (http/http1.h, through agent/http-conn.h):
 * bodies are streamed in both directions as they arrive (Content-Length, chunked - the chunk
 * framing is checked, then passed on as it came - or, for a response, until the server closes);
 * request and response headers are passed through except the hop-by-hop ones (Connection and the
 * headers it names, Keep-Alive, Proxy-*, TE, Trailer, Upgrade, and the placement hop header);
 * X-Forwarded-For is appended. "Expect: 100-continue" is answered by the proxy. A request http1
 * refuses gets its status with http1's message as text (400 for obs-fold, a bad Content-Length,
 * both Content-Length and Transfer-Encoding, and an HTTP version other than 1.x; 501 for an
 * unknown transfer coding; 431 for a head over 64 KiB); a request without Host is passed on. An
 * unreachable model server, or an answer http1 refuses, is 502.
 *
 * Placement (issue 30; @route set): a request for a model (agent/infer-path.h) that is not Loaded
 * here goes to a replica that holds it over a keep-alive pool, carrying the hop header
 * "Modelplane-Forwarded-By: <pod>"; a request that carries it already and whose model is not
 * here, or whose model is Loaded nowhere within @forward_wait, gets 503 with "Retry-After: 1"
 * and a JSON body naming the model (agent/forward.h has the rules). Forwarded exchanges are
 * neither tapped nor batched here: the replica that serves them does that.
 *
 * Readiness (Knative's queue semantics, which KServe's agent reuses): a request carrying
 * "K-Network-Probe: queue", or with a "kube-probe/" User-Agent, is answered by the proxy: 200
 * when @ready says so, 503 otherwise; another K-Network-Probe value is 400. GET @status_path
 * (when set) is the agent's own per-model status, GET @metrics_path its counters.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

struct agent_route_port;
struct proxy;

/* One message for the tap (the request logger); everything borrowed for the call only. */
struct proxy_tap_msg {
        bool response;
        const char *id; /* the request's Ce-Id, else X-Request-Id, else a random UUID */
        /* the request's header fields (for metadata), in order */
        const char *const *names;
        const char *const *values;
        size_t n_headers;
        const char *content_type;
        const char *body;
        size_t body_len;
        unsigned code;      /* response: its status */
        uint64_t time_usec; /* CLOCK_REALTIME: request head read / response complete */
};

struct proxy_config {
        const char *address;       /* borrowed; listen address, e.g. "0.0.0.0" */
        uint16_t port;             /* 0 = any free port */
        const char *upstream_host; /* borrowed; "127.0.0.1" */
        uint16_t upstream_port;
        unsigned max_connections;  /* default 1024 */
        unsigned idle_timeout_sec; /* client idle (between requests / within reads), default 120 */
        unsigned upstream_timeout_sec; /* model server silence, default 600 */
        /* At proxy_stop(): connections waiting for a request are closed at once; exchanges in
         * flight get this long to finish (then every connection is cut). Default 10000. */
        unsigned stop_grace_ms;
        bool (*ready)(void *userdata);
        void *ready_userdata;
        /* Optional: GET of exactly @status_path is answered with status()'s JSON (owned string;
         * NULL = 500) instead of being proxied. */
        const char *status_path;
        char *(*status)(void *userdata);
        /* Optional: GET of exactly @metrics_path is answered with metrics()'s text (Prometheus
         * exposition format; owned string; NULL = 500). */
        const char *metrics_path;
        char *(*metrics)(void *userdata);
        /* Optional tap: called with each proxied request once its body was passed on, and with
         * each 200 response once complete (KServe's logger logs only those). Bodies are kept up
         * to tap_body_max bytes (default 16 MiB) while they stream; a longer one is not tapped
         * and tap_skipped() is called instead. Must not block. */
        void (*tap)(void *userdata, const struct proxy_tap_msg *m);
        void (*tap_skipped)(void *userdata);
        void *tap_userdata;
        size_t tap_body_max;
        /* Optional batcher: a POST whose body is read whole (at most 64 MiB) and answered by
         * batch() (0: *ret_code, *ret_body owned JSON), or proxied as it is (-EMEDIUMTYPE). */
        int (*batch)(void *userdata, const char *path, const char *body, size_t len,
                     unsigned *ret_code, char **ret_body);
        void *batch_userdata;
        /* Optional, placement: the routing port (NULL: every request goes to the model server,
         * as without placement), model_loaded() (whether a model is Loaded here; called with
         * ready_userdata), this pod's name for the hop header, how long a request for a model
         * Loaded nowhere yet waits (default 10000 ms), connections open to one replica at most
         * (default 256). */
        const struct agent_route_port *route;
        bool (*model_loaded)(void *userdata, const char *model);
        const char *pod_name;
        unsigned forward_wait_ms;
        unsigned forward_max_per_peer;
};

_warn_unused_result_ int proxy_start(const struct proxy_config *cfg, struct proxy **ret);
uint16_t proxy_port(const struct proxy *p);
/* Stops accepting, shuts every open connection down, waits for their threads. NULL-safe. */
struct proxy *proxy_stop(struct proxy *p);
DEFINE_CLEANUP_FUNC(struct proxy *, proxy_stop)
