/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/disk.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/string-util.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/parse-util.h"
#include "util/time-util.h"

#define DISK_RACY_USEC   (100 * USEC_PER_MSEC)
#define DISK_RELIST_USEC (60 * USEC_PER_SEC)
#define RECORD_MAX       8192
#define EVENTS_BUF       (64 * 1024)
#define WATCHED                                                                                \
        (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
         IN_ONLYDIR)

struct disk_list {
        char *dir;
        int ino;                  /* inotify descriptor, or -1: the directory's stat decides */
        bool stale;               /* a whole listing is due */
        struct disk_model *items; /* sorted by name; names and URIs owned */
        size_t n;
        struct stat st;     /* the directory's stat before the last whole listing */
        usec_t listed_at;   /* CLOCK_REALTIME when it began */
        atomic_ulong scans; /* read by other threads (agent_counters()) */
};

static void items_release(struct disk_model *items, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free((char *)items[i].name);
                free((char *)items[i].source_uri);
        }
        free(items);
}

int disk_list_new(const char *dir, bool watch, struct disk_list **ret)
{
        struct disk_list *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->dir = strdup(dir);
        if (!l->dir) {
                free(l);
                return -ENOMEM;
        }
        l->stale = true;
        l->ino = watch ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
        if (l->ino >= 0 && inotify_add_watch(l->ino, dir, WATCHED) < 0) {
                log_warn("agent: cannot watch %s (%s): its listing follows its mtime", dir,
                         errno_to_string(errno));
                (void)close(l->ino);
                l->ino = -1;
        }
        *ret = l;
        return 0;
}

struct disk_list *disk_list_free(struct disk_list *l)
{
        if (!l)
                return NULL;
        if (l->ino >= 0)
                (void)close(l->ino);
        items_release(l->items, l->n);
        free(l->dir);
        free(l);
        return NULL;
}

unsigned long disk_list_scans(struct disk_list *l)
{
        return atomic_load(&l->scans);
}

bool disk_list_watched(const struct disk_list *l)
{
        return l->ino >= 0;
}

static bool is_tmp(const char *name)
{
        return strncmp(name, DISK_TMP_PREFIX, strlen(DISK_TMP_PREFIX)) == 0;
}

/* What a model directory holds besides its record: regular files and their bytes. nftw() takes
 * no user data, and download workers walk at the same time: the sums are the thread's own. */
static _Thread_local struct disk_tally {
        uint64_t bytes, files;
} tally;

static int tally_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        if (flag == FTW_F && S_ISREG(st->st_mode) &&
            !(ftw->level == 1 && streq(path + ftw->base, DISK_SOURCE_RECORD))) {
                tally.bytes += (uint64_t)st->st_size;
                tally.files++;
        }
        return 0;
}

static int tree_tally(const char *dir, struct disk_tally *ret)
{
        tally = (struct disk_tally){ 0 };
        /* glibc's nftw() is thread-safe without FTW_CHDIR (it never changes the cwd) */
        if (nftw(dir, tally_one, 16, FTW_PHYS) < 0) /* NOLINT(concurrency-mt-unsafe) */
                return negative_errno();
        *ret = tally;
        return 0;
}

