/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct metric {
        struct metric_family *family; /* borrowed back pointer */
        char **values;                /* owned; family->n_labels strings */
        double value;                 /* counter / gauge */
        uint64_t *counts;             /* owned; histogram: per bucket (not cumulative) + +Inf */
        double sum;
        uint64_t count;
};

struct metric_family {
        struct metrics_registry *reg; /* borrowed back pointer */
        enum metric_type type;
        char *name;         /* owned */
        char *help;         /* owned */
        char **label_names; /* owned */
        size_t n_labels;
        double *buckets; /* owned */
        size_t n_buckets;
        struct metric **children; /* owned */
        size_t n_children;
};

struct collector {
        metrics_collect_fn fn;
        void *userdata;
};

struct metrics_registry {
        pthread_mutex_t lock;
        /* held while collectors run and while one is removed, so that a collector is never
         * called after metrics_remove_collector() returned (taken before lock, never after) */
        pthread_mutex_t collect_lock;
        struct metric_family **families; /* owned */
        size_t n_families;
        struct collector *collectors; /* owned */
        size_t n_collectors;
};

static void strv_free(char **v, size_t n)
{
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static struct metric *metric_free(struct metric *m, size_t n_labels)
{
        if (!m)
                return NULL;
        strv_free(m->values, n_labels);
        free(m->counts);
        free(m);
        return NULL;
}

static struct metric_family *family_free(struct metric_family *f)
{
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_children; i++)
                metric_free(f->children[i], f->n_labels);
        free(f->children);
        free(f->name);
        free(f->help);
        strv_free(f->label_names, f->n_labels);
        free(f->buckets);
        free(f);
        return NULL;
}

struct metrics_registry *metrics_registry_new(void)
{
        struct metrics_registry *reg = calloc(1, sizeof(*reg));

        if (!reg)
                return NULL;
        (void)pthread_mutex_init(&reg->lock, NULL);
        (void)pthread_mutex_init(&reg->collect_lock, NULL);
        return reg;
}

struct metrics_registry *metrics_registry_free(struct metrics_registry *reg)
{
        if (!reg)
                return NULL;
        for (size_t i = 0; i < reg->n_families; i++)
                family_free(reg->families[i]);
        free(reg->families);
        free(reg->collectors);
        (void)pthread_mutex_destroy(&reg->collect_lock);
        (void)pthread_mutex_destroy(&reg->lock);
        free(reg);
        return NULL;
}

static bool name_is_valid(const char *s, bool allow_colon)
{
        if (!s || !*s)
                return false;
        for (const char *p = s; *p; p++) {
                char c = *p;
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                          (allow_colon && c == ':') || (p != s && c >= '0' && c <= '9');
                if (!ok)
                        return false;
        }
        return true;
}

static size_t strv_len(const char *const *v)
{
        size_t n = 0;

        while (v && v[n])
                n++;
        return n;
}

static int strv_copy(const char *const *v, size_t n, char ***ret)
{
        char **c;

        if (n == 0) {
                *ret = NULL;
                return 0;
        }
        c = calloc(n, sizeof(*c));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(v[i]);
                if (!c[i]) {
                        strv_free(c, n);
                        return -ENOMEM;
                }
        }
        *ret = c;
        return 0;
}

static bool family_matches(const struct metric_family *f, enum metric_type type,
                           const char *const *label_names, size_t n_labels)
{
        if (f->type != type || f->n_labels != n_labels)
                return false;
        for (size_t i = 0; i < n_labels; i++)
                if (!streq(f->label_names[i], label_names[i]))
                        return false;
        return true;
}

/* The arguments of metrics_register() (all but reg and ret): 0, -EINVAL or -E2BIG. */
static int register_args_check(enum metric_type type, const char *name,
                               const char *const *label_names, size_t n_labels,
                               const double *buckets, size_t n_buckets)
{
        if (type < 0 || type >= METRIC_TYPE__MAX || !name_is_valid(name, true))
                return -EINVAL;
        if (n_labels > METRIC_LABELS_MAX || n_buckets > METRIC_BUCKETS_MAX)
                return -E2BIG;
        for (size_t i = 0; i < n_labels; i++)
                if (!name_is_valid(label_names[i], false) || streq(label_names[i], "le"))
                        return -EINVAL;
        if (type == METRIC_HISTOGRAM)
                for (size_t i = 1; i < n_buckets; i++)
                        if (!(buckets[i] > buckets[i - 1]))
                                return -EINVAL;
        return 0;
}

