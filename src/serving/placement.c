/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/placement.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* Passes of the move rule until nothing moves; each move strictly raises a model's preference,
 * so it ends, and the bound only caps the CPU of a pathological input. */
#define PLACEMENT_PASSES_MAX 64U

/* ---- the weight ---- */

static uint64_t mix64(uint64_t x)
{
        /* a 64-bit finalizer (the splitmix64 constants): every input bit affects every output
         * bit, so the weights of one model over many replicas are independent in practice */
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return x;
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                h ^= *p;
                h *= 0x100000001b3ULL;
        }
        return h;
}

uint64_t placement_weight(const char *model, const char *replica)
{
        uint64_t h = fnv1a(0xcbf29ce484222325ULL, model);

        h ^= 0xff; /* a separator no name holds: ("ab","c") and ("a","bc") differ */
        h *= 0x100000001b3ULL;
        return mix64(fnv1a(h, replica));
}

/* ---- state of one computation ---- */

struct model_state {
        uint32_t *rank; /* eligible replicas, most preferred first */
        size_t n_rank;
        uint32_t *held; /* replicas assigned now, in no order */
        size_t n_held;
        bool *orig;      /* per replica: held it in the input */
        unsigned wanted; /* copies wanted */
};

struct ctx {
        const struct placement_input *in;
        const struct placement_replica *const *by_id; /* sorted by id */
        struct model_state *ms;
        uint64_t *free; /* per replica */
        size_t n_live;
        const char *weight_model; /* for the sort */
};

static int cmp_replica_id(const void *a, const void *b)
{
        return strcmp((*(const struct placement_replica *const *)a)->id,
                      (*(const struct placement_replica *const *)b)->id);
}

static int cmp_model_name(const void *a, const void *b)
{
        return strcmp((*(const struct placement_model *const *)a)->name,
                      (*(const struct placement_model *const *)b)->name);
}

/* The index of the replica with id, or -1. */
static long replica_index(const struct ctx *c, const char *id)
{
        size_t lo = 0, hi = c->in->n_replicas;

        if (!id)
                return -1;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int d = strcmp(id, c->by_id[mid]->id);

                if (d == 0)
                        return (long)(c->by_id[mid] - c->in->replicas);
                if (d < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return -1;
}

/* -EINVAL for a NULL or duplicate id or name. */
static int check_unique(struct ctx *c, const struct placement_replica **by_id)
{
        const struct placement_input *in = c->in;
        const struct placement_model **names;
        int r = 0;

        for (size_t i = 0; i < in->n_replicas; i++) {
                if (!in->replicas[i].id)
                        return -EINVAL;
                by_id[i] = &in->replicas[i];
        }
        qsort(by_id, in->n_replicas, sizeof(const struct placement_replica *), cmp_replica_id);
        for (size_t i = 1; i < in->n_replicas; i++)
                if (streq(by_id[i - 1]->id, by_id[i]->id))
                        return -EINVAL;
        names = calloc(in->n_models ? in->n_models : 1, sizeof(const struct placement_model *));
        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < in->n_models && r == 0; i++) {
                names[i] = &in->models[i];
                if (!in->models[i].name)
                        r = -EINVAL;
        }
        if (r == 0)
                qsort(names, in->n_models, sizeof(const struct placement_model *), cmp_model_name);
        for (size_t i = 1; i < in->n_models && r == 0; i++)
                if (streq(names[i - 1]->name, names[i]->name))
                        r = -EINVAL;
        free(names);
        return r;
}

struct ranked {
        uint64_t w;
        uint32_t i;
        const char *id;
};

static int cmp_ranked(const void *a, const void *b)
{
        const struct ranked *x = a, *y = b;

        if (x->w != y->w)
                return x->w > y->w ? -1 : 1;
        return strcmp(x->id, y->id);
}

static bool failed_on(const struct placement_model *m, const char *id)
{
        for (size_t i = 0; i < m->n_failed; i++)
                if (m->failed[i] && streq(m->failed[i], id))
                        return true;
        return false;
}

/* The model's eligible replicas (live, never failed for it), most preferred first. */
static int rank_model(struct ctx *c, size_t mi, struct ranked *scratch)
{
        const struct placement_model *m = &c->in->models[mi];
        struct model_state *s = &c->ms[mi];
        size_t n = 0;

        for (size_t r = 0; r < c->in->n_replicas; r++) {
                const struct placement_replica *rep = &c->in->replicas[r];

                if (rep->state != PLACEMENT_LIVE || failed_on(m, rep->id))
                        continue;
                scratch[n++] = (struct ranked){ placement_weight(m->name, rep->id), (uint32_t)r,
                                                rep->id };
        }
        qsort(scratch, n, sizeof(*scratch), cmp_ranked);
        s->rank = calloc(n ? n : 1, sizeof(*s->rank));
        s->held = calloc(n ? n : 1, sizeof(*s->held));
        s->orig = calloc(c->in->n_replicas ? c->in->n_replicas : 1, sizeof(*s->orig));
        if (!s->rank || !s->held || !s->orig)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                s->rank[i] = scratch[i].i;
        s->n_rank = n;
        s->wanted = m->copies == PLACEMENT_COPIES_ALL ? (unsigned)c->n_live : m->copies;
        return 0;
}

