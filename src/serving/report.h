/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The per-pod model report of `modelplane agent`: the data of ConfigMap "modelstatus-<pod>", one
 * codec for both sides (the agent writes it, agent/status-writer.c; the controller reads it,
 * serving/replicas.c). Pure: no I/O, no clock (the heartbeat time is an argument).
 *
 *   data:
 *     models.json             compact JSON [{"name","state","storageUri"?,"reason"?}], sorted
 *     pod                     the pod's name
 *     heartbeat               RFC 3339 time of the write (the agent's clock)
 *     heartbeatPeriodSeconds  how often the agent rewrites it at least (decimal)
 *     address                 optional: "host:port" where other replicas reach this agent's
 *                             proxy (placement forwarding, docs/placement.md)
 *     draining                optional: "true" once the agent received SIGTERM: it serves what
 *                             it holds but takes nothing new (the placement hands its models over)
 *
 * Decoding is lenient where the writer may be older or the object was edited: an entry without
 * a string name and state is skipped (the model counts as absent), a models.json that is not a
 * JSON array leaves the report unreadable (its models count as Unknown), a heartbeat that does not
 * parse is absent (never stale), a period outside 1..86400 is the default.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"
#include "util/time-util.h"

#define REPORT_KEY_MODELS      "models.json"
#define REPORT_KEY_POD         "pod"
#define REPORT_KEY_HEARTBEAT   "heartbeat"
#define REPORT_KEY_PERIOD      "heartbeatPeriodSeconds"
#define REPORT_KEY_ADDRESS     "address"
#define REPORT_KEY_DRAINING    "draining"
#define REPORT_ADDRESS_MAX     300U /* longer addresses are ignored when read */
#define REPORT_PERIOD_DEFAULT  10U  /* seconds, when the period is missing or unreadable */
#define REPORT_PERIOD_MAX      86400U
#define REPORT_MODELS_JSON_MAX ((size_t)1 << 20) /* a ConfigMap holds at most 1 MiB */

struct report_model {
        const char *name, *state; /* required */
        const char *storage_uri;  /* may be NULL */
        const char *reason;       /* may be NULL */
};

struct report_meta {
        const char *pod;     /* required */
        const char *address; /* may be NULL: not written */
        bool draining;       /* written only when true */
        usec_t beat;         /* the time of the write */
        unsigned period_sec; /* rewritten at least this often */
};

/*
 * The data object of a report: models (borrowed; any order: written sorted by name) and @meta.
 * Returns: new reference; NULL on OOM, no pod, or a model without a name or state.
 */
json_t *report_data_encode(const struct report_model *models, size_t n,
                           const struct report_meta *meta);

struct report {
        json_t *doc;                 /* owned; the parsed models.json, NULL when unreadable */
        struct report_model *models; /* owned array; strings borrowed from doc; sorted by name */
        size_t n;
        const char *pod;     /* borrowed from the data object; NULL when absent */
        const char *address; /* borrowed; NULL when absent, empty or over REPORT_ADDRESS_MAX */
        bool draining;       /* data.draining is "true" */
        bool has_heartbeat;
        usec_t heartbeat;
        unsigned period_sec;
};

/* Decodes a report's data object (borrowed; may be NULL: nothing readable). Returns 0, -ENOMEM. */
_warn_unused_result_ int report_data_decode(const json_t *data, struct report *ret);
void report_release(struct report *r);

/*
 * The heartbeat of a data object: its time, and the period (the default when missing or outside
 * 1..REPORT_PERIOD_MAX). False when there is no readable heartbeat (*ret_period_sec is still set).
 */
bool report_heartbeat(const json_t *data, usec_t *ret_beat, unsigned *ret_period_sec);

/* The model named @name in a decoded report, or NULL. */
const struct report_model *report_find(const struct report *r, const char *name);
