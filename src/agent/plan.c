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

/* What one model's records say, found by name in each input. */
struct model_view {
        const struct model_entry *desired;
        const struct disk_model *disk;
        const struct model_memory *mem;
        enum server_state st;
};

/* A desired model: download, load, adopt what the server already has, or nothing. Returns the
 * action kind, or -1 for none. */
static int plan_desired(const struct plan_input *in, const struct model_view *v)
{
        const char *uri = v->desired->storage_uri;
        const struct model_memory *m = v->mem;

        if (!v->disk || !str_eq_opt(v->disk->source_uri, uri))
                return ACTION_DOWNLOAD;
        if (m && str_eq_opt(m->loaded_uri, uri)) {
                if (!in->server_known || (v->st != SERVER_ABSENT && v->st != SERVER_UNAVAILABLE))
                        return -1;
                return ACTION_LOAD; /* the server lost it (restarted) */
        }
        if ((!m || (!m->loaded_uri && !m->failed_uri)) && in->server_known && v->st == SERVER_READY)
                return ACTION_ADOPT;
        return ACTION_LOAD;
}

/* A model no longer desired: unload, remove from disk, forget, or nothing (-1). */
static int plan_undesired(const struct plan_input *in, const struct model_view *v)
{
        bool maybe_loaded = in->server_known ? (v->st == SERVER_READY || v->st == SERVER_LOADING)
                                             : (v->mem && v->mem->loaded_uri);

        if (maybe_loaded)
                return ACTION_UNLOAD;
        if (v->disk)
                return ACTION_REMOVE;
        if (v->mem)
                return ACTION_FORGET;
        return -1;
}

static void plan_one(const struct plan_input *in, const char *name, struct plan_result *out)
{
        const struct server_model *s = find_by_name(in->server, in->n_server, sizeof(*in->server),
                                                    name);
        struct model_view v = {
                .desired = model_entries_find_sorted(in->desired, name),
                .disk = find_by_name(in->disk, in->n_disk, sizeof(*in->disk), name),
                .mem = find_by_name(in->memory, in->n_memory, sizeof(*in->memory), name),
                .st = s ? s->state : SERVER_ABSENT,
        };
        const struct model_memory *m = v.mem;
        int kind;

        if (v.desired && m && str_eq_opt(m->failed_uri, v.desired->storage_uri) &&
            in->now < m->retry_at) {
                /* a failed download of this URI waits for its back-off */
                if (m->retry_at < out->next_wake)
                        out->next_wake = m->retry_at;
                return;
        }
        kind = v.desired ? plan_desired(in, &v) : plan_undesired(in, &v);
        if (kind < 0)
                return;
        out->actions[out->n_actions++] = (struct action){
                .name = name,
                .uri = v.desired ? v.desired->storage_uri : NULL,
                .kind = (enum action_kind)kind,
        };
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
