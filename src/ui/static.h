/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The I/O half of static file serving: a directory opened once, files opened beneath it so that
 * neither ".." nor a symlink can leave it (openat2 RESOLVE_BENEATH; realpath prefix check where
 * the kernel lacks it), regular files only, bounded size, an optional .gz sibling.
 */

#include <stdbool.h>

#include "http/server.h"
#include "util/macro.h"

#define UI_STATIC_FILE_MAX ((size_t)64 * 1024 * 1024)

struct ui_static;

/* Opens dir. -ENOENT/-ENOTDIR when it is not a directory. */
_warn_unused_result_ int ui_static_open(const char *dir, struct ui_static **ret);
struct ui_static *ui_static_free(struct ui_static *s);
DEFINE_CLEANUP_FUNC(struct ui_static *, ui_static_free)

/* True when the directory holds an index.html (a built frontend). */
bool ui_static_has_index(const struct ui_static *s);
/* The directory's resolved path; borrowed. */
const char *ui_static_root(const struct ui_static *s);

/*
 * Answers rel (from ui_static_path()) into resp: 200 with the file, Content-Type and
 * Cache-Control, the .gz sibling with Content-Encoding: gzip when gzip_ok. Returns 0 when served,
 * -ENOENT when there is no such regular file beneath the root (symlink escapes included), -EFBIG
 * past UI_STATIC_FILE_MAX, other negative errno on I/O errors.
 */
_warn_unused_result_ int ui_static_serve(const struct ui_static *s, const char *rel, bool gzip_ok,
                                         struct http_resp *resp);
