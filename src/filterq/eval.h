/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * In-memory evaluation of a filterq tree (the catalog's back end). Pure. The caller resolves
 * each comparison against its entity (a callback) and usually compares the values it finds with
 * filterq_compare_value() or filterq_compare_metadata().
 *
 * Results are ints: 1 match, 0 no match, negative errno. -EDOM is the distinct "type mismatch"
 * kind: the comparison cannot be made between these types (a string literal against a number,
 * `hardware_type.string_value = 5.0`, LIKE with a number, `<` on booleans). Callers that keep
 * the old semantics treat it as "no match" (the filterq_match_*() wrappers do exactly that);
 * callers that follow upstream answer it with 400.
 */

#include <jansson.h>
#include <stdbool.h>

#include "filterq/filterq.h"

/* Resolves one comparison against one entity: 1 match, 0 no match, negative errno. */
typedef int filterq_match_fn(void *userdata, const struct filterq_cmp *cmp);

/*
 * Evaluates the tree (NULL matches everything) with AND/OR short-circuiting left to right.
 * Returns 1/0, or the first negative result of fn (evaluation stops there).
 */
_warn_unused_result_ int filterq_eval(const struct filterq_node *n, filterq_match_fn *fn,
                                      void *userdata);

/*
 * Compares one actual JSON value with the comparison's literal(s): strings as strings
 * (LIKE/ILIKE with % and _), numbers numerically, booleans with = != IN only. NULL or JSON null
 * actual: 0. Incompatible types: -EDOM. IN matches when any value is equal (mismatching values
 * count as unequal; -EDOM only when every value mismatches).
 */
int filterq_compare_value(const struct filterq_cmp *cmp, const json_t *actual);

/*
 * Picks the typed value of a MetadataValue object (customProperties entry) for cmp: the explicit
 * suffix wins; otherwise the literal decides (string -> string_value, float -> double_value,
 * bool -> bool_value, int -> int_value or double_value). A value of another metadataType, or no
 * value: 0. An explicit suffix that the literal cannot be compared with (`x.string_value = 5`,
 * `x.int_value = 'a'`, `x.bool_value = 1`): -EDOM.
 */
int filterq_compare_metadata(const struct filterq_cmp *cmp, const json_t *mv);

/* As the compare functions, with type mismatches as "no match" (catalog semantics). */
bool filterq_match_value(const struct filterq_cmp *cmp, const json_t *actual);
bool filterq_match_metadata(const struct filterq_cmp *cmp, const json_t *metadata_value);

/* SQL LIKE: % any run, _ one character, backslash escapes; ci = ASCII case-insensitive. */
bool filterq_like(const char *pattern, const char *s, bool ci);
