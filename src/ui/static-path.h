/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The pure half of static file serving (docs/ui.md, "Static files"): which request paths may name
 * a file, the Content-Type of a name, its Cache-Control, and when the single-page app's
 * index.html answers instead. No I/O; static.c is the shell that opens files.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

#define UI_STATIC_PATH_MAX 1024U

/*
 * Checks a percent-decoded request path ("/assets/app-1234abcd.js") and stores the path relative
 * to the static root ("assets/app-1234abcd.js"; "index.html" for "/") in ret (size len). Returns 0,
 * -EINVAL when the path must never name a file (no leading '/', an empty, "." or ".." segment, a
 * segment starting with '.', a backslash or a control character), -ENAMETOOLONG past len or
 * UI_STATIC_PATH_MAX.
 */
_warn_unused_result_ int ui_static_path(const char *path, char *ret, size_t len);

/* The Content-Type for a file name, by extension; "application/octet-stream" when unknown. */
const char *ui_content_type(const char *name);

/* True for files safe to cache forever: under "assets/", or named "stem-HASH.ext" / "stem.HASH.ext"
 * with HASH 8+ characters of [A-Za-z0-9_]. */
bool ui_static_immutable(const char *rel);

/* The Cache-Control value for rel. */
const char *ui_cache_control(const char *rel);

/* True when a missing rel should be answered with index.html: its last segment has no '.'. */
bool ui_spa_fallback(const char *rel);
