/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/string-util.h"

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
                [ACTION_CANCEL] = "cancel",
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
        bool found;
        size_t pos = sorted_find(base, n, size, name, &found);

        return found ? (const char *)base + pos * size : NULL;
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
        if (m && str_eq_opt(m->loaded_uri, uri) && !m->fresh_copy) {
                if (!in->server_known || (v->st != SERVER_ABSENT && v->st != SERVER_UNAVAILABLE))
                        return -1;
                return ACTION_LOAD; /* the server lost it (restarted) */
        }
        if ((!m || (!m->loaded_uri && !m->failed_uri && !m->fresh_copy)) && in->server_known &&
            v->st == SERVER_READY)
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

static void plan_add(struct plan_result *out, enum action_kind kind, const char *name,
                     const char *uri)
{
        out->actions[out->n_actions++] = (struct action){ .kind = kind, .name = name, .uri = uri };
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
        struct model_memory idle;
        int kind;

        if (m && (m->busy == BUSY_LOAD || m->busy == BUSY_UNLOAD))
                return; /* a call in flight: its answer comes first */
        if (m && m->busy == BUSY_DOWNLOAD) {
                if (v.desired && str_eq_opt(m->busy_uri, v.desired->storage_uri))
                        return; /* the wanted download is on its way */
                /* no longer wanted: cancel it and plan as if it had never started */
                plan_add(out, ACTION_CANCEL, name, m->busy_uri);
                idle = *m;
                idle.busy = BUSY_NONE;
                idle.busy_uri = NULL;
                v.mem = m = &idle;
        }
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
        plan_add(out, (enum action_kind)kind, name, v.desired ? v.desired->storage_uri : NULL);
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
        out.actions = calloc(total, 2 * sizeof(*out.actions)); /* a cancel and one more per name */
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

const char *agent_model_name_problem(const char *name, size_t len)
{
        if (!name || len == 0)
                return "the model name is empty";
        if (memchr(name, 0, len))
                return "the model name contains U+0000";
        if (len > AGENT_NAME_MAX)
                return "the model name is longer than 240 bytes";
        if (streq(name, ".") || streq(name, ".."))
                return "the model name is . or ..";
        if (name[0] == '.')
                return "the model name starts with a dot (hidden; ..data and .mp-tmp- are the "
                       "kubelet's and the agent's own)";
        if (strchr(name, '/'))
                return "the model name contains /";
        return NULL;
}

void model_refusals_release(struct model_refusals *r)
{
        for (size_t i = 0; i < r->n; i++) {
                json_decref(r->items[i].name);
                free(r->items[i].reason);
        }
        free(r->items);
        *r = (struct model_refusals){ 0 };
}

/* modelName as the entry spells it (exact key first, then ASCII case-insensitive, as
 * modelconfig.c reads it), NULL when it is not a string. Borrowed. */
static json_t *entry_name(json_t *e)
{
        json_t *v, *found = NULL;
        const char *key;

        if (!json_is_object(e))
                return NULL;
        v = json_object_get(e, "modelName");
        if (!v)
                json_object_foreach(e, key, v)
                        if (strcasecmp(key, "modelName") == 0)
                                found = v;
        v = v ? v : found;
        return json_is_string(v) ? v : NULL;
}

static int refuse(struct model_refusals *out, json_t *name, const char *reason)
{
        struct model_refusal *v;
        AUTOFREE char *copy = strdup(reason);

        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < out->n; i++)
                if (json_equal(out->items[i].name, name))
                        return 0; /* the first reason stands */
        v = reallocarray(out->items, out->n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        out->items = v;
        out->items[out->n++] = (struct model_refusal){ .name = json_incref(name),
                                                       .reason = TAKE_PTR(copy) };
        return 0;
}

static int cmp_refusal(const void *x, const void *y)
{
        const json_t *a = ((const struct model_refusal *)x)->name;
        const json_t *b = ((const struct model_refusal *)y)->name;
        size_t la = json_string_length(a), lb = json_string_length(b);
        int c = memcmp(json_string_value(a), json_string_value(b), MIN(la, lb));

        return c != 0 ? c : (la > lb) - (la < lb);
}

/* Reads one element: appended to @all, or refused. */
static int desired_entry(json_t *e, size_t idx, struct model_entries *all,
                         struct model_refusals *refused)
{
        char err[512] = "", why[640];
        json_t *name = entry_name(e);
        const char *problem;
        int r;

        r = modelconfig_parse_entry(e, all, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                json_auto_t *anon = NULL;

                (void)snprintf(why, sizeof(why), "invalid entry %zu in models.json: %s", idx, err);
                if (!name) {
                        anon = json_sprintf("#%zu", idx); /* no name to report it under */
                        if (!anon)
                                return -ENOMEM;
                        return refuse(refused, anon, why);
                }
                return refuse(refused, name, why);
        }
        if (json_is_null(e))
                return 0; /* carries no model */
        problem = name ? agent_model_name_problem(json_string_value(name), json_string_length(name))
                       : agent_model_name_problem("", 0);
        if (problem) {
                json_auto_t *empty = name ? NULL : json_string("");

                if (!name && !empty)
                        return -ENOMEM;
                (void)snprintf(why, sizeof(why), "unsafe model name in models.json: %s", problem);
                return refuse(refused, name ? name : empty, why);
        }
        return 0;
}

/* Whether @name (a C string) is a refused entry's. */
static bool is_refused(const struct model_refusals *refused, const char *name)
{
        for (size_t j = 0; j < refused->n; j++)
                if (json_string_length(refused->items[j].name) == strlen(name) &&
                    streq(json_string_value(refused->items[j].name), name))
                        return true;
        return false;
}

static int cmp_entry_ptr(const void *a, const void *b)
{
        const struct model_entry *x = *(const struct model_entry *const *)a;
        const struct model_entry *y = *(const struct model_entry *const *)b;
        int c = strcmp(x->name, y->name);

        /* the entries are one array: by address is their order in models.json */
        return c ? c : (x < y ? -1 : x > y);
}

/* The decoded entries of @all with a safe name, not refused, once each, into @out; a name listed
 * again with another spec is refused (and dropped). Sorted by name first, so that finding the
 * entries of one name is O(n log n) for the whole list, not O(n²). */
static int desired_keep(const struct model_entries *all, struct model_entries *out,
                        struct model_refusals *refused)
{
        AUTOFREE const struct model_entry **v = calloc(all->n ? all->n : 1,
                                                       sizeof(const struct model_entry *));
        int r;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < all->n; i++)
                v[i] = &all->items[i];
        qsort(v, all->n, sizeof(const struct model_entry *), cmp_entry_ptr);
        for (size_t i = 0, j; i < all->n; i = j) {
                const struct model_entry *m = v[i];
                bool conflict = false;
                json_auto_t *n = NULL;

                for (j = i + 1; j < all->n && streq(v[j]->name, m->name); j++)
                        conflict = conflict || !model_entry_equal(m, v[j]);
                /* an unsafe name (an entry without modelName included) is refused already */
                if (agent_model_name_problem(m->name, strlen(m->name)) ||
                    is_refused(refused, m->name))
                        continue;
                if (!conflict) {
                        r = model_entries_append(out, m->name, m->storage_uri, m->framework,
                                                 m->memory);
                        if (r < 0)
                                return r;
                        continue;
                }
                n = json_string(m->name);
                if (!n)
                        return -ENOMEM;
                r = refuse(refused, n, "models.json lists the model twice with different specs");
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A refused name that @previous holds keeps that entry. */
static int desired_keep_previous(const struct model_entries *previous,
                                 const struct model_refusals *refused, struct model_entries *out)
{
        for (size_t i = 0; previous && i < refused->n; i++) {
                const json_t *n = refused->items[i].name;
                const struct model_entry *prev;
                int r;

                if (strlen(json_string_value(n)) != json_string_length(n))
                        continue;
                prev = model_entries_find_sorted(previous, json_string_value(n));
                if (!prev || model_entries_get(out, prev->name))
                        continue;
                r = model_entries_append(out, prev->name, prev->storage_uri, prev->framework,
                                         prev->memory);
                if (r < 0)
                        return r;
        }
        return 0;
}

int agent_desired_parse(const char *models_json, const struct model_entries *previous,
                        struct model_entries *ret, struct model_refusals *ret_refused, char *reterr,
                        size_t len_err)
{
        CLEANUP(model_entries_release) struct model_entries all = { 0 }, out = { 0 };
        CLEANUP(model_refusals_release) struct model_refusals refused = { 0 };
        json_auto_t *v = NULL;
        json_error_t jerr;
        json_t *e;
        size_t i;
        int r;

        if (models_json && models_json[0]) {
                v = json_loadb(models_json, strlen(models_json), JSON_ALLOW_NUL, &jerr);
                if (!v || !json_is_array(v)) {
                        (void)snprintf(reterr, len_err, "%s",
                                       v ? "json: cannot unmarshal non-array into []ModelConfig"
                                         : jerr.text);
                        return -EINVAL;
                }
        }
        json_array_foreach(v, i, e) {
                r = desired_entry(e, i, &all, &refused);
                if (r < 0)
                        return r;
        }
        r = desired_keep(&all, &out, &refused);
        if (r < 0)
                return r;
        r = desired_keep_previous(previous, &refused, &out);
        if (r < 0)
                return r;
        model_entries_sort(&out);
        if (refused.n > 1)
                qsort(refused.items, refused.n, sizeof(*refused.items), cmp_refusal);
        *ret = out;
        out = (struct model_entries){ 0 };
        *ret_refused = refused;
        refused = (struct model_refusals){ 0 };
        return 0;
}

/* Skips a duration ("123 ms", "10001 milliseconds", "1.5 s") at @p: returns its end, or @p. */
static const char *skip_duration(const char *p)
{
        static const char *const units[] = { " milliseconds", " ms", "ms", " seconds", " s" };
        const char *q = p;

        while ((*q >= '0' && *q <= '9') || (*q == '.' && q > p))
                q++;
        if (q == p)
                return p;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                size_t n = strlen(units[i]);
                if (strncmp(q, units[i], n) == 0 && !(q[n] >= 'a' && q[n] <= 'z'))
                        return q + n;
        }
        return p;
}

bool agent_reason_same(const char *a, const char *b)
{
        if (!a || !b)
                return a == b;
        while (*a && *b) {
                const char *ea = skip_duration(a), *eb = skip_duration(b);

                if (ea != a && eb != b) {
                        a = ea;
                        b = eb;
                        continue;
                }
                if (*a != *b)
                        return false;
                a++;
                b++;
        }
        return *a == *b;
}
