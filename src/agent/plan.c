/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum server_state server_state_from_string(const char *s)
{
        static const struct {
                const char *name;
                enum server_state state;
        } table[] = {
                { "READY", SERVER_READY },     { "UNAVAILABLE", SERVER_UNAVAILABLE },
                { "LOADING", SERVER_LOADING }, { "UNLOADING", SERVER_UNLOADING },
                { "UNKNOWN", SERVER_UNKNOWN },
        };

        if (!s)
                return SERVER_UNKNOWN;
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].name, s))
                        return table[i].state;
        return SERVER_UNKNOWN;
}

const char *model_phase_to_string(enum model_phase p)
{
        static const char *const names[] = {
                [PHASE_PENDING] = "Pending",
                [PHASE_DOWNLOADING] = "Downloading",
                [PHASE_LOADING] = "Loading",
                [PHASE_LOADED] = "Loaded",
                [PHASE_FAILED_TO_DOWNLOAD] = "FailedToDownload",
                [PHASE_FAILED_TO_LOAD] = "FailedToLoad",
                [PHASE_UNLOADING] = "Unloading",
        };
        return (size_t)p < ELEMENTSOF(names) ? names[p] : "Unknown";
}

const char *action_kind_to_string(enum action_kind k)
{
        static const char *const names[] = {
                [ACTION_DOWNLOAD] = "download", [ACTION_LOAD] = "load",
                [ACTION_ADOPT] = "adopt",       [ACTION_UNLOAD] = "unload",
                [ACTION_REMOVE] = "remove",     [ACTION_FORGET] = "forget",
        };
        return (size_t)k < ELEMENTSOF(names) ? names[k] : "?";
}

void plan_result_release(struct plan_result *r)
{
        free(r->actions);
        *r = (struct plan_result){ 0 };
}

usec_t backoff_delay(unsigned failures, usec_t base, usec_t max, double random01)
{
        usec_t d = base;

        for (unsigned i = 1; i < failures && d < max; i++)
                d = d > max / 2 ? max : d * 2;
        if (d > max)
                d = max;
        if (random01 < 0 || random01 >= 1)
                random01 = 0;
        return (usec_t)((double)d * (0.5 + random01 / 2));
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Binary search in an array sorted by its elements' first member, a name string. */
static const void *find_by_name(const void *base, size_t n, size_t size, const char *name)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const void *el = (const char *)base + mid * size;
                int c = strcmp(*(const char *const *)el, name);
                if (c == 0)
                        return el;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static bool str_eq_opt(const char *a, const char *b)
{
        return a && b && streq(a, b);
}

static void plan_one(const struct plan_input *in, const char *name, struct plan_result *out)
{
        const struct model_entry *d = model_entries_find_sorted(in->desired, name);
        const struct disk_model *k = find_by_name(in->disk, in->n_disk, sizeof(*in->disk), name);
        const struct server_model *s = find_by_name(in->server, in->n_server, sizeof(*in->server),
                                                    name);
        const struct model_memory *m = find_by_name(in->memory, in->n_memory, sizeof(*in->memory),
                                                    name);
        enum server_state st = s ? s->state : SERVER_ABSENT;
        struct action a = { .name = name };

        if (d) {
                a.uri = d->storage_uri;
                if (m && str_eq_opt(m->failed_uri, d->storage_uri) && in->now < m->retry_at) {
                        if (m->retry_at < out->next_wake)
                                out->next_wake = m->retry_at;
                        return;
                }
                if (!k || !str_eq_opt(k->source_uri, d->storage_uri)) {
                        a.kind = ACTION_DOWNLOAD;
                } else if (m && str_eq_opt(m->loaded_uri, d->storage_uri)) {
                        if (!in->server_known || (st != SERVER_ABSENT && st != SERVER_UNAVAILABLE))
                                return;
                        a.kind = ACTION_LOAD; /* the server lost it (restarted) */
                } else if ((!m || (!m->loaded_uri && !m->failed_uri)) && in->server_known &&
                           st == SERVER_READY) {
                        a.kind = ACTION_ADOPT;
                } else {
                        a.kind = ACTION_LOAD;
                }
        } else {
                bool maybe_loaded = in->server_known ? (st == SERVER_READY || st == SERVER_LOADING)
                                                     : (m && m->loaded_uri);
                if (maybe_loaded)
                        a.kind = ACTION_UNLOAD;
                else if (k)
                        a.kind = ACTION_REMOVE;
                else if (m)
                        a.kind = ACTION_FORGET;
                else
                        return;
        }
        out->actions[out->n_actions++] = a;
}

int agent_plan(const struct plan_input *in, struct plan_result *ret)
{
        size_t total = in->desired->n + in->n_disk + in->n_server + in->n_memory, n = 0;
        AUTOFREE const char **names = NULL;
        struct plan_result out = { .next_wake = USEC_INFINITY };

        *ret = out;
        if (total == 0)
                return 0;
        names = calloc(total, sizeof(*names));
        out.actions = calloc(total, sizeof(*out.actions));
        if (!names || !out.actions) {
                free(out.actions);
                return -ENOMEM;
        }
        for (size_t i = 0; i < in->desired->n; i++)
                names[n++] = in->desired->items[i].name;
        for (size_t i = 0; i < in->n_disk; i++)
                names[n++] = in->disk[i].name;
        for (size_t i = 0; i < in->n_server; i++)
                names[n++] = in->server[i].name;
        for (size_t i = 0; i < in->n_memory; i++)
                names[n++] = in->memory[i].name;
        qsort(names, n, sizeof(*names), cmp_str);
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && streq(names[i], names[i - 1]))
                        continue;
                plan_one(in, names[i], &out);
        }
        *ret = out;
        return 0;
}