/* Position of replica r in the model's preference order (n_rank when not eligible). */
static size_t pref_of(const struct model_state *s, uint32_t r)
{
        for (size_t i = 0; i < s->n_rank; i++)
                if (s->rank[i] == r)
                        return i;
        return s->n_rank;
}

static bool holds(const struct model_state *s, uint32_t r)
{
        for (size_t i = 0; i < s->n_held; i++)
                if (s->held[i] == r)
                        return true;
        return false;
}

static void hold_remove(struct model_state *s, uint32_t r)
{
        for (size_t i = 0; i < s->n_held; i++)
                if (s->held[i] == r) {
                        s->held[i] = s->held[--s->n_held];
                        return;
                }
}

/* Phase 1: every model reserves the holders it keeps (eligible, the most preferred up to the
 * copies wanted, while they have room), in priority order. */
static void reserve_holders(struct ctx *c, size_t mi)
{
        const struct placement_model *m = &c->in->models[mi];
        struct model_state *s = &c->ms[mi];

        for (size_t h = 0; h < m->n_holders; h++) {
                long r = replica_index(c, m->holders[h]);

                if (r >= 0)
                        s->orig[r] = true;
        }
        /* walk the preference order so that surplus holders drop the least preferred */
        for (size_t i = 0; i < s->n_rank && s->n_held < s->wanted; i++) {
                uint32_t r = s->rank[i];

                if (s->orig[r] && c->free[r] >= m->memory) {
                        c->free[r] -= m->memory;
                        s->held[s->n_held++] = r;
                }
        }
}

/* The least preferred holder outside the ideal set, or -1. */
static long worst_non_ideal(const struct model_state *s, size_t ideal)
{
        long worst = -1;
        size_t worst_pref = 0;

        for (size_t i = 0; i < s->n_held; i++) {
                size_t p = pref_of(s, s->held[i]);

                if (p >= ideal && (worst < 0 || p > worst_pref)) {
                        worst = s->held[i];
                        worst_pref = p;
                }
        }
        return worst;
}

/* The move rule for one model: 1 when something moved. Only a model that holds all the copies
 * it wants moves one; missing copies are added by fill(), in priority order, so that a model of
 * lower priority never takes the room a higher one needs for its first copy. */
static int move_toward_ideal(struct ctx *c, size_t mi)
{
        const struct placement_model *m = &c->in->models[mi];
        struct model_state *s = &c->ms[mi];
        size_t ideal = MIN((size_t)s->wanted, s->n_rank);
        int moved = 0;

        if (s->n_held < s->wanted)
                return 0;
        for (size_t i = 0; i < ideal; i++) {
                uint32_t r = s->rank[i];
                long victim;

                if (holds(s, r) || c->free[r] < m->memory)
                        continue;
                /* full: give up the worst holder outside the ideal set */
                victim = worst_non_ideal(s, ideal);
                if (victim < 0)
                        continue;
                hold_remove(s, (uint32_t)victim);
                c->free[victim] += m->memory;
                c->free[r] -= m->memory;
                s->held[s->n_held++] = r;
                moved = 1;
        }
        return moved;
}

/* Missing copies go to the most preferred replicas with room. */
static void fill(struct ctx *c, size_t mi)
{
        const struct placement_model *m = &c->in->models[mi];
        struct model_state *s = &c->ms[mi];

        for (size_t i = 0; i < s->n_rank && s->n_held < s->wanted; i++) {
                uint32_t r = s->rank[i];

                if (!holds(s, r) && c->free[r] >= m->memory) {
                        c->free[r] -= m->memory;
                        s->held[s->n_held++] = r;
                }
        }
}

/* ---- the result ---- */

/* "3Gi", "1536Mi", "100Ki", "1000" (bytes). */
static void format_bytes(uint64_t v, char *buf, size_t len)
{
        static const char *const units[] = { "Ti", "Gi", "Mi", "Ki" };
        static const unsigned shifts[] = { 40, 30, 20, 10 };

        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (v != 0 && v % ((uint64_t)1 << shifts[i]) == 0) {
                        (void)snprintf(buf, len, "%llu%s", (unsigned long long)(v >> shifts[i]),
                                       units[i]);
                        return;
                }
        (void)snprintf(buf, len, "%llu", (unsigned long long)v);
}

