/* SPDX-License-Identifier: Apache-2.0 */
#include "transfer/layer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <gnutls/crypto.h>

#include "util/log.h"

#define DEPTH_MAX 64
#define CHUNK     ((size_t)256 << 10)

struct layer_out {
        int fd;
        gnutls_hash_hd_t hash;
        uint64_t size;
        int error; /* the first write's errno */
};

struct walk {
        struct archive *a;
        const struct layer_limits *lim;
        uint64_t bytes, entries;
        char *chunk;
        struct error_detail *e;
};

static la_ssize_t out_write(struct archive *a, void *userdata, const void *p, size_t len)
{
        struct layer_out *o = userdata;
        size_t done = 0;

        (void)a;
        while (done < len) {
                ssize_t w = write(o->fd, (const char *)p + done, len - done);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        o->error = w < 0 ? errno : EIO;
                        return -1;
                }
                done += (size_t)w;
        }
        (void)gnutls_hash(o->hash, p, len);
        o->size += len;
        return (la_ssize_t)len;
}

static void digest_hex(gnutls_hash_hd_t h, char ret[OCI_DIGEST_LEN])
{
        unsigned char md[32];

        gnutls_hash_deinit(h, md);
        (void)snprintf(ret, OCI_DIGEST_LEN, "sha256:");
        for (size_t i = 0; i < 32; i++)
                (void)snprintf(ret + 7 + 2 * i, 3, "%02x", md[i]);
}

static int add_header(struct walk *w, const char *name, const struct stat *st, bool dir)
{
        struct archive_entry *ent = archive_entry_new();
        int r = 0;

        if (!ent)
                return error_detail_set(w->e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        if (++w->entries > w->lim->entries_max) {
                archive_entry_free(ent);
                return error_detail_set(w->e, ERROR_INVALID, -EFBIG,
                                        "the model has more than %llu files and directories",
                                        (unsigned long long)w->lim->entries_max);
        }
        archive_entry_set_pathname(ent, name);
        archive_entry_set_filetype(ent, dir ? AE_IFDIR : AE_IFREG);
        archive_entry_set_perm(ent, dir || (st->st_mode & 0111) ? 0755 : 0644);
        archive_entry_set_size(ent, dir ? 0 : st->st_size);
        archive_entry_set_mtime(ent, 0, 0);
        archive_entry_set_uid(ent, 0);
        archive_entry_set_gid(ent, 0);
        if (archive_write_header(w->a, ent) != ARCHIVE_OK)
                r = error_detail_set(w->e, ERROR_INTERNAL, -EIO, "cannot write the layer: %s",
                                     archive_error_string(w->a));
        archive_entry_free(ent);
        return r;
}

static int add_file(struct walk *w, int dirfd, const char *leaf, const char *name)
{
        struct stat st;
        uint64_t left;
        int fd, r;

        fd = openat(dirfd, leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                return error_detail_set(w->e, ERROR_INTERNAL, r, "cannot read %s: %s", name,
                                        errno_to_string(r));
        }
        if ((uint64_t)st.st_size > w->lim->size_max - MIN(w->bytes, w->lim->size_max)) {
                close(fd);
                return error_detail_set(w->e, ERROR_INVALID, -EFBIG,
                                        "the model is larger than %llu bytes",
                                        (unsigned long long)w->lim->size_max);
        }
        r = add_header(w, name, &st, false);
        for (left = (uint64_t)st.st_size; r >= 0 && left > 0;) {
                ssize_t n = read(fd, w->chunk, (size_t)MIN(left, (uint64_t)CHUNK));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = error_detail_set(w->e, ERROR_INTERNAL, n < 0 ? -errno : -EIO,
                                             "cannot read %s: %s", name,
                                             n < 0 ? errno_to_string(-errno)
                                                   : "it shrank while read");
                        break;
                }
                if (archive_write_data(w->a, w->chunk, (size_t)n) != n)
                        r = error_detail_set(w->e, ERROR_INTERNAL, -EIO,
                                             "cannot write the layer: %s",
                                             archive_error_string(w->a));
                left -= (uint64_t)n;
        }
        w->bytes += (uint64_t)st.st_size;
        close(fd);
        return r;
}

static int filter_entries(const struct dirent *d)
{
        return !streq(d->d_name, ".") && !streq(d->d_name, "..");
}

static int walk_dir(struct walk *w, int dirfd, const char *prefix, unsigned depth);