/* Under reg->lock: the family registered as name, or NULL. */
static struct metric_family *family_find_locked(struct metrics_registry *reg, const char *name)
{
        for (size_t i = 0; i < reg->n_families; i++)
                if (streq(reg->families[i]->name, name))
                        return reg->families[i];
        return NULL;
}

/* A family already registered as name: the same shape is that family, another is -EEXIST.
 * Returns 1 when found, 0 when not. */
static int family_lookup(struct metrics_registry *reg, enum metric_type type, const char *name,
                         const char *const *label_names, size_t n_labels,
                         struct metric_family **ret)
{
        struct metric_family *f;
        int r = 0;

        (void)pthread_mutex_lock(&reg->lock);
        f = family_find_locked(reg, name);
        if (f) {
                r = family_matches(f, type, label_names, n_labels) ? 1 : -EEXIST;
                if (r > 0)
                        *ret = f;
        }
        (void)pthread_mutex_unlock(&reg->lock);
        return r;
}

static struct metric_family *family_new(struct metrics_registry *reg, enum metric_type type,
                                        const char *name, const char *help,
                                        const char *const *label_names, size_t n_labels,
                                        const double *buckets, size_t n_buckets)
{
        struct metric_family *f;

        f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        f->reg = reg;
        f->type = type;
        f->name = strdup(name);
        f->help = strdup(help ? help : "");
        f->n_labels = n_labels;
        if (!f->name || !f->help || strv_copy(label_names, n_labels, &f->label_names) < 0) {
                family_free(f);
                return NULL;
        }
        if (type == METRIC_HISTOGRAM && n_buckets > 0) {
                f->buckets = calloc(n_buckets, sizeof(double));
                if (!f->buckets) {
                        family_free(f);
                        return NULL;
                }
                memcpy(f->buckets, buckets, n_buckets * sizeof(double));
                f->n_buckets = n_buckets;
        }
        return f;
}

/* Adds f (takes ownership) unless somebody registered the same name meanwhile; *ret is the
 * family that stays registered. */
static int family_add(struct metrics_registry *reg, struct metric_family *f,
                      const char *const *label_names, struct metric_family **ret)
{
        struct metric_family *other, **fs;
        int r = 0;

        (void)pthread_mutex_lock(&reg->lock);
        other = family_find_locked(reg, f->name);
        if (other) {
                r = family_matches(other, f->type, label_names, f->n_labels) ? 0 : -EEXIST;
                (void)pthread_mutex_unlock(&reg->lock);
                family_free(f);
                if (r == 0)
                        *ret = other;
                return r;
        }
        fs = reallocarray(reg->families, reg->n_families + 1, sizeof(struct metric_family *));
        if (!fs) {
                (void)pthread_mutex_unlock(&reg->lock);
                family_free(f);
                return -ENOMEM;
        }
        reg->families = fs;
        fs[reg->n_families++] = f;
        (void)pthread_mutex_unlock(&reg->lock);
        *ret = f;
        return 0;
}

int metrics_register(struct metrics_registry *reg, enum metric_type type, const char *name,
                     const char *help, const char *const *label_names, const double *buckets,
                     size_t n_buckets, struct metric_family **ret)
{
        size_t n_labels = strv_len(label_names);
        struct metric_family *f;
        int r;

        if (!reg || !ret)
                return -EINVAL;
        r = register_args_check(type, name, label_names, n_labels, buckets, n_buckets);
        if (r < 0)
                return r;
        r = family_lookup(reg, type, name, label_names, n_labels, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        f = family_new(reg, type, name, help, label_names, n_labels, buckets, n_buckets);
        if (!f)
                return -ENOMEM;
        return family_add(reg, f, label_names, ret);
}

static bool child_matches(const struct metric *m, const char *const *values, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!streq(m->values[i], values[i] ? values[i] : ""))
                        return false;
        return true;
}

int metric_family_child(struct metric_family *f, const char *const *label_values,
                        struct metric **ret)
{
        struct metrics_registry *reg;
        struct metric *m, **cs;

        if (!f || !ret || (f->n_labels > 0 && !label_values))
                return -EINVAL;
        reg = f->reg;
        (void)pthread_mutex_lock(&reg->lock);
        for (size_t i = 0; i < f->n_children; i++)
                if (child_matches(f->children[i], label_values, f->n_labels)) {
                        *ret = f->children[i];
                        (void)pthread_mutex_unlock(&reg->lock);
                        return 0;
                }

