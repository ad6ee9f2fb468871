/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The SQL back end of filterq (the registry's): lowers a parsed tree into the store's condition
 * tree (store/entity.h), which the store compiles to SQL with every value bound as a parameter
 * (never spliced into the text), for SQLite and PostgreSQL alike. Pure: no I/O.
 *
 * The caller's resolver maps each property to what it names (an entity column, a system
 * property or a custom property); this module decides the typed value column and converts the
 * literals:
 *   - columns and system properties compare in their own type; a literal that cannot be
 *     converted (`id = 'abc'`, `name = true`) matches nothing (STORE_COND_FALSE);
 *   - custom properties take the suffix's type, or the literal's (string -> string_value,
 *     float -> double_value, bool -> bool_value, int -> int_value OR double_value);
 *   - LIKE/ILIKE on anything but a string column with a string literal matches nothing;
 *   - an empty IN list, or one whose values all fail to convert, matches nothing.
 */

#include <stdbool.h>
#include <stddef.h>

#include "filterq/filterq.h"
#include "store/entity.h"

struct filterq_sql_target {
        bool is_column; /* an entity column */
        enum store_column column;
        const char *prop;     /* borrowed; property name when !is_column */
        bool custom;          /* a custom property: typed by suffix or literal */
        enum store_vcol vcol; /* type of the column or system property (not for custom) */
        /* borrowed; string targets: an integer literal i stands for enum_names[i] (state enums) */
        const char *const *enum_names;
        size_t n_enum_names;
};

/* Fills *ret for property (never fails: unknown names are custom properties). */
typedef void filterq_sql_resolve_fn(void *userdata, const char *property,
                                    struct filterq_sql_target *ret);

/*
 * Lowers n (NULL: *ret = NULL, no condition). Returns 0 or -ENOMEM; *ret (owned, free with
 * store_cond_free()) is set only on success.
 */
_warn_unused_result_ int filterq_sql_lower(const struct filterq_node *n,
                                           filterq_sql_resolve_fn *resolve, void *userdata,
                                           struct store_cond **ret);
