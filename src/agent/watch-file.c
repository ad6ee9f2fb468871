/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/watch-file.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serving/modelconfig.h"
#include "util/buf.h"
#include "util/log.h"

struct file_watch {
        struct agent *agent;
        char *dir;
        char *path;
        char *data_dir; /* <dir>/..data, kubelet's projection */
        unsigned poll_sec;
        int ino;
        int stop_pipe[2];
        pthread_t thread;
        char *last; /* the bytes last handed over */
};

#define PROJECTED_LINK "..data/" MODELCONFIG_KEY

static uint64_t mtime_ns(const struct stat *st)
{
        return (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;
}

/*
 * Opens models.json with its generation (agent/source.h): in a kubelet projection
 * (models.json -> ..data/models.json, ..data -> ..<timestamp>/) through the "..data" directory,
 * so the bytes and the mtime are those of one projection even while kubelet swaps the link; any
 * other file with its own mtime. Returns the descriptor or a negative errno.
 */
static int open_models(const struct file_watch *w, uint64_t *ret_gen)
{
        char link[sizeof(PROJECTED_LINK)];
        ssize_t n = readlink(w->path, link, sizeof(link));
        struct stat st;
        int fd;

        if (n == (ssize_t)strlen(PROJECTED_LINK) && memcmp(link, PROJECTED_LINK, (size_t)n) == 0) {
                AUTOCLOSE int dfd = open(w->data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (dfd >= 0 && fstat(dfd, &st) == 0) {
                        fd = openat(dfd, MODELCONFIG_KEY, O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                return negative_errno();
                        *ret_gen = mtime_ns(&st);
                        return fd;
                }
        }
        fd = open(w->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        *ret_gen = mtime_ns(&st);
        return fd;
}

/* Reads the file; returns 0 with the contents and its generation, -ENOENT, -EFBIG, or another
 * errno. */
static int read_models(const struct file_watch *w, char **ret, uint64_t *ret_gen)
{
        struct buf b = BUF_INIT(MODELCONFIG_DATA_MAX * 2);
        AUTOCLOSE int fd = open_models(w, ret_gen);
        char chunk[65536];
        ssize_t n;

        if (fd < 0)
                return fd;
        while ((n = read(fd, chunk, sizeof(chunk))) > 0)
                if (buf_append(&b, chunk, (size_t)n) < 0) {
                        buf_release(&b);
                        return -EFBIG;
                }
        if (n < 0) {
                buf_release(&b);
                return negative_errno();
        }
        *ret = buf_take(&b, NULL);
        return *ret ? 0 : -ENOMEM;
}

static void check(struct file_watch *w)
{
        char *data = NULL;
        uint64_t gen = 0;
        int r = read_models(w, &data, &gen);

        /* Keyed on @data, which read_models() sets exactly when it returns 0: the analyzer cannot
         * tell that from r, as it does not know that negative_errno() is below 0. */
        if (!data) {
                if (r != -ENOENT)
                        log_warn_errno(r, "agent: cannot read %s", w->path);
                return;
        }
        if (w->last && streq(w->last, data)) {
                free(data);
                return;
        }
        log_info("agent: %s changed (%zu bytes)", w->path, strlen(data));
        agent_set_desired(w->agent, AGENT_SOURCE_FILE, data, gen);
        free(w->last);
        w->last = data;
}

static void *file_thread(void *userdata)
{
        struct file_watch *w = userdata;
        char evbuf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));

        check(w);
        for (;;) {
                struct pollfd p[2] = { { .fd = w->stop_pipe[0], .events = POLLIN },
                                       { .fd = w->ino, .events = POLLIN } };
                int n = poll(p, w->ino >= 0 ? 2 : 1, (int)w->poll_sec * 1000);

                if (n < 0 && errno != EINTR)
                        break;
                if (p[0].revents)
                        break;
                if (n > 0 && p[1].revents)
                        while (read(w->ino, evbuf, sizeof(evbuf)) > 0)
                                ;
                check(w);
        }
        return NULL;
}

int file_watch_start(struct agent *a, const char *config_dir, unsigned poll_sec,
                     struct file_watch **ret)
{
        struct file_watch *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->agent = a;
        w->poll_sec = poll_sec ? poll_sec : 10;
        w->ino = -EBADF;
        w->stop_pipe[0] = w->stop_pipe[1] = -EBADF;
        w->dir = strdup(config_dir);
        if (!w->dir || asprintf(&w->path, "%s/%s", config_dir, MODELCONFIG_KEY) < 0) {
                free(w->dir);
                free(w);
                return -ENOMEM;
        }
        if (asprintf(&w->data_dir, "%s/..data", config_dir) < 0) {
                free(w->dir);
                free(w->path);
                free(w);
                return -ENOMEM;
        }
        if (pipe2(w->stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
                r = negative_errno();
                goto fail;
        }
        w->ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (w->ino < 0 || inotify_add_watch(w->ino, config_dir,
                                            IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE |
                                                    IN_ATTRIB | IN_MOVED_FROM) < 0) {
                log_warn_errno(errno, "agent: no inotify on %s, polling every %u s", config_dir,
                               w->poll_sec);
                if (w->ino >= 0)
                        close(w->ino);
                w->ino = -EBADF;
        }
        r = -pthread_create(&w->thread, NULL, file_thread, w);
        if (r < 0)
                goto fail;
        *ret = w;
        return 0;
fail:
        if (w->ino >= 0)
                close(w->ino);
        if (w->stop_pipe[0] >= 0) {
                close(w->stop_pipe[0]);
                close(w->stop_pipe[1]);
        }
        free(w->dir);
        free(w->path);
        free(w->data_dir);
        free(w);
        return r;
}

struct file_watch *file_watch_stop(struct file_watch *w)
{
        if (!w)
                return NULL;
        (void)!write(w->stop_pipe[1], "x", 1);
        pthread_join(w->thread, NULL);
        if (w->ino >= 0)
                close(w->ino);
        close(w->stop_pipe[0]);
        close(w->stop_pipe[1]);
        free(w->dir);
        free(w->path);
        free(w->data_dir);
        free(w->last);
        free(w);
        return NULL;
}
