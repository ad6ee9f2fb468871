/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The mounted-file source: <config_dir>/models.json as kubelet projects a ConfigMap (a "..data"
 * symlink swapped to a new timestamped directory) or as anything else rewrites it (in place, or
 * write-to-temp and rename). inotify on the directory (IN_CREATE, IN_MOVED_TO, IN_CLOSE_WRITE,
 * IN_DELETE, IN_ATTRIB) plus a poll every @poll_sec as a safety net; every wake-up re-reads the
 * file through its path (so the symlink chain is resolved afresh) and hands changed bytes to the
 * agent with its generation (agent/source.h): the mtime of the projection directory that "..data"
 * points to, the bytes read through that same directory (so both belong to one projection), or
 * the file's own mtime when it is not a kubelet projection. A missing file is "not known yet",
 * not "empty".
 */

#include "agent/agent.h"
#include "util/macro.h"

struct file_watch;

_warn_unused_result_ int file_watch_start(struct agent *a, const char *config_dir,
                                          unsigned poll_sec, struct file_watch **ret);
struct file_watch *file_watch_stop(struct file_watch *w);
DEFINE_CLEANUP_FUNC(struct file_watch *, file_watch_stop)
