/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The request logger (KServe's agent pkg/logger, docs/agent.md "Request logging"): the proxy
 * hands every request and response to logger_submit(), which copies it into a bounded queue and
 * never blocks; worker threads POST each as a CloudEvent in binary mode to the log URL (libcurl),
 * or store batches of them (KServe's --log-batch-size) as one json or csv blob, or as a
 * marshaller of one's own writes it (--log-marshaller-url), under KServe's object key: uploaded
 * to an S3, GCS or Azure blob store (agent/fetch.h's fetch_put_object(): the downloads' credentials; a few attempts,
 * then dropped and counted as failed), or written to a directory. A full queue drops the message
 * and counts it: a sink or store that is down or slow never holds inference up.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

struct logger;

enum logger_mode {
        LOGGER_MODE_ALL,
        LOGGER_MODE_REQUEST,
        LOGGER_MODE_RESPONSE,
        LOGGER_MODE__MAX,
        LOGGER_MODE__INVALID = -22,
};
enum logger_mode logger_mode_from_string(const char *s);

struct logger_config {
        const char *url; /* http(s):// CloudEvents sink; s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX],
                          * abfs://CONTAINER@ACCOUNT[/PREFIX] or file:///DIR (blob store) */
        enum logger_mode mode;
        const char *source_uri; /* ce-source (KServe: --source-uri) */
        const char *inference_service, *namespace_, *component, *endpoint;
        char *const *metadata_headers; /* allow list */
        size_t n_metadata_headers;
        const char *annotations_json; /* NULL for none */
        const char *store_path;       /* KServe's --log-store-path: a path segment in the key */
        const char *store_format;     /* csv, else json (parquet is refused) */
        const char *ca_cert_file;     /* relative: under /etc/tls/logger, as KServe */
        bool tls_skip_verify;
        unsigned workers;    /* default 5 */
        unsigned queue_size; /* default 100; raised to twice batch_size */
        /* KServe's --log-batch-size and --log-batch-interval: a store gets one blob per
         * batch_size records (0, 1: each alone; at most LOGGER_BATCH_MAX), keyed by its first;
         * a partial batch is stored once its oldest record waited batch_interval_usec (0: it
         * waits for the batch to fill) */
        unsigned batch_size;
        uint64_t batch_interval_usec;
        /* KServe's --log-marshaller-url: NULL, "" or KServe's default (its agent's embedded
         * marshaller, http://localhost:9083/marshal): records are marshalled in process, in
         * store_format; another URL gets each batch as KServe's agent POSTs it, and its answer
         * is the blob (X-Log-Marshal-Extension: its extension) */
        const char *marshaller_url;
};

#define LOGGER_BATCH_MAX 100000U
/* KServe's default --log-marshaller-url: its agent's own embedded marshaller (here: in process) */
#define LOGGER_MARSHAL_DEFAULT_URL "http://localhost:9083/marshal"
/* Whether a --log-marshaller-url names a marshaller of one's own: set, and not KServe's default
 * (its agent's embedded marshaller, which this agent is in process). */
bool logger_marshaller_remote(const char *url);

struct logger_stats {
        uint64_t queued, sent, failed, dropped; /* records */
        uint64_t blobs;                         /* objects a store got (a batch each) */
};

/* Checks @cfg and starts the workers. -EINVAL (malformed: KServe's agent exits too) or
 * -EOPNOTSUPP (another scheme, or a parquet store: KServe has it, this agent not) with @err
 * set. */
_warn_unused_result_ int logger_start(const struct logger_config *cfg, struct logger **ret,
                                      char *err, size_t err_size);
struct logger *logger_stop(struct logger *l);
DEFINE_CLEANUP_FUNC(struct logger *, logger_stop)

/* One message as the proxy saw it; everything borrowed. */
struct logger_msg {
        bool response;
        const char *id;
        const char *content_type;
        const char *const *names, *const *values; /* the request's headers (metadata) */
        size_t n_headers;
        const void *body;
        size_t body_len;
        uint64_t time_usec; /* CLOCK_REALTIME */
};

/* Whether this mode logs requests / responses. */
bool logger_wants(const struct logger *l, bool response);
/* Queues a copy of @m, or drops and counts it when the queue is full. Never blocks on the sink. */
void logger_submit(struct logger *l, const struct logger_msg *m);
void logger_get_stats(struct logger *l, struct logger_stats *ret);
