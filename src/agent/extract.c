/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/extract.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/space.h"
#include "agent/uri.h"
#include "util/log.h"

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

/* A reader of @fd: every filter, tar, and zip through the streaming reader (no seeking). */
static int open_reader(int fd, struct archive **ret)
{
        struct archive *a = archive_read_new();

        if (!a)
                return -ENOMEM;
        archive_read_support_filter_all(a);
        archive_read_support_format_tar(a);
        archive_read_support_format_zip_streamable(a);
        if (archive_read_open_fd(a, fd, 65536) != ARCHIVE_OK) {
                archive_read_free(a);
                return -EBADMSG;
        }
        *ret = a;
        return 0;
}

/* The errno of a failed libarchive write: ENOSPC/EDQUOT as such, else -EIO. */
static int write_errno(struct archive *w)
{
        int e = archive_errno(w);

        return e == ENOSPC || e == EDQUOT ? -e : -EIO;
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

/* What one extraction has used so far. */
struct extract_state {
        const struct extract_limits *lim;
        const char *dir;
        uint64_t total;    /* bytes of content accounted (declared, and beyond) */
        uint64_t written;  /* bytes of data written */
        uint64_t declared; /* summed declared sizes: what is known to be needed */
        uint64_t entries;  /* entries seen */
};

static int too_big(const struct extract_state *x, char *reterr, size_t len)
{
        (void)snprintf(reterr, len, "archive content exceeds the size limit of %llu bytes",
                       (unsigned long long)x->lim->size_max);
        return -EFBIG;
}

/* The entry's data; @declared bytes were accounted already, more (a lying or sparse entry) is
 * accounted as it comes. */
static int copy_data(struct archive *in, struct archive *out, struct extract_state *x,
                     uint64_t declared, char *reterr, size_t len)
{
        uint64_t extent = declared;
        const void *buf;
        size_t size;
        la_int64_t off;
        int r;

        for (;;) {
                r = archive_read_data_block(in, &buf, &size, &off);
                if (r == ARCHIVE_EOF)
                        return 0;
                if (r < ARCHIVE_WARN || off < 0) {
                        (void)snprintf(reterr, len, "corrupt archive data: %s",
                                       aerr(in, "read error"));
                        return -EBADMSG;
                }
                /* the apparent size (holes too) is what counts against the limit */
                if ((uint64_t)off + size > extent) {
                        x->total += (uint64_t)off + size - extent;
                        extent = (uint64_t)off + size;
                        if (x->total > x->lim->size_max)
                                return too_big(x, reterr, len);
                }
                /* libarchive's disk writer answers a failed write(2) (ENOSPC) with ARCHIVE_WARN,
                 * and its finish_entry then extends the file to its declared size: anything but
                 * ARCHIVE_OK is a lost write (issue 29: "Loaded" with the content cut) */
                if (archive_write_data_block(out, buf, size, off) != ARCHIVE_OK) {
                        r = write_errno(out);
                        if (errno_is_space(r))
                                return space_exhausted(x->dir, x->written, x->declared, reterr,
                                                       len);
                        (void)snprintf(reterr, len, "writing: %s", aerr(out, "write error"));
                        return r;
                }
                x->written += size;
        }
}

/* Limits and free space for the entry about to be written. */
static int account_entry(struct extract_state *x, struct archive_entry *e, uint64_t *ret_declared,
                         char *reterr, size_t len)
{
        uint64_t declared = 0;

        if (++x->entries > x->lim->entries_max) {
                (void)snprintf(reterr, len, "archive has more than %llu entries",
                               (unsigned long long)x->lim->entries_max);
                return -EFBIG;
        }
        if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size_is_set(e) &&
            archive_entry_size(e) > 0)
                declared = (uint64_t)archive_entry_size(e);
        if (declared > x->lim->size_max - MIN(x->total, x->lim->size_max))
                return too_big(x, reterr, len);
        x->total += declared;
        x->declared += declared;
        *ret_declared = declared;
        if (declared > 0) {
                char why[256];
                int r = space_check(x->dir, declared, why, sizeof(why));
                if (r < 0) {
                        (void)snprintf(reterr, len, "archive entry '%s': %s",
                                       archive_entry_pathname(e), why);
                        return r;
                }
        }
        return 0;
}

/* One entry: checked, its paths made absolute under @dir, our permissions, its data. */
static int extract_entry(struct archive *a, struct archive *w, struct archive_entry *e,
                         struct extract_state *x, char *reterr, size_t len)
{
        AUTOFREE char *full = NULL, *fullhl = NULL;
        const char *hl = archive_entry_hardlink(e);
        uint64_t declared = 0;
        int r;