        m = calloc(1, sizeof(*m));
        if (!m)
                goto out_enomem;
        m->family = f;
        if (f->n_labels > 0) {
                m->values = calloc(f->n_labels, sizeof(char *));
                if (!m->values)
                        goto out_free_metric;
                for (size_t i = 0; i < f->n_labels; i++) {
                        m->values[i] = strdup(label_values[i] ? label_values[i] : "");
                        if (!m->values[i])
                                goto out_free_metric;
                }
        }
        if (f->type == METRIC_HISTOGRAM) {
                m->counts = calloc(f->n_buckets + 1, sizeof(uint64_t));
                if (!m->counts)
                        goto out_free_metric;
        }
        cs = reallocarray(f->children, f->n_children + 1, sizeof(struct metric *));
        if (!cs)
                goto out_free_metric;
        f->children = cs;
        cs[f->n_children++] = m;
        (void)pthread_mutex_unlock(&reg->lock);
        *ret = m;
        return 0;

out_free_metric:
        metric_free(m, f->n_labels);
out_enomem:
        (void)pthread_mutex_unlock(&reg->lock);
        return -ENOMEM;
}

void metric_family_clear(struct metric_family *f)
{
        if (!f)
                return;
        (void)pthread_mutex_lock(&f->reg->lock);
        for (size_t i = 0; i < f->n_children; i++)
                metric_free(f->children[i], f->n_labels);
        f->n_children = 0;
        (void)pthread_mutex_unlock(&f->reg->lock);
}

void metric_add(struct metric *m, double v)
{
        pthread_mutex_t *lock;

        if (!m)
                return;
        if (m->family->type == METRIC_COUNTER && !(v >= 0))
                return;
        lock = &m->family->reg->lock;
        (void)pthread_mutex_lock(lock);
        m->value += v;
        (void)pthread_mutex_unlock(lock);
}

void metric_inc(struct metric *m)
{
        metric_add(m, 1.0);
}

void metric_set(struct metric *m, double v)
{
        pthread_mutex_t *lock;

        if (!m || m->family->type != METRIC_GAUGE)
                return;
        lock = &m->family->reg->lock;
        (void)pthread_mutex_lock(lock);
        m->value = v;
        (void)pthread_mutex_unlock(lock);
}

void metric_observe(struct metric *m, double v)
{
        struct metric_family *f;
        size_t i;

        if (!m || m->family->type != METRIC_HISTOGRAM)
                return;
        f = m->family;
        (void)pthread_mutex_lock(&f->reg->lock);
        for (i = 0; i < f->n_buckets; i++)
                if (v <= f->buckets[i])
                        break;
        m->counts[i]++;
        m->count++;
        m->sum += v;
        (void)pthread_mutex_unlock(&f->reg->lock);
}

void metric_raise_to(struct metric *m, double v)
{
        pthread_mutex_t *lock;

        if (!m)
                return;
        lock = &m->family->reg->lock;
        (void)pthread_mutex_lock(lock);
        if (v > m->value)
                m->value = v;
        (void)pthread_mutex_unlock(lock);
}

double metric_value(struct metric *m)
{
        double v;

        if (!m)
                return 0;
        (void)pthread_mutex_lock(&m->family->reg->lock);
        v = m->family->type == METRIC_HISTOGRAM ? (double)m->count : m->value;
        (void)pthread_mutex_unlock(&m->family->reg->lock);
        return v;
}

int metrics_add_collector(struct metrics_registry *reg, metrics_collect_fn fn, void *userdata)
{
        struct collector *c;

        if (!reg || !fn)
                return -EINVAL;
        (void)pthread_mutex_lock(&reg->lock);
        c = reallocarray(reg->collectors, reg->n_collectors + 1, sizeof(*c));
        if (!c) {
                (void)pthread_mutex_unlock(&reg->lock);
                return -ENOMEM;
        }
        reg->collectors = c;
        c[reg->n_collectors++] = (struct collector){ .fn = fn, .userdata = userdata };
        (void)pthread_mutex_unlock(&reg->lock);
        return 0;
}

void metrics_remove_collector(struct metrics_registry *reg, metrics_collect_fn fn, void *userdata)
{
        if (!reg)
                return;
        (void)pthread_mutex_lock(&reg->collect_lock);
        (void)pthread_mutex_lock(&reg->lock);
        for (size_t i = 0; i < reg->n_collectors; i++)
                if (reg->collectors[i].fn == fn && reg->collectors[i].userdata == userdata) {
                        memmove(reg->collectors + i, reg->collectors + i + 1,
                                (reg->n_collectors - i - 1) * sizeof(*reg->collectors));
                        reg->n_collectors--;
                        break;
                }
        (void)pthread_mutex_unlock(&reg->lock);
        (void)pthread_mutex_unlock(&reg->collect_lock);
}

