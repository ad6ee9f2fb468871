/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The model directory's listing (agent shell): one entry per model directory, with the storage
 * URI its record (DISK_SOURCE_RECORD, written before the directory is moved into place) names.
 *
 * Listed whole once, then kept up to date from inotify: each event names an entry that was
 * created, moved in, moved out or removed, and only that entry is looked at again (an lstat and
 * its record). At 1,000 models a whole listing is about 4,000 system calls; a create's pass
 * needs a handful. Listed whole again when the event queue overflowed, the directory itself
 * moved or went, a kept entry could not be updated (out of memory), or DISK_RELIST_USEC passed
 * (a safety net: a record rewritten in place inside a model directory sends no event here).
 * Without inotify (no support, or the per-user limit of watches reached), the rule is the
 * directory's own stat: listed whole again when its mtime, ctime or inode moved, or when the
 * last listing began less than DISK_RACY_USEC after that mtime (a change in the same timestamp
 * tick as the listing would not move it: git's "racy" rule).
 *
 * Temporary directories (DISK_TMP_PREFIX...) and unsafe names are never listed; the first listing
 * removes the temporary ones (a crash's leftovers, before any download of this process began)
 * and checks each model directory against its record (disk_write_record()).
 * One thread (the planner's).
 */

#include <stdbool.h>
#include <stddef.h>

#include "agent/plan.h"
#include "util/macro.h"

#define DISK_SOURCE_RECORD ".modelplane-source"
#define DISK_TMP_PREFIX    ".mp-tmp-"

struct disk_list;

/* @dir: the model directory (copied). @watch: kept from inotify when it can be (false: the
 * directory's stat decides, as without inotify). Never fails for want of inotify. */
_warn_unused_result_ int disk_list_new(const char *dir, bool watch, struct disk_list **ret);
struct disk_list *disk_list_free(struct disk_list *l);
DEFINE_CLEANUP_FUNC(struct disk_list *, disk_list_free)

/* The listing brought up to date, sorted by name; borrowed until the next call. 0, or a negative
 * errno (the directory cannot be read, -ENOMEM), after which the next call lists it whole. */
_warn_unused_result_ int disk_list_view(struct disk_list *l, const struct disk_model **ret,
                                        size_t *ret_n);

/*
 * Writes @dir's record (before @dir is moved into place): @uri on its first line, then the bytes
 * and the number of regular files @dir holds. The first listing after a restart checks a model
 * directory against its record, so a copy that a crash (power loss) cut short is downloaded
 * again instead of loaded: no fsync is needed on the way (the bench measured 1-8 ms per fsync,
 * and an fsynced record beside unsynced model files promised nothing). 0 or a negative errno
 * (-ENOSPC for a short write).
 */
_warn_unused_result_ int disk_write_record(const char *dir, const char *uri);

/* How many whole listings were made (tests, metrics). Thread-safe. */
unsigned long disk_list_scans(struct disk_list *l);

/* Whether inotify keeps it up to date (false: the directory's stat decides). */
bool disk_list_watched(const struct disk_list *l);
