/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/extract.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/uri.h"

static struct archive *archive_read_freep_(struct archive *a)
{
        if (a)
                archive_read_free(a);
        return NULL;
}
DEFINE_CLEANUP_FUNC(struct archive *, archive_read_freep_)

static struct archive *archive_write_freep_(struct archive *a)
{
        if (a)
                archive_write_free(a);
        return NULL;
}
DEFINE_CLEANUP_FUNC(struct archive *, archive_write_freep_)

static const char *aerr(struct archive *a, const char *fallback)
{
        const char *s = archive_error_string(a);
        return s ? s : fallback;
}

static int open_reader(const char *path, struct archive **ret)
{
        struct archive *a = archive_read_new();

        if (!a)
                return -ENOMEM;
        archive_read_support_filter_all(a);
        archive_read_support_format_tar(a);
        archive_read_support_format_zip(a);
        if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
                archive_read_free(a);
                return -EBADMSG;
        }
        *ret = a;
        return 0;
}

/* One entry of the first pass: inside the model directory, of a kind we write. */
static int check_entry(struct archive_entry *e, char *reterr, size_t len)
{
        const char *name = archive_entry_pathname(e);
        mode_t type = archive_entry_filetype(e);
        const char *hl = archive_entry_hardlink(e);
        const char *target;

        if (!name || !relative_path_is_safe(name)) {
                (void)snprintf(reterr, len, "archive entry '%s' leaves the model directory",
                               name ? name : "(no name)");
                return -EPERM;
        }
        if (hl && !relative_path_is_safe(hl)) {
                (void)snprintf(
                        reterr, len,
                        "archive entry '%s' is a hard link out of the model directory ('%s')", name,
                        hl);
                return -EPERM;
        }
        if (type == AE_IFLNK) {
                target = archive_entry_symlink(e);
                if (link_target_is_safe(name, target))
                        return 0;
                (void)snprintf(
                        reterr, len,
                        "archive entry '%s' is a symbolic link out of the model directory ('%s')",
                        name, target ? target : "");
                return -EPERM;
        }
        if (type != AE_IFREG && type != AE_IFDIR && !hl) {
                (void)snprintf(reterr, len, "archive entry '%s' is not a file, directory or link",
                               name);
                return -EPERM;
        }
        return 0;
}

/* First pass: every entry is checked; nothing is written. */
static int check_entries(const char *path, uint64_t size_max, char *reterr, size_t len)
{
        CLEANUP(archive_read_freep_p) struct archive *a = NULL;
        struct archive_entry *e;
        uint64_t total = 0;
        int r;

        r = open_reader(path, &a);
        if (r < 0) {
                (void)snprintf(reterr, len, "not a readable archive");
                return r;
        }
        while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
                int k = check_entry(e, reterr, len);

                if (k < 0)
                        return k;
                if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size_is_set(e)) {
                        total += (uint64_t)archive_entry_size(e);
                        if (total > size_max) {
                                (void)snprintf(
                                        reterr, len,
                                        "archive content exceeds the size limit of %llu bytes",
                                        (unsigned long long)size_max);
                                return -EFBIG;
                        }
                }
                archive_read_data_skip(a);
        }
        if (r != ARCHIVE_EOF) {
                (void)snprintf(reterr, len, "corrupt archive: %s", aerr(a, "read error"));
                return -EBADMSG;
        }
        return 0;
}

static int copy_data(struct archive *in, struct archive *out, uint64_t *total, uint64_t size_max)
{
        const void *buf;
        size_t size;
        la_int64_t off;
        int r;

        for (;;) {
                r = archive_read_data_block(in, &buf, &size, &off);
                if (r == ARCHIVE_EOF)
                        return 0;
                if (r < ARCHIVE_WARN)
                        return -EBADMSG;
                *total += size;
                if (*total > size_max)
                        return -EFBIG;
                if (archive_write_data_block(out, buf, size, off) < ARCHIVE_WARN)
                        return -EIO;
        }
}

/* Second pass, one entry: its paths made absolute under @dir, our permissions, its data. */
static int extract_entry(struct archive *a, struct archive *w, struct archive_entry *e,
                         const char *dir, uint64_t *total, uint64_t size_max, char *reterr,
                         size_t len)
{
        AUTOFREE char *full = NULL, *fullhl = NULL;
        const char *hl = archive_entry_hardlink(e);
        int r;

        if (asprintf(&full, "%s/%s", dir, archive_entry_pathname(e)) < 0) {
                full = NULL;
                return -ENOMEM;
        }
        archive_entry_set_pathname(e, full);
        if (hl) {
                if (asprintf(&fullhl, "%s/%s", dir, hl) < 0) {
                        fullhl = NULL;
                        return -ENOMEM;
                }
                archive_entry_set_hardlink(e, fullhl);
        }
        /* owners and odd permission bits of the archive are not ours to keep */
        archive_entry_set_perm(e, archive_entry_filetype(e) == AE_IFDIR ? 0755 : 0644);
        if (archive_write_header(w, e) < ARCHIVE_WARN) {
                (void)snprintf(reterr, len, "cannot extract '%s': %s", archive_entry_pathname(e),
                               aerr(w, "write error"));
                return -EIO;
        }
        if (archive_entry_size(e) > 0) {
                r = copy_data(a, w, total, size_max);
                if (r < 0) {
                        (void)snprintf(reterr, len, "%s",
                                       r == -EFBIG ? "archive content exceeds the size limit"
                                                   : "corrupt archive data");
                        return r;
                }
        }
        if (archive_write_finish_entry(w) < ARCHIVE_WARN) {
                (void)snprintf(reterr, len, "cannot extract: %s", aerr(w, "error"));
                return -EIO;
        }
        return 0;
}

int archive_extract_safe(const char *path, const char *dir, uint64_t size_max, char *reterr,
                         size_t len)
{
        CLEANUP(archive_read_freep_p) struct archive *a = NULL;
        CLEANUP(archive_write_freep_p) struct archive *w = NULL;
        struct archive_entry *e;
        AUTOFREE char *real = NULL;
        uint64_t total = 0;
        int r;

        r = check_entries(path, size_max, reterr, len);
        if (r < 0)
                return r;
        r = open_reader(path, &a);
        if (r < 0)
                return r;
        real = realpath(dir, NULL);
        if (!real)
                return negative_errno();
        dir = real;
        w = archive_write_disk_new();
        if (!w)
                return -ENOMEM;
        /* entry paths become <real dir>/<entry>: absolute by construction, so not NOABSOLUTEPATHS
         * (check_entries() refused absolute entries already) */
        archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                  ARCHIVE_EXTRACT_SECURE_SYMLINKS);
        while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
                int k = extract_entry(a, w, e, dir, &total, size_max, reterr, len);

                if (k < 0)
                        return k;
        }
        if (r != ARCHIVE_EOF) {
                (void)snprintf(reterr, len, "corrupt archive: %s", aerr(a, "read error"));
                return -EBADMSG;
        }
        return 0;
}
