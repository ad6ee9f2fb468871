/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/postings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct catalog_postings_triple {
        const char *a, *s;
        uint32_t kind, pos;
        uint32_t entry; /* set by the build */
};

struct catalog_postings_entry {
        const char *a, *s;
        uint32_t kind, hash;
        uint32_t off, n;
        uint32_t last; /* build only: the last position counted + 1 (0: none) */
};

struct catalog_postings {
        struct catalog_postings_entry *e; /* owned */
        size_t n_e;
        uint32_t *slots; /* owned; entry index + 1, 0 = empty; n_slots is a power of 2 */
        size_t n_slots;
        uint32_t *by_pos, *by_rank; /* owned; the lists, entry after entry */
};

/* FNV-1a over the kind, a, a separator and s */
static uint32_t key_hash(uint32_t kind, const char *a, const char *s)
{
        uint32_t h = 2166136261u;

        for (int i = 0; i < 4; i++) {
                h ^= (kind >> (8 * i)) & 0xffu;
                h *= 16777619u;
        }
        for (const unsigned char *c = (const unsigned char *)a; *c; c++) {
                h ^= *c;
                h *= 16777619u;
        }
        h ^= 0xffu; /* a byte no string holds, so ("ab", "c") and ("a", "bc") differ */
        h *= 16777619u;
        for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
                h ^= *c;
                h *= 16777619u;
        }
        return h;
}

static bool entry_is(const struct catalog_postings_entry *e, uint32_t kind, uint32_t hash,
                     const char *a, const char *s)
{
        return e->hash == hash && e->kind == kind && strcmp(e->a, a) == 0 && strcmp(e->s, s) == 0;
}

