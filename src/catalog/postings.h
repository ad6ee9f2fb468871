/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Immutable postings of one catalog snapshot (issue 14 item 4): a hash map from a key
 * (kind, a, b) — two borrowed strings, e.g. (field, "license", "mit") or (source, name) — to
 * the sorted list of the positions that carry it, in two orders: by position and by a rank the
 * caller gives (the snapshot's ID order). Built once at load, never changed, freed with the
 * snapshot, so readers need no lock. Pure.
 *
 * Build: catalog_postings_add() for every (key, position), positions in non-decreasing order
 * (a position added twice under one key is kept once), then catalog_postings_build().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

struct catalog_postings_entry;
struct catalog_postings_triple;

struct catalog_postings_builder {
        struct catalog_postings_triple *v; /* owned */
        size_t n, cap;
};

/* Adds pos under (kind, a, b); a and b are borrowed and must outlive the postings. */
_warn_unused_result_ int catalog_postings_add(struct catalog_postings_builder *b, uint32_t kind,
                                              const char *a, const char *s, uint32_t pos);
void catalog_postings_builder_release(struct catalog_postings_builder *b);

struct catalog_postings;

/*
 * Builds the map from b (released). rank[pos] (n_pos entries, a permutation of 0..n_pos-1) is
 * the second order. -EINVAL when a position is out of range or out of order; -ENOMEM; -E2BIG
 * beyond UINT32_MAX entries.
 */
_warn_unused_result_ int catalog_postings_build(struct catalog_postings_builder *b,
                                                const uint32_t *rank, size_t n_pos,
                                                struct catalog_postings **ret);
struct catalog_postings *catalog_postings_free(struct catalog_postings *p);
DEFINE_CLEANUP_FUNC(struct catalog_postings *, catalog_postings_free)

struct catalog_posting {
        const uint32_t *by_pos;  /* n positions, ascending */
        const uint32_t *by_rank; /* the same n positions, by ascending rank */
        size_t n;
};

/* The list of (kind, a, b): true, or false and an empty *ret when no position has that key. */
bool catalog_postings_get(const struct catalog_postings *p, uint32_t kind, const char *a,
                          const char *s, struct catalog_posting *ret);

/* Number of distinct keys (tests, statistics). */
size_t catalog_postings_n_keys(const struct catalog_postings *p);