static int shortfall(const struct ctx *c, size_t mi, struct placement_assignment *a)
{
        const struct placement_model *m = &c->in->models[mi];
        const struct model_state *s = &c->ms[mi];
        CLEANUP(buf_releasep) struct buf b = BUF_INIT(4096);
        char need[32], most[32], total[32];
        uint64_t best = 0, sum = 0;
        long best_r = -1;
        size_t others = 0;

        for (size_t i = 0; i < s->n_rank; i++) {
                uint32_t r = s->rank[i];

                if (holds(s, r))
                        continue;
                others++;
                sum += c->free[r];
                if (best_r < 0 || c->free[r] > best) {
                        best = c->free[r];
                        best_r = r;
                }
        }
        format_bytes(m->memory, need, sizeof(need));
        format_bytes(best, most, sizeof(most));
        format_bytes(sum, total, sizeof(total));
        if (s->n_held > 0 && buf_printf(&b, "%zu/%u copies placed: ", s->n_held, s->wanted) < 0)
                return -ENOMEM;
        if (buf_printf(&b, "needs %s", need) < 0)
                return -ENOMEM;
        if (s->n_held > 0 &&
            buf_printf(&b, " on %u more replicas", s->wanted - (unsigned)s->n_held) < 0)
                return -ENOMEM;
        if (others == 0) {
                if (buf_printf(&b,
                               "; no other replica can hold it (%zu live, %zu where it failed "
                               "to load)",
                               c->n_live, c->n_live - s->n_rank) < 0)
                        return -ENOMEM;
        } else if (buf_printf(&b,
                              "; the most free on one replica is %s (%s), %s free over %zu "
                              "replicas",
                              most, c->in->replicas[best_r].id, total, others) < 0)
                return -ENOMEM;
        a->shortfall = strdup(buf_str(&b));
        return a->shortfall ? 0 : -ENOMEM;
}

static int assignment(struct ctx *c, size_t mi, struct placement_result *res)
{
        struct model_state *s = &c->ms[mi];
        struct placement_assignment *a = &res->models[mi];
        size_t k = 0;

        a->replicas = calloc(s->n_held ? s->n_held : 1, sizeof(*a->replicas));
        if (!a->replicas)
                return -ENOMEM;
        /* most preferred first: the order of the ranking */
        for (size_t i = 0; i < s->n_rank; i++)
                if (holds(s, s->rank[i])) {
                        a->replicas[k++] = s->rank[i];
                        res->assigned[s->rank[i]] += c->in->models[mi].memory;
                        if (!s->orig[s->rank[i]])
                                a->moved++;
                }
        a->n = k;
        a->wanted = s->wanted;
        res->moved += a->moved;
        for (size_t r = 0; r < c->in->n_replicas; r++)
                if (s->orig[r] && !holds(s, (uint32_t)r))
                        res->dropped++;
        if (k < s->wanted)
                return shortfall(c, mi, a);
        return 0;
}

void placement_result_release(struct placement_result *r)
{
        for (size_t i = 0; r->models && i < r->n_models; i++) {
                free(r->models[i].replicas);
                free(r->models[i].shortfall);
        }
        free(r->models);
        free(r->assigned);
        *r = (struct placement_result){ 0 };
}

static void ctx_release(struct ctx *c)
{
        for (size_t i = 0; c->ms && i < c->in->n_models; i++) {
                free(c->ms[i].rank);
                free(c->ms[i].held);
                free(c->ms[i].orig);
        }
        free(c->ms);
        free(c->free);
        free((void *)c->by_id);
}

static int place(struct ctx *c, struct placement_result *res)
{
        const struct placement_input *in = c->in;
        AUTOFREE struct ranked *scratch = calloc(in->n_replicas ? in->n_replicas : 1,
                                                 sizeof(*scratch));
        int r;

        if (!scratch)
                return -ENOMEM;
        for (size_t i = 0; i < in->n_replicas; i++) {
                c->free[i] = in->replicas[i].capacity;
                c->n_live += in->replicas[i].state == PLACEMENT_LIVE;
        }
        for (size_t m = 0; m < in->n_models; m++) {
                r = rank_model(c, m, scratch);
                if (r < 0)
                        return r;
        }
        for (size_t m = 0; m < in->n_models; m++)
                reserve_holders(c, m);
        for (unsigned pass = 0; pass < PLACEMENT_PASSES_MAX; pass++) {
                int moved = 0;

                for (size_t m = 0; m < in->n_models; m++)
                        moved |= move_toward_ideal(c, m);
                if (!moved)
                        break;
        }
        for (size_t m = 0; m < in->n_models; m++)
                fill(c, m);
        for (size_t m = 0; m < in->n_models; m++) {
                r = assignment(c, m, res);
                if (r < 0)
                        return r;
        }
        return 0;
}

int placement_compute(const struct placement_input *in, struct placement_result *ret)
{
        struct placement_result res = { .n_models = in->n_models, .n_replicas = in->n_replicas };
        struct ctx c = { .in = in };
        size_t nr = in->n_replicas ? in->n_replicas : 1, nm = in->n_models ? in->n_models : 1;
        int r;

        c.by_id = calloc(nr, sizeof(const struct placement_replica *));
        c.ms = calloc(nm, sizeof(*c.ms));
        c.free = calloc(nr, sizeof(*c.free));
        res.models = calloc(nm, sizeof(*res.models));
        res.assigned = calloc(nr, sizeof(*res.assigned));
        if (!c.by_id || !c.ms || !c.free || !res.models || !res.assigned)
                r = -ENOMEM;
        else
                r = check_unique(&c, (const struct placement_replica **)c.by_id);
        if (r >= 0)
                r = place(&c, &res);
        ctx_release(&c);
        if (r < 0) {
                placement_result_release(&res);
                return r;
        }
        *ret = res;
        return 0;
}
