/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/file-util.h"

static char dir[] = "/tmp/mp-file-util.XXXXXX";

static void setup(void)
{
        cr_assert_not_null(mkdtemp(dir));
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)type;
        (void)ftw;
        return remove(path) < 0 ? -1 : 0;
}

static void teardown(void)
{
        (void)nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

TestSuite(file_util, .init = setup, .fini = teardown);

/* Writes n bytes of data (or of 'x' when data is NULL) to dir/name and returns the path. */
static const char *put(const char *name, const void *data, size_t n)
{
        static char path[256];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        cr_assert_not_null(f, "%s: %m", path);
        for (size_t i = 0; i < n; i++)
                cr_assert_neq(fputc(data ? ((const char *)data)[i] : 'x', f), EOF);
        cr_assert_eq(fclose(f), 0);
        return path;
}

Test(file_util, reads_contents_and_length)
{
        const char *p = put("a", "hello\n", 6);
        char *s = NULL;
        size_t n = 0;

        cr_assert_eq(read_file_bounded(p, 64, READ_FILE_REFUSE_NUL, &s, &n, NULL), 0);
        cr_assert_str_eq(s, "hello\n");
        cr_assert_eq(n, 6);
        free(s);
}

Test(file_util, exact_limit_is_accepted_one_more_is_efbig)
{
        const char *p = put("limit", NULL, 100);
        char *s = NULL;
        size_t n = 0;

        cr_assert_eq(read_file_bounded(p, 100, 0, &s, &n, NULL), 0, "max bytes are allowed");
        cr_assert_eq(n, 100);
        cr_assert_eq(s[100], '\0', "the contents are NUL-terminated");
        free(s);
        s = NULL;
        cr_assert_eq(read_file_bounded(p, 99, 0, &s, &n, NULL), -EFBIG);
        cr_assert_null(s, "nothing is returned on failure");
}

Test(file_util, over_limit_large_file)
{
        const char *p = put("big", NULL, 100000);
        char *s = NULL;
        size_t n = 0;

        cr_assert_eq(read_file_bounded(p, 4096, READ_FILE_SECRET, &s, &n, NULL), -EFBIG);
        cr_assert_null(s);
        cr_assert_eq(read_file_bounded(p, 100000, READ_FILE_SECRET, &s, &n, NULL), 0);
        cr_assert_eq(n, 100000);
        cr_assert_eq(s[0], 'x');
        cr_assert_eq(s[99999], 'x');
        free(s);
}

Test(file_util, nul_byte_is_ebadmsg_only_when_refused)
{
        const char *p = put("nul", "ab\0cd", 5);
        char *s = NULL;
        size_t n = 0;

        cr_assert_eq(read_file_bounded(p, 64, READ_FILE_REFUSE_NUL, &s, &n, NULL), -EBADMSG);
        cr_assert_null(s);
        cr_assert_eq(read_file_bounded(p, 64, 0, &s, &n, NULL), 0, "binary contents by default");
        cr_assert_eq(n, 5);
        cr_assert_eq(memcmp(s, "ab\0cd", 6), 0);
        free(s);
}

Test(file_util, empty_file_is_empty_string)
{
        const char *p = put("empty", "", 0);
        char *s = NULL;
        size_t n = 7;

        cr_assert_eq(read_file_bounded(p, 64, READ_FILE_REFUSE_NUL | READ_FILE_REGULAR, &s, &n,
                                       NULL),
                     0);
        cr_assert_not_null(s);
        cr_assert_str_eq(s, "");
        cr_assert_eq(n, 0);
        free(s);
}

Test(file_util, missing_file_is_enoent)
{
        char path[256];
        char *s = NULL;

        (void)snprintf(path, sizeof(path), "%s/none", dir);
        cr_assert_eq(read_file_bounded(path, 64, 0, &s, NULL, NULL), -ENOENT);
        cr_assert_eq(read_file_bounded(path, 64, READ_FILE_REGULAR, &s, NULL, NULL), -ENOENT);
        cr_assert_null(s);
}

Test(file_util, directory_is_refused)
{
        char *s = NULL;

        cr_assert_eq(read_file_bounded(dir, 64, READ_FILE_REGULAR, &s, NULL, NULL), -EINVAL);
        cr_assert_eq(read_file_bounded(dir, 64, 0, &s, NULL, NULL), -EISDIR,
                     "without READ_FILE_REGULAR, the read fails");
        cr_assert_null(s);
}

Test(file_util, fifo_is_refused_without_blocking, .timeout = 60)
{
        char path[256];
        char *s = NULL;

        (void)snprintf(path, sizeof(path), "%s/fifo", dir);
        cr_assert_eq(mkfifo(path, 0600), 0);
        /* No writer: a blocking open() would hang here (the timeout detects it). */
        cr_assert_eq(read_file_bounded(path, 64, READ_FILE_REGULAR, &s, NULL, NULL), -EINVAL);
        cr_assert_null(s);
}

/* A FIFO without READ_FILE_REGULAR is read like a pipe: no size hint, the limit still holds. */
Test(file_util, fifo_is_read_and_bounded_without_regular, .timeout = 60)
{
        char path[256];
        pid_t pid;
        char *s = NULL;
        size_t n = 0;
        int status;

        (void)snprintf(path, sizeof(path), "%s/fifo", dir);
        cr_assert_eq(mkfifo(path, 0600), 0);
        for (int round = 0; round < 2; round++) {
                pid = fork();
                cr_assert_geq(pid, 0);
                if (pid == 0) {
                        char chunk[1000];
                        int fd = open(path, O_WRONLY | O_CLOEXEC);

                        memset(chunk, 'y', sizeof(chunk));
                        (void)signal(SIGPIPE, SIG_IGN);
                        for (int i = 0; fd >= 0 && i < 10; i++)
                                if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
                                        break;
                        _exit(0);
                }
                if (round == 0) {
                        cr_assert_eq(read_file_bounded(path, 10000, 0, &s, &n, NULL), 0);
                        cr_assert_eq(n, 10000);
                        cr_assert_eq(s[9999], 'y');
                        free(s);
                        s = NULL;
                } else {
                        cr_assert_eq(read_file_bounded(path, 9999, 0, &s, &n, NULL), -EFBIG);
                        cr_assert_null(s);
                }
                cr_assert_eq(waitpid(pid, &status, 0), pid);
        }
}

Test(file_util, identity_is_that_of_the_open_file)
{
        const char *p = put("id", "pem", 3);
        struct stat st, want;
        char *s = NULL;

        cr_assert_eq(stat(p, &want), 0);
        cr_assert_eq(read_file_bounded(p, 64, READ_FILE_REGULAR, &s, NULL, &st), 0);
        cr_assert_eq(st.st_dev, want.st_dev);
        cr_assert_eq(st.st_ino, want.st_ino);
        cr_assert_eq(st.st_size, 3);
        cr_assert(S_ISREG(st.st_mode));
        free(s);
}

Test(file_util, absurd_limit_is_einval)
{
        const char *p = put("a", "x", 1);
        char *s = NULL;

        cr_assert_eq(read_file_bounded(p, SIZE_MAX, 0, &s, NULL, NULL), -EINVAL);
        cr_assert_eq(read_file_bounded(NULL, 64, 0, &s, NULL, NULL), -EINVAL);
        cr_assert_null(s);
}

Test(path_resolve, relative_to_the_files_directory)
{
        char *p = NULL;

        cr_assert_eq(path_resolve("/etc/kube", "ca.crt", &p), 0);
        cr_assert_str_eq(p, "/etc/kube/ca.crt");
        free(p);
        cr_assert_eq(path_resolve("/etc/kube", "/abs/ca.crt", &p), 0);
        cr_assert_str_eq(p, "/abs/ca.crt");
        free(p);
        cr_assert_eq(path_resolve(NULL, "ca.crt", &p), 0);
        cr_assert_str_eq(p, "ca.crt");
        free(p);
}
