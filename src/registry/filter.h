/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * filterQuery (spec B.8): a pure lexer and recursive-descent parser that turns the query text
 * into a store condition tree resolved against one entity kind (well-known columns, system
 * properties, custom properties). Bounded: query length, nesting depth and list sizes.
 * `<>` means not-equal; `%`/`_` only act as wildcards under LIKE/ILIKE.
 */

#include "registry/codec.h"
#include "registry/kinds.h"
#include "store/entity.h"

#define REG_FILTER_MAX_LEN   16384
#define REG_FILTER_MAX_DEPTH 32
#define REG_FILTER_MAX_TERMS 256

/* Sets *ret to NULL for an empty query. 400 in err on a parse error. */
_warn_unused_result_ int reg_filter_compile(const struct reg_kind *k, const char *query,
                                            struct store_cond **ret, struct reg_error *err);
