/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The request batcher (KServe's agent pkg/batcher, docs/agent.md "Batching"): requests to the
 * same model path that arrive within --max-latency of the first are merged (batch.h) into one
 * request to the model server, sent when the batch reaches --max-batchsize rows or the latency
 * is over; the answer is split back to each caller in order. A failed answer goes to every
 * caller of the batch. Each caller's connection thread waits in batcher_submit(); the one that
 * opened the batch (or filled it) sends it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

struct batcher;

struct batcher_config {
        const char *upstream;          /* "http://127.0.0.1:8080" */
        unsigned max_batch_size;       /* rows; default 32 */
        unsigned max_latency_ms;       /* default 5000 */
        unsigned upstream_timeout_sec; /* default 600 */
};

struct batcher_stats {
        uint64_t batches, requests, passthrough, refused;
};

_warn_unused_result_ int batcher_start(const struct batcher_config *cfg, struct batcher **ret);
/* Ends the batches in flight (their callers get 502) so that the proxy can stop; before
 * proxy_stop(). NULL-safe. */
void batcher_cancel(struct batcher *b);
/* After proxy_stop(): no caller is left. */
struct batcher *batcher_stop(struct batcher *b);
DEFINE_CLEANUP_FUNC(struct batcher *, batcher_stop)

/*
 * Answers one request through a batch: *ret_code and *ret_body (owned JSON) are this caller's
 * answer. Returns 0, or -EMEDIUMTYPE when the request is not batched (not a predict/infer path,
 * or a V2 body that cannot be merged): the caller proxies it as it is.
 */
_warn_unused_result_ int batcher_submit(struct batcher *b, const char *path, const char *body,
                                        size_t len, unsigned *ret_code, char **ret_body);
void batcher_get_stats(struct batcher *b, struct batcher_stats *ret);