        r = check_entry(e, reterr, len);
        if (r < 0)
                return r;
        r = account_entry(x, e, &declared, reterr, len);
        if (r < 0)
                return r;
        if (asprintf(&full, "%s/%s", x->dir, archive_entry_pathname(e)) < 0) {
                full = NULL;
                return -ENOMEM;
        }
        archive_entry_set_pathname(e, full);
        if (hl) {
                if (asprintf(&fullhl, "%s/%s", x->dir, hl) < 0) {
                        fullhl = NULL;
                        return -ENOMEM;
                }
                archive_entry_set_hardlink(e, fullhl);
        }
        /* owners and odd permission bits of the archive are not ours to keep */
        archive_entry_set_perm(e, archive_entry_filetype(e) == AE_IFDIR ? 0755 : 0644);
        if (archive_write_header(w, e) < ARCHIVE_WARN) {
                r = write_errno(w);
                if (errno_is_space(r))
                        return space_exhausted(x->dir, x->written, x->declared, reterr, len);
                (void)snprintf(reterr, len, "cannot extract '%s': %s", archive_entry_pathname(e),
                               aerr(w, "write error"));
                return r;
        }
        if (archive_entry_filetype(e) == AE_IFREG && !hl) {
                r = copy_data(a, w, x, declared, reterr, len);
                if (r < 0)
                        return r;
        }
        /* finishing writes what is left (a sparse tail, the size): a warning is a lost write */
        if (archive_write_finish_entry(w) != ARCHIVE_OK) {
                r = write_errno(w);
                if (errno_is_space(r))
                        return space_exhausted(x->dir, x->written, x->declared, reterr, len);
                (void)snprintf(reterr, len, "cannot extract '%s': %s", archive_entry_pathname(e),
                               aerr(w, "error"));
                return r;
        }
        return 0;
}

/* Every file extracted under @dir is on disk (syncfs reports the file system's write errors). */
static int sync_dir(const char *dir, char *reterr, size_t len)
{
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = 0;

        if (fd < 0 || syncfs(fd) < 0)
                r = negative_errno();
        if (fd >= 0 && close(fd) < 0 && r == 0)
                r = negative_errno();
        if (errno_is_space(r))
                return space_exhausted(dir, 0, 0, reterr, len);
        if (r < 0)
                (void)snprintf(reterr, len, "syncing %s: %s", dir, errno_to_string(-r));
        return r;
}

static int extract_stream(struct archive *a, const char *dir, const struct extract_limits *lim,
                          char *reterr, size_t len)
{
        CLEANUP(archive_write_freep_p) struct archive *w = NULL;
        struct extract_state x = { .lim = lim };
        struct archive_entry *e;
        AUTOFREE char *real = NULL;
        int r;

        real = realpath(dir, NULL);
        if (!real)
                return negative_errno();
        x.dir = real;
        w = archive_write_disk_new();
        if (!w)
                return -ENOMEM;
        /* entry paths become <real dir>/<entry>: absolute by construction, so not NOABSOLUTEPATHS
         * (check_entry() refuses absolute entries) */
        archive_write_disk_set_options(w, ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                  ARCHIVE_EXTRACT_SECURE_SYMLINKS);
        while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
                int k = extract_entry(a, w, e, &x, reterr, len);

                if (k < 0)
                        return k;
        }
        if (r != ARCHIVE_EOF) {
                (void)snprintf(reterr, len, "%s: %s",
                               x.entries ? "corrupt archive" : "not a readable archive",
                               aerr(a, "read error"));
                return -EBADMSG;
        }
        if (archive_write_close(w) != ARCHIVE_OK) {
                r = write_errno(w);
                if (errno_is_space(r))
                        return space_exhausted(x.dir, x.written, x.declared, reterr, len);
                (void)snprintf(reterr, len, "cannot finish extracting: %s", aerr(w, "error"));
                return r;
        }
        return sync_dir(x.dir, reterr, len);
}

int archive_extract_fd(int fd, const char *dir, const struct extract_limits *lim, char *reterr,
                       size_t len)
{
        CLEANUP(archive_read_freep_p) struct archive *a = NULL;
        int r;

        r = open_reader(fd, &a);
        if (r < 0) {
                (void)snprintf(reterr, len, "not a readable archive");
                return r;
        }
        return extract_stream(a, dir, lim, reterr, len);
}

int archive_extract_safe(const char *path, const char *dir, const struct extract_limits *lim,
                         char *reterr, size_t len)
{
        AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0) {
                int r = negative_errno();
                (void)snprintf(reterr, len, "%s: %s", path, errno_to_string(-r));
                return r;
        }
        return archive_extract_fd(fd, dir, lim, reterr, len);
}