int disk_write_record(const char *dir, const char *uri)
{
        AUTOFREE char *path = NULL, *text = NULL;
        AUTOCLOSE int fd = -EBADF;
        struct disk_tally t = { 0 };
        int len, r;

        r = tree_tally(dir, &t);
        if (r < 0)
                return r;
        len = asprintf(&text, "%s\nsize %" PRIu64 " files %" PRIu64 "\n", uri, t.bytes, t.files);
        if (len < 0 || asprintf(&path, "%s/" DISK_SOURCE_RECORD, dir) < 0) {
                text = NULL;
                return -ENOMEM;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        /* a short write sets no errno: ENOSPC is what a full volume gives */
        errno = 0;
        if (write(fd, text, (size_t)len) != (ssize_t)len)
                return errno ? negative_errno() : -ENOSPC;
        if (close(TAKE_FD(fd)) < 0)
                return negative_errno();
        return 0;
}

/* The record's second line, "size BYTES files COUNT". */
static bool parse_tally(char *line, struct disk_tally *ret)
{
        char *files;

        line[strcspn(line, "\n")] = 0;
        files = strstr(line, " files ");
        if (strncmp(line, "size ", 5) != 0 || !files)
                return false;
        *files = 0;
        return safe_atou64(line + 5, &ret->bytes) >= 0 && safe_atou64(files + 7, &ret->files) >= 0;
}

/* The storage URI @name's record names; NULL when it is missing or unreadable, or, with @verify,
 * when the directory no longer holds what the record says it was written with. */
static char *read_record(const char *dir, const char *name, bool verify)
{
        AUTOFREE char *path = NULL, *model = NULL;
        struct disk_tally want, got = { 0 };
        char buf[RECORD_MAX], *second;
        ssize_t n;
        AUTOCLOSE int fd = -EBADF;

        if (asprintf(&path, "%s/%s/" DISK_SOURCE_RECORD, dir, name) < 0)
                return NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return NULL;
        buf[n] = 0;
        second = buf + strcspn(buf, "\n");
        if (*second)
                *second++ = 0;
        /* a record of an older modelplane has no second line: taken as it is */
        if (verify && parse_tally(second, &want)) {
                if (asprintf(&model, "%s/%s", dir, name) < 0) {
                        model = NULL;
                        return NULL;
                }
                if (tree_tally(model, &got) < 0 || got.bytes != want.bytes ||
                    got.files != want.files) {
                        log_warn("agent: %s holds %" PRIu64 " bytes in %" PRIu64
                                 " files, its record says %" PRIu64 " in %" PRIu64
                                 " (cut short by a crash?): downloading it again",
                                 model, got.bytes, got.files, want.bytes, want.files);
                        return NULL;
                }
        }
        return strdup(buf);
}

/* Whether @name is a model directory now; its record's URI in *ret_uri (NULL: none). -ENOMEM. */
static int look_at(const struct disk_list *l, const char *name, bool verify, bool *ret_dir,
                   char **ret_uri)
{
        AUTOFREE char *path = NULL;
        struct stat st;

        *ret_dir = false;
        *ret_uri = NULL;
        if (asprintf(&path, "%s/%s", l->dir, name) < 0)
                return -ENOMEM;
        if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                return 0;
        *ret_dir = true;
        *ret_uri = read_record(l->dir, name, verify);
        return 0;
}

static int cmp_item(const void *x, const void *y)
{
        return strcmp(((const struct disk_model *)x)->name, ((const struct disk_model *)y)->name);
}

/* Lists the directory whole into *ret_items (sorted). @remove_leftovers: temporary
 * directories are removed (a crash's; only before any download of this process began). */
static int scan(struct disk_list *l, bool remove_leftovers, struct disk_model **ret_items,
                size_t *ret_n)
{
        struct disk_model *items = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *dir = opendir(l->dir);
        int r = 0;

        if (!dir)
                return negative_errno();
        /* readdir() is thread-safe on a stream of one thread (glibc; readdir_r is deprecated) */
        while (r == 0 && (de = readdir(dir))) { /* NOLINT(concurrency-mt-unsafe) */
                AUTOFREE char *path = NULL;
                struct disk_model *v;
                char *name, *uri;
                bool is_dir;

                if (is_tmp(de->d_name)) {
                        if (remove_leftovers && asprintf(&path, "%s/%s", l->dir, de->d_name) >= 0) {
                                log_info("agent: removing leftover %s", path);
                                (void)remove_tree(path, false);
                        }
                        continue;
                }
                if (agent_model_name_problem(de->d_name, strlen(de->d_name)))
                        continue;
                r = look_at(l, de->d_name, remove_leftovers, &is_dir, &uri);
                if (r < 0 || !is_dir)
                        continue;
                v = reallocarray(items, n + 1, sizeof(*items));
                name = v ? strdup(de->d_name) : NULL;
                if (v)
                        items = v;
                if (!name) {
                        free(uri);
                        r = -ENOMEM;
                        continue;
                }
                items[n++] = (struct disk_model){ .name = name, .source_uri = uri };
        }
        closedir(dir);
        if (r < 0) {
                items_release(items, n);
                return r;
        }
        if (n > 1)
                qsort(items, n, sizeof(*items), cmp_item);
        *ret_items = items;
        *ret_n = n;
        return 0;
}

/* Looks at @name again and updates its entry. -ENOMEM leaves the listing as it was. */
static int refresh(struct disk_list *l, const char *name)
{
        bool found, is_dir;
        size_t pos = sorted_find(l->items, l->n, sizeof(*l->items), name, &found);
        AUTOFREE char *uri = NULL;
        struct disk_model *v;
        char *copy;
        int r;

        r = look_at(l, name, false, &is_dir, &uri);
        if (r < 0)
                return r;
        if (!is_dir) {
                if (found) {
                        free((char *)l->items[pos].name);
                        free((char *)l->items[pos].source_uri);
                        memmove(&l->items[pos], &l->items[pos + 1], (l->n - pos - 1) * sizeof(*v));
                        l->n--;
                }
                return 0;
        }
        if (found) {
                free((char *)l->items[pos].source_uri);
                l->items[pos].source_uri = TAKE_PTR(uri);
                return 0;
        }
        copy = strdup(name);
        v = copy ? reallocarray(l->items, l->n + 1, sizeof(*v)) : NULL;
        if (!v) {
                free(copy);
                return -ENOMEM;
        }
        l->items = v;
        memmove(&v[pos + 1], &v[pos], (l->n - pos) * sizeof(*v));
        v[pos] = (struct disk_model){ .name = copy, .source_uri = TAKE_PTR(uri) };
        l->n++;
        return 0;
}

/* Reads the queued events; with @apply, looks again at each entry they name. Marks the listing
 * stale on an overflow, a move or removal of the directory, or a failed update. */
static void drain(struct disk_list *l, bool apply)
{
        _Alignas(struct inotify_event) char buf[EVENTS_BUF];

        for (;;) {
                ssize_t n = read(l->ino, buf, sizeof(buf));
                const struct inotify_event *ev;

                if (n <= 0) {
                        if (n < 0 && errno != EAGAIN && errno != EINTR)
                                l->stale = true;
                        if (n < 0 && errno == EINTR)
                                continue;
                        return;
                }
                for (char *p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
                        ev = (const struct inotify_event *)p;
                        if (ev->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
                                l->stale = true;
                        if (!apply || l->stale || ev->len == 0 || is_tmp(ev->name) ||
                            agent_model_name_problem(ev->name, strlen(ev->name)))
                                continue;
                        if (refresh(l, ev->name) < 0)
                                l->stale = true;
                }
        }
}

static usec_t timespec_usec(const struct timespec *t)
{
        return (usec_t)t->tv_sec * USEC_PER_SEC + (usec_t)t->tv_nsec / 1000;
}

/* Without inotify: whether the directory's stat says the listing still holds. */
static bool stat_holds(const struct disk_list *l, const struct stat *st, usec_t now)
{
        return st->st_ino == l->st.st_ino &&
               timespec_usec(&st->st_mtim) == timespec_usec(&l->st.st_mtim) &&
               timespec_usec(&st->st_ctim) == timespec_usec(&l->st.st_ctim) &&
               l->listed_at > timespec_usec(&st->st_mtim) + DISK_RACY_USEC;
}

int disk_list_view(struct disk_list *l, const struct disk_model **ret, size_t *ret_n)
{
        struct disk_model *items = NULL;
        usec_t began = now_realtime();
        struct stat st;
        size_t n = 0;
        int r;

        if (l->ino >= 0 && !l->stale)
                drain(l, true);
        if (stat(l->dir, &st) < 0)
                return negative_errno();
        if (!l->stale && began - l->listed_at < DISK_RELIST_USEC &&
            (l->ino >= 0 || stat_holds(l, &st, began)))
                goto done;
        if (l->ino >= 0) {
                /* watched again if the directory was replaced; the queue is what the listing
                 * below sees anyway */
                (void)inotify_add_watch(l->ino, l->dir, WATCHED);
                drain(l, false);
        }
        r = scan(l, atomic_load(&l->scans) == 0, &items, &n);
        if (r < 0) {
                l->stale = true;
                return r;
        }
        items_release(l->items, l->n);
        l->items = items;
        l->n = n;
        l->st = st;
        l->listed_at = began;
        l->stale = false;
        atomic_fetch_add(&l->scans, 1);
done:
        *ret = l->items;
        *ret_n = l->n;
        return 0;
}
