/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The catalog service: owns the current index snapshot and rebuilds it when the configured files
 * change.
 *
 * Reload: the sources files are re-parsed and merged; every enabled yaml source's catalog file is
 * re-read unless its stat signature (device, inode, size, mtime) is unchanged; a new index is
 * built aside and swapped in under a short lock. A request that took a reference before the swap
 * finishes on the old snapshot. A broken sources file keeps the whole previous snapshot; a broken
 * catalog file keeps serving that source's last good models and shows the error in the source's
 * status.
 *
 * Watching: inotify on the parent directory of every configured file (so the rename of a
 * Kubernetes ConfigMap volume's "..data" symlink is seen), debounced, plus a periodic stat
 * fallback for filesystems without inotify. One watcher thread; reloads are serialised.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/hf-sync.h"
#include "catalog/index.h"
#include "catalog/yaml-util.h"
#include "util/macro.h"

struct catalog_service;

/* Called (from the watcher thread) after every reload attempt: r < 0 means the config was rejected. */
typedef void (*catalog_reload_fn)(void *userdata, int r, const struct error_detail *err,
                                  const struct catalog_index *idx /* borrowed; NULL on error */);

struct catalog_service_config {
        char *const *config_paths; /* borrowed for the call; copied */
        size_t n_config_paths;
        unsigned poll_interval_ms;   /* stat fallback period; 0 = 5000 */
        unsigned debounce_ms;        /* quiet time after an inotify event; 0 = 200 */
        catalog_reload_fn on_reload; /* optional */
        void *userdata;
        const struct catalog_hf_opts *hf_opts; /* optional: hub client timeouts (copied) */
};

/*
 * Loads the initial catalog. A sources file that cannot be parsed is fatal here (-EINVAL etc.,
 * err filled), as upstream exits at startup; broken catalog files only mark their sources.
 */
_warn_unused_result_ int catalog_service_new(const struct catalog_service_config *cfg,
                                             struct catalog_service **ret,
                                             struct error_detail *err);
/* Stops the watcher (if started) and frees. Accepts NULL; returns NULL. */
struct catalog_service *catalog_service_free(struct catalog_service *s);
DEFINE_CLEANUP_FUNC(struct catalog_service *, catalog_service_free)

/* Returns: new reference to the current snapshot; caller unrefs. Never NULL. */
struct catalog_index *catalog_service_get(struct catalog_service *s);

/* Reloads now (serialised with the watcher; after the first load the build runs on one of two
 * builder threads, the caller waiting). On a config error the previous snapshot stays. */
_warn_unused_result_ int catalog_service_reload(struct catalog_service *s,
                                                struct error_detail *err);

/*
 * Syncs the hf sources from the hub now: those whose syncInterval passed, or all; then rebuilds
 * the snapshot. The watcher thread does this by itself. Returns the number of sources synced.
 * A new or changed hf source syncs during the reload that finds it (so the first snapshot of
 * catalog_service_new() already has its models, as upstream's loader waits for them).
 */
_warn_unused_result_ int catalog_service_sync_hf(struct catalog_service *s, bool all);

/* Number of snapshots swapped in so far (1 after catalog_service_new()). */
uint64_t catalog_service_generation(struct catalog_service *s);

/* Starts the watcher thread. */
_warn_unused_result_ int catalog_service_watch_start(struct catalog_service *s);

/* The directory used to resolve relative preview paths (dir of the first config file). Borrowed. */
const char *catalog_service_base_dir(const struct catalog_service *s);
