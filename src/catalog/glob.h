/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Model-name globs of includedModels/excludedModels: only '*' is special (zero or more
 * characters), matching is ASCII case-insensitive and anchored at both ends. Pure.
 */

#include <stdbool.h>

#include "util/macro.h"

/* True when name matches pattern. */
bool catalog_glob_match(const char *pattern, const char *name);

/* 0 when pattern is usable; -EINVAL when it is empty or only whitespace. */
_warn_unused_result_ int catalog_glob_validate(const char *pattern);

/*
 * The include/exclude decision for one model: excluded when it matches any exclude pattern;
 * otherwise included when the include list is empty or any include pattern matches.
 * Both arrays are borrowed and NULL-terminated (NULL means empty).
 */
bool catalog_glob_included(char *const *included, char *const *excluded, const char *name);