int catalog_postings_add(struct catalog_postings_builder *b, uint32_t kind, const char *a,
                         const char *s, uint32_t pos)
{
        if (!a || !s)
                return -EINVAL;
        if (b->n > 0 && b->v[b->n - 1].pos > pos)
                return -EINVAL;
        if (b->n == b->cap) {
                size_t cap = b->cap ? b->cap * 2 : 1024;
                struct catalog_postings_triple *v = reallocarray(b->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                b->v = v;
                b->cap = cap;
        }
        b->v[b->n++] = (struct catalog_postings_triple){ .a = a, .s = s, .kind = kind, .pos = pos };
        return 0;
}

void catalog_postings_builder_release(struct catalog_postings_builder *b)
{
        free(b->v);
        *b = (struct catalog_postings_builder){ 0 };
}

struct catalog_postings *catalog_postings_free(struct catalog_postings *p)
{
        if (!p)
                return NULL;
        free(p->e);
        free(p->slots);
        free(p->by_pos);
        free(p->by_rank);
        free(p);
        return NULL;
}

/* The entry of (kind, a, s) in p, inserted when absent (the table has room: n_slots > 2 n). */
static uint32_t entry_find_or_add(struct catalog_postings *p,
                                  const struct catalog_postings_triple *t)
{
        uint32_t h = key_hash(t->kind, t->a, t->s);
        size_t mask = p->n_slots - 1;

        for (size_t i = h & mask;; i = (i + 1) & mask) {
                uint32_t k = p->slots[i];

                if (k == 0) {
                        p->e[p->n_e] = (struct catalog_postings_entry){
                                .a = t->a, .s = t->s, .kind = t->kind, .hash = h
                        };
                        p->slots[i] = (uint32_t)++p->n_e;
                        return (uint32_t)(p->n_e - 1);
                }
                if (entry_is(&p->e[k - 1], t->kind, h, t->a, t->s))
                        return k - 1;
        }
}

/* Pass 1: the entries and their (deduplicated) sizes, then each list's offset. */
static size_t entries_count(struct catalog_postings *p, struct catalog_postings_builder *b)
{
        size_t total = 0;

        for (size_t i = 0; i < b->n; i++) {
                struct catalog_postings_triple *t = &b->v[i];
                struct catalog_postings_entry *e;

                t->entry = entry_find_or_add(p, t);
                e = &p->e[t->entry];
                if (e->last != t->pos + 1) {
                        e->last = t->pos + 1;
                        e->n++;
                }
        }
        for (size_t i = 0; i < p->n_e; i++) {
                p->e[i].off = (uint32_t)total;
                total += p->e[i].n;
                p->e[i].n = 0;
                p->e[i].last = 0;
        }
        return total;
}

static void entry_push(struct catalog_postings_entry *e, uint32_t *lists, uint32_t pos)
{
        if (e->last == pos + 1)
                return;
        e->last = pos + 1;
        lists[e->off + e->n++] = pos;
}

/* Pass 2: by position (the triples' order); pass 3: by rank, through each position's triples. */
static int lists_fill(struct catalog_postings *p, const struct catalog_postings_builder *b,
                      const uint32_t *rank, size_t n_pos)
{
        uint32_t *first = calloc(n_pos + 1, sizeof(*first)),
                 *order = malloc(n_pos * sizeof(*order) + 1);

        if (!first || !order) {
                free(first);
                free(order);
                return -ENOMEM;
        }
        for (size_t i = 0; i < b->n; i++) {
                entry_push(&p->e[b->v[i].entry], p->by_pos, b->v[i].pos);
                first[b->v[i].pos + 1] = (uint32_t)(i + 1);
        }
        /* first[pos + 1] is the end of pos's triples; make first[pos] its start */
        for (size_t pos = 1; pos <= n_pos; pos++)
                if (first[pos] < first[pos - 1])
                        first[pos] = first[pos - 1];
        for (size_t i = 0; i < p->n_e; i++) {
                p->e[i].n = 0;
                p->e[i].last = 0;
        }
        for (size_t pos = 0; pos < n_pos; pos++)
                order[rank[pos]] = (uint32_t)pos;
        for (size_t r = 0; r < n_pos; r++) {
                uint32_t pos = order[r];

                for (uint32_t i = first[pos]; i < first[pos + 1]; i++)
                        entry_push(&p->e[b->v[i].entry], p->by_rank, pos);
        }
        free(first);
        free(order);
        return 0;
}

/* Shrinks the table to the entries used (sized for every triple while they were counted). */
static void table_shrink(struct catalog_postings *p)
{
        struct catalog_postings_entry *e = realloc(p->e, (p->n_e + 1) * sizeof(*e));
        size_t n_slots = 16;
        uint32_t *slots;

        if (e)
                p->e = e;
        while (n_slots <= 2 * p->n_e)
                n_slots *= 2;
        if (n_slots >= p->n_slots)
                return;
        slots = calloc(n_slots, sizeof(*slots));
        if (!slots)
                return; /* the larger table stays valid */
        for (size_t k = 0; k < p->n_e; k++) {
                size_t i = p->e[k].hash & (n_slots - 1);

                while (slots[i] != 0)
                        i = (i + 1) & (n_slots - 1);
                slots[i] = (uint32_t)(k + 1);
        }
        free(p->slots);
        p->slots = slots;
        p->n_slots = n_slots;
}

static int rank_check(const uint32_t *rank, size_t n_pos)
{
        uint8_t *seen = calloc(n_pos + 1, 1);

        if (!seen)
                return -ENOMEM;
        for (size_t i = 0; i < n_pos; i++) {
                if (rank[i] >= n_pos || seen[rank[i]]) {
                        free(seen);
                        return -EINVAL;
                }
                seen[rank[i]] = 1;
        }
        free(seen);
        return 0;
}

int catalog_postings_build(struct catalog_postings_builder *b, const uint32_t *rank, size_t n_pos,
                           struct catalog_postings **ret)
{
        CLEANUP(catalog_postings_freep) struct catalog_postings *p = NULL;
        size_t total;
        int r;

        if (b->n >= UINT32_MAX / 4 || n_pos >= UINT32_MAX) {
                catalog_postings_builder_release(b);
                return -E2BIG;
        }
        r = rank_check(rank, n_pos);
        for (size_t i = 0; i < b->n && r >= 0; i++)
                if (b->v[i].pos >= n_pos)
                        r = -EINVAL;
        p = r < 0 ? NULL : calloc(1, sizeof(*p));
        if (r >= 0 && !p)
                r = -ENOMEM;
        if (r < 0) {
                catalog_postings_builder_release(b);
                return r;
        }
        for (p->n_slots = 16; p->n_slots <= 2 * b->n; p->n_slots *= 2)
                ;
        p->slots = calloc(p->n_slots, sizeof(*p->slots));
        p->e = calloc(b->n + 1, sizeof(*p->e));
        if (!p->slots || !p->e) {
                catalog_postings_builder_release(b);
                return -ENOMEM;
        }
        total = entries_count(p, b);
        p->by_pos = malloc(total * sizeof(uint32_t) + 1);
        p->by_rank = malloc(total * sizeof(uint32_t) + 1);
        r = p->by_pos && p->by_rank ? lists_fill(p, b, rank, n_pos) : -ENOMEM;
        catalog_postings_builder_release(b);
        if (r < 0)
                return r;
        table_shrink(p);
        *ret = TAKE_PTR(p);
        return 0;
}

bool catalog_postings_get(const struct catalog_postings *p, uint32_t kind, const char *a,
                          const char *s, struct catalog_posting *ret)
{
        uint32_t h;
        size_t mask;

        *ret = (struct catalog_posting){ 0 };
        if (!p || !a || !s)
                return false;
        h = key_hash(kind, a, s);
        mask = p->n_slots - 1;
        for (size_t i = h & mask; p->slots[i] != 0; i = (i + 1) & mask) {
                const struct catalog_postings_entry *e = &p->e[p->slots[i] - 1];

                if (entry_is(e, kind, h, a, s)) {
                        *ret = (struct catalog_posting){ .by_pos = p->by_pos + e->off,
                                                         .by_rank = p->by_rank + e->off,
                                                         .n = e->n };
                        return true;
                }
        }
        return false;
}

size_t catalog_postings_n_keys(const struct catalog_postings *p)
{
        return p ? p->n_e : 0;
}