void metrics_format_value(double v, char *buf, size_t len)
{
        if (isnan(v)) {
                (void)snprintf(buf, len, "NaN");
                return;
        }
        if (isinf(v)) {
                (void)snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
                return;
        }
        /* integral values print without a fraction (no libm: the range check comes first) */
        if (v > -1e15 && v < 1e15 && v == (double)(long long)v) {
                (void)snprintf(buf, len, "%.0f", v);
                return;
        }
        /* Shortest representation that reads back as the same double (Go's 'g' with -1). */
        for (int prec = 1; prec <= 17; prec++) {
                (void)snprintf(buf, len, "%.*g", prec, v);
                if (strtod(buf, NULL) == v)
                        break;
        }
        /* Go writes exponents with at least two digits, as C does: "1e-08". */
}

static int escape(struct buf *out, const char *s, bool quote)
{
        int r = 0;

        for (const char *p = s; *p && r >= 0; p++) {
                if (*p == '\\')
                        r = buf_puts(out, "\\\\");
                else if (*p == '\n')
                        r = buf_puts(out, "\\n");
                else if (quote && *p == '"')
                        r = buf_puts(out, "\\\"");
                else
                        r = buf_putc(out, *p);
        }
        return r;
}

/* Writes {a="x",b="y"[,le="..."]} (nothing when there are no labels at all). */
static int write_labels(struct buf *out, const struct metric_family *f, const struct metric *m,
                        const char *le)
{
        int r;

        if (f->n_labels == 0 && !le)
                return 0;
        r = buf_putc(out, '{');
        for (size_t i = 0; i < f->n_labels && r >= 0; i++) {
                r = buf_printf(out, "%s%s=\"", i > 0 ? "," : "", f->label_names[i]);
                if (r >= 0)
                        r = escape(out, m->values[i], true);
                if (r >= 0)
                        r = buf_putc(out, '"');
        }
        if (le && r >= 0)
                r = buf_printf(out, "%sle=\"%s\"", f->n_labels > 0 ? "," : "", le);
        if (r >= 0)
                r = buf_putc(out, '}');
        return r;
}

static int write_sample(struct buf *out, const struct metric_family *f, const struct metric *m,
                        const char *suffix, const char *le, double v)
{
        char num[64];
        int r;

        metrics_format_value(v, num, sizeof(num));
        r = buf_printf(out, "%s%s", f->name, suffix);
        if (r >= 0)
                r = write_labels(out, f, m, le);
        if (r >= 0)
                r = buf_printf(out, " %s\n", num);
        return r;
}

static int write_child(struct buf *out, const struct metric_family *f, const struct metric *m)
{
        uint64_t cum = 0;
        char le[64];
        int r = 0;

        if (f->type != METRIC_HISTOGRAM)
                return write_sample(out, f, m, "", NULL, m->value);
        for (size_t i = 0; i < f->n_buckets && r >= 0; i++) {
                cum += m->counts[i];
                metrics_format_value(f->buckets[i], le, sizeof(le));
                r = write_sample(out, f, m, "_bucket", le, (double)cum);
        }
        if (r >= 0)
                r = write_sample(out, f, m, "_bucket", "+Inf", (double)m->count);
        if (r >= 0)
                r = write_sample(out, f, m, "_sum", NULL, m->sum);
        if (r >= 0)
                r = write_sample(out, f, m, "_count", NULL, (double)m->count);
        return r;
}

static int cmp_family(const void *a, const void *b)
{
        const struct metric_family *x = *(struct metric_family *const *)a;
        const struct metric_family *y = *(struct metric_family *const *)b;

        return strcmp(x->name, y->name);
}

static int cmp_child(const void *a, const void *b)
{
        const struct metric *x = *(struct metric *const *)a;
        const struct metric *y = *(struct metric *const *)b;

        for (size_t i = 0; i < x->family->n_labels; i++) {
                int c = strcmp(x->values[i], y->values[i]);
                if (c != 0)
                        return c;
        }
        return 0;
}

static const char *const type_names[METRIC_TYPE__MAX] = {
        [METRIC_COUNTER] = "counter",
        [METRIC_GAUGE] = "gauge",
        [METRIC_HISTOGRAM] = "histogram",
};

