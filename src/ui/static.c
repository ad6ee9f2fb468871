/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/static.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ui/static-path.h"
#include "util/file-util.h"

struct ui_static {
        int dirfd;
        char *root; /* realpath of the directory */
        bool has_index;
};

static int open_beneath(const struct ui_static *s, const char *rel)
{
        struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
                                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
        AUTOFREE char *joined = NULL, *real = NULL;
        size_t n;
        long fd;

        fd = syscall(SYS_openat2, s->dirfd, rel, &how, sizeof(how));
        if (fd >= 0)
                return (int)fd;
        if (errno != ENOSYS && errno != EPERM)
                return errno == EXDEV ? -ENOENT : negative_errno();
        /* No openat2 (old kernel, seccomp): resolve and check the prefix instead. */
        if (asprintf(&joined, "%s/%s", s->root, rel) < 0) {
                joined = NULL;
                return -ENOMEM;
        }
        real = realpath(joined, NULL);
        if (!real)
                return negative_errno();
        n = strlen(s->root);
        if (!strneq(real, s->root, n) || real[n] != '/')
                return -ENOENT;
        fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? negative_errno() : (int)fd;
}

/* The regular file at fd, whole, as the body of resp (at most UI_STATIC_FILE_MAX bytes). */
static int read_body(int fd, struct http_resp *resp)
{
        AUTOFREE char *data = NULL;
        size_t len = 0;
        int r;

        r = read_fd_bounded(fd, UI_STATIC_FILE_MAX, READ_FILE_REGULAR, &data, &len, NULL);
        if (r == -EINVAL)
                return -ENOENT; /* a directory or a device is not served */
        if (r < 0)
                return r;
        return buf_append(&resp->body, data, len) < 0 ? -ENOMEM : 0;
}

int ui_static_open(const char *dir, struct ui_static **ret)
{
        struct ui_static *s;
        struct stat st;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dirfd < 0) {
                int r = negative_errno();

                free(s);
                return r;
        }
        s->root = realpath(dir, NULL);
        if (!s->root) {
                int r = negative_errno();

                ui_static_free(s);
                return r;
        }
        s->has_index = fstatat(s->dirfd, "index.html", &st, 0) == 0 && S_ISREG(st.st_mode);
        *ret = s;
        return 0;
}

struct ui_static *ui_static_free(struct ui_static *s)
{
        if (!s)
                return NULL;
        if (s->dirfd >= 0)
                (void)close(s->dirfd);
        free(s->root);
        free(s);
        return NULL;
}

bool ui_static_has_index(const struct ui_static *s)
{
        return s && s->has_index;
}

const char *ui_static_root(const struct ui_static *s)
{
        return s->root;
}

int ui_static_serve(const struct ui_static *s, const char *rel, bool gzip_ok,
                    struct http_resp *resp)
{
        AUTOCLOSE int fd = -EBADF;
        bool gz = false;
        int r;

        if (gzip_ok) {
                char gzname[UI_STATIC_PATH_MAX + 4];

                if ((size_t)snprintf(gzname, sizeof(gzname), "%s.gz", rel) < sizeof(gzname)) {
                        fd = open_beneath(s, gzname);
                        gz = fd >= 0;
                }
        }
        if (fd < 0)
                fd = open_beneath(s, rel);
        if (fd < 0)
                return fd == -ENOTDIR || fd == -ELOOP || fd == -EACCES ? -ENOENT : fd;
        http_resp_set_text(resp, 200, ui_content_type(rel), "");
        r = read_body(fd, resp);
        if (r < 0)
                return r;
        if (http_resp_add_header(resp, "Cache-Control", ui_cache_control(rel)) < 0 ||
            http_resp_add_header(resp, "Vary", "Accept-Encoding") < 0 ||
            (gz && http_resp_add_header(resp, "Content-Encoding", "gzip") < 0))
                return -ENOMEM;
        return 0;
}
