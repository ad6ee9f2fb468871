/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A small Prometheus registry: counters, gauges and histograms with labels, serialized in the
 * text exposition format 0.0.4. It is a pure serializer: the manager serves the text at /metrics.
 *
 * A family (name, help, type, label names, histogram buckets) has children, one per tuple of
 * label values. Children are created on first use and live as long as the registry, so a
 * struct metric pointer may be cached and updated without lookups. Updates and serialization are
 * thread-safe. Families and children are serialized sorted by name and label values, as the Go
 * client does; a family without children is omitted.
 *
 * The controller-runtime metric names (../shared/spec/anchors.md §5) are in enum runtime_metric;
 * metrics_runtime_family() registers them on demand with their canonical help, labels and buckets.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/macro.h"

enum metric_type {
        METRIC_COUNTER,
        METRIC_GAUGE,
        METRIC_HISTOGRAM,
        METRIC_TYPE__MAX,
        METRIC_TYPE__INVALID = -EINVAL,
};

#define METRIC_LABELS_MAX  8
#define METRIC_BUCKETS_MAX 64

struct metrics_registry;
struct metric_family;
struct metric;

struct metrics_registry *metrics_registry_new(void);
struct metrics_registry *metrics_registry_free(struct metrics_registry *reg);
DEFINE_CLEANUP_FUNC(struct metrics_registry *, metrics_registry_free)

/*
 * Registers a family, or returns the existing one of that name when type and label names match
 * (-EEXIST when they do not). label_names is NULL-terminated (may be NULL for none); buckets
 * (histograms only) are strictly increasing upper bounds without +Inf. *ret is borrowed from the
 * registry. Names must match [a-zA-Z_:][a-zA-Z0-9_:]*.
 */
_warn_unused_result_ int metrics_register(struct metrics_registry *reg, enum metric_type type,
                                          const char *name, const char *help,
                                          const char *const *label_names, const double *buckets,
                                          size_t n_buckets, struct metric_family **ret);

/* The child for these label values (as many as the family has label names). Borrowed. */
_warn_unused_result_ int metric_family_child(struct metric_family *f,
                                             const char *const *label_values, struct metric **ret);

/* Drops every child of the family: the pointers metric_family_child() returned for it are
 * invalid afterwards. For gauges a collector recomputes whole (a label set that went away, such
 * as a deleted pod's, leaves the exposition instead of staying at its last value). */
void metric_family_clear(struct metric_family *f);

/* Counters: inc/add (negative adds are ignored). Gauges: all of inc/add/set. */
void metric_inc(struct metric *m);
void metric_add(struct metric *m, double v);
void metric_set(struct metric *m, double v);
/* A counter that mirrors a count kept elsewhere (collectors): raised to v, never lowered. */
void metric_raise_to(struct metric *m, double v);
/* Histograms. */
void metric_observe(struct metric *m, double v);
/* Current value of a counter or gauge, or the sample count of a histogram (tests). */
double metric_value(struct metric *m);

/*
 * A collector runs at the start of every serialization (outside the registry lock), to refresh
 * gauges that are computed rather than updated (e.g. workqueue_unfinished_work_seconds). Once
 * metrics_remove_collector() returns, the collector is not running and will not run again, so
 * its userdata may be freed. A collector must not add or remove collectors.
 */
typedef void (*metrics_collect_fn)(void *userdata);
_warn_unused_result_ int metrics_add_collector(struct metrics_registry *reg, metrics_collect_fn fn,
                                               void *userdata);
void metrics_remove_collector(struct metrics_registry *reg, metrics_collect_fn fn, void *userdata);

/* Appends the text exposition (format 0.0.4) of every family to out. */
_warn_unused_result_ int metrics_serialize(struct metrics_registry *reg, struct buf *out);

/* Content-Type of the serialization. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Formats a sample value as Prometheus does (Go's strconv 'g' shortest: 1, 0.005, 1e-08, +Inf). */
void metrics_format_value(double v, char *buf, size_t len);

enum runtime_metric {
        RUNTIME_METRIC_RECONCILE_TOTAL,                 /* counter {controller,result} */
        RUNTIME_METRIC_RECONCILE_ERRORS_TOTAL,          /* counter {controller} */
        RUNTIME_METRIC_TERMINAL_RECONCILE_ERRORS_TOTAL, /* counter {controller} */
        RUNTIME_METRIC_RECONCILE_PANICS_TOTAL,          /* counter {controller} */
        RUNTIME_METRIC_RECONCILE_TIME_SECONDS,          /* histogram {controller} */
        RUNTIME_METRIC_MAX_CONCURRENT_RECONCILES,       /* gauge {controller} */
        RUNTIME_METRIC_ACTIVE_WORKERS,                  /* gauge {controller} */
        RUNTIME_METRIC_WORKQUEUE_DEPTH,                 /* gauge {name,controller} */
        RUNTIME_METRIC_WORKQUEUE_ADDS_TOTAL,            /* counter {name,controller} */
        RUNTIME_METRIC_WORKQUEUE_RETRIES_TOTAL,         /* counter {name,controller} */
        RUNTIME_METRIC_WORKQUEUE_QUEUE_DURATION,        /* histogram {name,controller} */
        RUNTIME_METRIC_WORKQUEUE_WORK_DURATION,         /* histogram {name,controller} */
        RUNTIME_METRIC_WORKQUEUE_UNFINISHED_WORK,       /* gauge {name,controller} */
        RUNTIME_METRIC_WORKQUEUE_LONGEST_RUNNING,       /* gauge {name,controller} */
        RUNTIME_METRIC_REST_CLIENT_REQUESTS_TOTAL,      /* counter {code,method,host} */
        RUNTIME_METRIC_LEADER_ELECTION_MASTER_STATUS,   /* gauge {name} */
        RUNTIME_METRIC__MAX,
        RUNTIME_METRIC__INVALID = -EINVAL,
};

const char *runtime_metric_name(enum runtime_metric m); /* NULL if out of range */

/* Registers (or finds) the family of m with its canonical help, labels and buckets. */
_warn_unused_result_ int metrics_runtime_family(struct metrics_registry *reg, enum runtime_metric m,
                                                struct metric_family **ret);
/* Shorthand: the child of runtime metric m for the given label values. */
_warn_unused_result_ int metrics_runtime_child(struct metrics_registry *reg, enum runtime_metric m,
                                               const char *const *label_values,
                                               struct metric **ret);