int metrics_serialize(struct metrics_registry *reg, struct buf *out)
{
        struct collector *cs = NULL;
        size_t n_cs;
        int r = 0;

        if (!reg || !out)
                return -EINVAL;

        /* Run collectors on a copy, without the registry lock: they update metrics themselves. */
        (void)pthread_mutex_lock(&reg->collect_lock);
        (void)pthread_mutex_lock(&reg->lock);
        n_cs = reg->n_collectors;
        if (n_cs > 0) {
                cs = calloc(n_cs, sizeof(*cs));
                if (cs)
                        memcpy(cs, reg->collectors, n_cs * sizeof(*cs));
        }
        (void)pthread_mutex_unlock(&reg->lock);
        if (n_cs > 0 && !cs) {
                (void)pthread_mutex_unlock(&reg->collect_lock);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_cs; i++)
                cs[i].fn(cs[i].userdata);
        (void)pthread_mutex_unlock(&reg->collect_lock);
        free(cs);

        (void)pthread_mutex_lock(&reg->lock);
        qsort(reg->families, reg->n_families, sizeof(struct metric_family *), cmp_family);
        for (size_t i = 0; i < reg->n_families && r >= 0; i++) {
                struct metric_family *f = reg->families[i];

                if (f->n_children == 0)
                        continue;
                qsort(f->children, f->n_children, sizeof(struct metric *), cmp_child);
                r = buf_printf(out, "# HELP %s ", f->name);
                if (r >= 0)
                        r = escape(out, f->help, false);
                if (r >= 0)
                        r = buf_printf(out, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
                for (size_t j = 0; j < f->n_children && r >= 0; j++)
                        r = write_child(out, f, f->children[j]);
        }
        (void)pthread_mutex_unlock(&reg->lock);
        return r < 0 ? r : 0;
}

/* controller-runtime's reconcile_time_seconds buckets (pkg/internal/controller/metrics). */
static const double reconcile_buckets[] = { 0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2, 0.25,
                                            0.3,   0.35, 0.4,   0.45, 0.5,  0.6,  0.7, 0.8,
                                            0.9,   1.0,  1.25,  1.5,  1.75, 2.0,  2.5, 3.0,
                                            3.5,   4.0,  4.5,   5,    6,    7,    8,   9,
                                            10,    15,   20,    25,   30,   40,   50,  60 };
/* workqueue durations: exponential 1e-8 * 10^k, 12 buckets (client-go / controller-runtime). */
static const double workqueue_buckets[] = { 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                            1e-2, 1e-1, 1,    10,   100,  1000 };

static const char *const labels_controller[] = { "controller", NULL };
static const char *const labels_controller_result[] = { "controller", "result", NULL };
static const char *const labels_queue[] = { "name", "controller", NULL };
static const char *const labels_rest[] = { "code", "method", "host", NULL };
static const char *const labels_name[] = { "name", NULL };

struct runtime_metric_def {
        enum metric_type type;
        const char *name;
        const char *help;
        const char *const *labels;
        const double *buckets;
        size_t n_buckets;
};

static const struct runtime_metric_def runtime_metrics[RUNTIME_METRIC__MAX] = {
        [RUNTIME_METRIC_RECONCILE_TOTAL] = {
                .type = METRIC_COUNTER,
                .name = "controller_runtime_reconcile_total",
                .help = "Total number of reconciliations per controller",
                .labels = labels_controller_result,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_RECONCILE_ERRORS_TOTAL] = {
                .type = METRIC_COUNTER,
                .name = "controller_runtime_reconcile_errors_total",
                .help = "Total number of reconciliation errors per controller",
                .labels = labels_controller,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_TERMINAL_RECONCILE_ERRORS_TOTAL] = {
                .type = METRIC_COUNTER,
                .name = "controller_runtime_terminal_reconcile_errors_total",
                .help = "Total number of terminal reconciliation errors per controller",
                .labels = labels_controller,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_RECONCILE_PANICS_TOTAL] = {
                .type = METRIC_COUNTER,
                .name = "controller_runtime_reconcile_panics_total",
                .help = "Total number of reconciliation panics per controller",
                .labels = labels_controller,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_RECONCILE_TIME_SECONDS] = {
                .type = METRIC_HISTOGRAM,
                .name = "controller_runtime_reconcile_time_seconds",
                .help = "Length of time per reconciliation per controller",
                .labels = labels_controller,
                .buckets = reconcile_buckets, .n_buckets = ELEMENTSOF(reconcile_buckets),
        },
        [RUNTIME_METRIC_MAX_CONCURRENT_RECONCILES] = {
                .type = METRIC_GAUGE,
                .name = "controller_runtime_max_concurrent_reconciles",
                .help = "Maximum number of concurrent reconciles per controller",
                .labels = labels_controller,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_ACTIVE_WORKERS] = {
                .type = METRIC_GAUGE,
                .name = "controller_runtime_active_workers",
                .help = "Number of currently used workers per controller",
                .labels = labels_controller,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_WORKQUEUE_DEPTH] = {
                .type = METRIC_GAUGE,
                .name = "workqueue_depth",
                .help = "Current depth of workqueue",
                .labels = labels_queue,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_WORKQUEUE_ADDS_TOTAL] = {
                .type = METRIC_COUNTER,
                .name = "workqueue_adds_total",
                .help = "Total number of adds handled by workqueue",
                .labels = labels_queue,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_WORKQUEUE_RETRIES_TOTAL] = {
                .type = METRIC_COUNTER,
                .name = "workqueue_retries_total",
                .help = "Total number of retries handled by workqueue",
                .labels = labels_queue,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_WORKQUEUE_QUEUE_DURATION] = {
                .type = METRIC_HISTOGRAM,
                .name = "workqueue_queue_duration_seconds",
                .help = "How long in seconds an item stays in workqueue before being requested",
                .labels = labels_queue,
                .buckets = workqueue_buckets, .n_buckets = ELEMENTSOF(workqueue_buckets),
        },
        [RUNTIME_METRIC_WORKQUEUE_WORK_DURATION] = {
                .type = METRIC_HISTOGRAM,
                .name = "workqueue_work_duration_seconds",
                .help = "How long in seconds processing an item from workqueue takes",
                .labels = labels_queue,
                .buckets = workqueue_buckets, .n_buckets = ELEMENTSOF(workqueue_buckets),
        },
        [RUNTIME_METRIC_WORKQUEUE_UNFINISHED_WORK] = {
                .type = METRIC_GAUGE,
                .name = "workqueue_unfinished_work_seconds",
                .help = "How many seconds of work has been done that is in progress and hasn't been "
                         "observed by work_duration. Large values indicate stuck threads. One can "
                         "deduce the number of stuck threads by observing the rate at which this "
                         "increases.",
                .labels = labels_queue,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_WORKQUEUE_LONGEST_RUNNING] = {
                .type = METRIC_GAUGE,
                .name = "workqueue_longest_running_processor_seconds",
                .help = "How many seconds has the longest running processor for workqueue been "
                         "running.",
                .labels = labels_queue,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_REST_CLIENT_REQUESTS_TOTAL] = {
                .type = METRIC_COUNTER,
                .name = "rest_client_requests_total",
                .help = "Number of HTTP requests, partitioned by status code, method, and host.",
                .labels = labels_rest,
                .buckets = NULL, .n_buckets = 0,
        },
        [RUNTIME_METRIC_LEADER_ELECTION_MASTER_STATUS] = {
                .type = METRIC_GAUGE,
                .name = "leader_election_master_status",
                .help = "Gauge of if the reporting system is master of the relevant lease, 0 "
                         "indicates backup, 1 indicates master. 'name' is the string used to "
                         "identify the lease. Please make sure to group by name.",
                .labels = labels_name,
                .buckets = NULL, .n_buckets = 0,
        },
};

const char *runtime_metric_name(enum runtime_metric m)
{
        if (m < 0 || m >= RUNTIME_METRIC__MAX)
                return NULL;
        return runtime_metrics[m].name;
}

int metrics_runtime_family(struct metrics_registry *reg, enum runtime_metric m,
                           struct metric_family **ret)
{
        const struct runtime_metric_def *d;

        if (m < 0 || m >= RUNTIME_METRIC__MAX)
                return -EINVAL;
        d = &runtime_metrics[m];
        return metrics_register(reg, d->type, d->name, d->help, d->labels, d->buckets, d->n_buckets,
                                ret);
}

int metrics_runtime_child(struct metrics_registry *reg, enum runtime_metric m,
                          const char *const *label_values, struct metric **ret)
{
        struct metric_family *f;
        int r;

        r = metrics_runtime_family(reg, m, &f);
        if (r < 0)
                return r;
        return metric_family_child(f, label_values, ret);
}
