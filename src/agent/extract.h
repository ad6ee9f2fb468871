/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Safe archive extraction (libarchive): .tar.gz/.tgz (any tar libarchive reads, gzip or not) and
 * .zip into a directory. Every entry is checked before anything is written: an absolute path, a
 * ".." segment, a symbolic link or hard link that leads outside the directory, or a device/FIFO
 * entry refuses the whole archive (-EPERM, the entry named in @reterr). Extraction also runs with
 * libarchive's own SECURE_NODOTDOT/SYMLINKS/NOABSOLUTEPATHS checks. The summed size of the
 * regular files is capped by @size_max (-EFBIG).
 */

#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

_warn_unused_result_ int archive_extract_safe(const char *archive_path, const char *dir,
                                              uint64_t size_max, char *reterr, size_t len_err);