static int walk_entry(struct walk *w, int dirfd, const char *leaf, const char *prefix,
                      unsigned depth)
{
        AUTOFREE char *name = NULL;
        struct stat st;
        int r, sub;

        if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return error_detail_set(w->e, ERROR_INTERNAL, -errno, "cannot stat %s/%s: %s",
                                        prefix, leaf, errno_to_string(-errno));
        if (asprintf(&name, "%s/%s", prefix, leaf) < 0)
                return error_detail_set(w->e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        if (S_ISREG(st.st_mode))
                return add_file(w, dirfd, leaf, name);
        if (!S_ISDIR(st.st_mode)) {
                log_warn("async-upload: %s is not a regular file or directory: left out", name);
                return 0;
        }
        if (depth >= DEPTH_MAX)
                return error_detail_set(w->e, ERROR_INVALID, -EFBIG,
                                        "the model's directories are nested more than 64 deep");
        r = add_header(w, name, &st, true);
        if (r < 0)
                return r;
        sub = openat(dirfd, leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (sub < 0)
                return error_detail_set(w->e, ERROR_INTERNAL, -errno, "cannot open %s: %s", name,
                                        errno_to_string(-errno));
        r = walk_dir(w, sub, name, depth + 1);
        close(sub);
        return r;
}

static int walk_dir(struct walk *w, int dirfd, const char *prefix, unsigned depth)
{
        struct dirent **list = NULL;
        int n, r = 0;

        /* scandirat sorts: the same model gives the same layer */
        n = scandirat(dirfd, ".", &list, filter_entries, alphasort);
        if (n < 0)
                return error_detail_set(w->e, ERROR_INTERNAL, -errno, "cannot list %s: %s", prefix,
                                        errno_to_string(-errno));
        for (int i = 0; i < n; i++) {
                if (r >= 0)
                        r = walk_entry(w, dirfd, list[i]->d_name, prefix, depth);
                free(list[i]);
        }
        free(list);
        return r;
}

/* The uncompressed tar's digest: the layer read back through libarchive's gzip filter. */
static int diff_id_of(int fd, char ret[OCI_DIGEST_LEN], struct error_detail *e)
{
        struct archive *a = archive_read_new();
        struct archive_entry *ent;
        gnutls_hash_hd_t h;
        const void *p;
        size_t len;
        la_int64_t off;
        int r = 0, ar;

        if (!a || gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0) {
                if (a)
                        archive_read_free(a);
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        }
        (void)archive_read_support_filter_gzip(a);
        (void)archive_read_support_format_raw(a);
        if (lseek(fd, 0, SEEK_SET) < 0 || archive_read_open_fd(a, fd, CHUNK) != ARCHIVE_OK ||
            archive_read_next_header(a, &ent) != ARCHIVE_OK)
                r = -EIO;
        while (r >= 0 && (ar = archive_read_data_block(a, &p, &len, &off)) == ARCHIVE_OK)
                (void)gnutls_hash(h, p, len);
        if (r >= 0 && ar != ARCHIVE_EOF)
                r = -EIO;
        if (r < 0)
                error_detail_set(e, ERROR_INTERNAL, r, "cannot read the layer back: %s",
                                 archive_error_string(a) ? archive_error_string(a) : "");
        digest_hex(h, ret);
        archive_read_free(a);
        return r;
}

int modelcar_layer_write(const char *dir, int out_fd, bool docker, const struct layer_limits *lim,
                         struct oci_descriptor *ret, char ret_diff_id[OCI_DIGEST_LEN],
                         struct error_detail *e)
{
        struct layer_out o = { .fd = out_fd };
        struct walk w = { .lim = lim, .e = e };
        struct stat st = { .st_mode = S_IFDIR | 0755 };
        int dfd, r;

        if (ftruncate(out_fd, 0) < 0 || lseek(out_fd, 0, SEEK_SET) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -errno, "cannot write the layer: %s",
                                        errno_to_string(-errno));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return error_detail_set(e, ERROR_INTERNAL, -errno, "cannot open %s: %s", dir,
                                        errno_to_string(-errno));
        w.chunk = malloc(CHUNK);
        w.a = archive_write_new();
        if (!w.chunk || !w.a || gnutls_hash_init(&o.hash, GNUTLS_DIG_SHA256) < 0) {
                r = error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
                goto out_noopen;
        }
        if (archive_write_set_format_pax_restricted(w.a) != ARCHIVE_OK ||
            archive_write_add_filter_gzip(w.a) != ARCHIVE_OK ||
            archive_write_set_bytes_in_last_block(w.a, 1) != ARCHIVE_OK ||
            archive_write_open2(w.a, &o, NULL, out_write, NULL, NULL) != ARCHIVE_OK) {
                r = error_detail_set(e, ERROR_INTERNAL, -EIO, "cannot start the layer: %s",
                                     archive_error_string(w.a));
                goto out;
        }
        r = add_header(&w, "models", &st, true);
        if (r >= 0)
                r = walk_dir(&w, dfd, "models", 1);
        if (r >= 0 && archive_write_close(w.a) != ARCHIVE_OK)
                r = error_detail_set(e, ERROR_INTERNAL, o.error ? -o.error : -EIO,
                                     "cannot write the layer: %s",
                                     o.error ? errno_to_string(-o.error)
                                             : archive_error_string(w.a));
out:
        digest_hex(o.hash, ret->digest);
out_noopen:
        if (w.a)
                archive_write_free(w.a);
        free(w.chunk);
        close(dfd);
        if (r < 0)
                return r;
        ret->size = o.size;
        (void)snprintf(ret->media_type, sizeof(ret->media_type), "%s",
                       docker ? DOCKER_MT_LAYER_GZIP : OCI_MT_LAYER_GZIP);
        if (fsync(out_fd) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -errno, "cannot write the layer: %s",
                                        errno_to_string(-errno));
        return diff_id_of(out_fd, ret_diff_id, e);
}
