/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Safe, streamed archive extraction (libarchive): tar (uncompressed, gzip, bzip2, xz, zstd: any
 * filter libarchive reads) and zip (libarchive's streaming zip reader: local headers, read in
 * order, no seeking) from a file descriptor into a directory, as the bytes arrive.
 *
 * Every entry is checked before it is written: an absolute path, a ".." segment, a symbolic or
 * hard link that leads outside the directory, or a device/FIFO entry refuses the archive (-EPERM,
 * the entry named in @reterr). Extraction also runs with libarchive's own
 * SECURE_NODOTDOT/SYMLINKS checks. Limits apply while bytes arrive: more than entries_max entries,
 * or more than size_max bytes of content (declared sizes and bytes written, sparse holes
 * included) stop it (-EFBIG), before the disk fills. An entry whose declared size does not fit in
 * the free space, or any write that fails with ENOSPC/EDQUOT, is -ENOSPC with the space needed
 * and available. Every libarchive write, finish and close result is checked; the files are
 * synced (syncfs) before success. On failure @dir holds partial content: the caller removes it.
 */

#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

struct extract_limits {
        uint64_t size_max;    /* bytes of content */
        uint64_t entries_max; /* archive entries (files, directories, links) */
};

/* Reads the archive from @fd until its end (the caller closes @fd). Returns 0, -EPERM,
 * -EFBIG, -ENOSPC, -EBADMSG (not a readable archive, corrupt or truncated), -EIO, -ENOMEM. */
_warn_unused_result_ int archive_extract_fd(int fd, const char *dir,
                                            const struct extract_limits *lim, char *reterr,
                                            size_t len);

/* The same from the file @archive_path. */
_warn_unused_result_ int archive_extract_safe(const char *archive_path, const char *dir,
                                              const struct extract_limits *lim, char *reterr,
                                              size_t len);
