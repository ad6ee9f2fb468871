/* SPDX-License-Identifier: Apache-2.0 */
/* Safe extraction: archives built here with libarchive's writer, extracted into a temp dir, from
 * files and from pipes (streamed: no seeking); limits on archive bombs. */
#include <archive.h>
#include <archive_entry.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/extract.h"

static char root[64], out[128], arc[128];
static const struct extract_limits lim_1m = { .size_max = 1 << 20, .entries_max = 1000 };
static const struct extract_limits lim_15 = { .size_max = 15, .entries_max = 1000 };

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
        (void)st;
        (void)f;
        return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void setup(void)
{
        snprintf(root, sizeof(root), "/tmp/mp-extract-XXXXXX");
        cr_assert_not_null(mkdtemp(root));
        snprintf(out, sizeof(out), "%s/out/model", root);
        snprintf(arc, sizeof(arc), "%s/a", root);
        char d[128];
        snprintf(d, sizeof(d), "%s/out", root);
        cr_assert_eq(mkdir(d, 0755), 0);
        cr_assert_eq(mkdir(out, 0755), 0);
}

static void teardown(void)
{
        nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

struct ent {
        const char *path;
        char type;        /* f file, d dir, l symlink, h hardlink */
        const char *data; /* file content, or link target */
};

static void build(bool zip, const struct ent *e, size_t n)
{
        struct archive *a = archive_write_new();

        if (zip) {
                archive_write_set_format_zip(a);
        } else {
                archive_write_set_format_pax_restricted(a);
                archive_write_add_filter_gzip(a);
        }
        cr_assert_eq(archive_write_open_filename(a, arc), ARCHIVE_OK);
        for (size_t i = 0; i < n; i++) {
                struct archive_entry *x = archive_entry_new();
                archive_entry_set_pathname(x, e[i].path);
                archive_entry_set_perm(x, 0644);
                switch (e[i].type) {
                case 'f':
                        archive_entry_set_filetype(x, AE_IFREG);
                        archive_entry_set_size(x, (la_int64_t)strlen(e[i].data));
                        break;
                case 'd':
                        archive_entry_set_filetype(x, AE_IFDIR);
                        break;
                case 'l':
                        archive_entry_set_filetype(x, AE_IFLNK);
                        archive_entry_set_symlink(x, e[i].data);
                        break;
                case 'h':
                        archive_entry_set_filetype(x, AE_IFREG);
                        archive_entry_set_hardlink(x, e[i].data);
                        break;
                case 'c':
                        archive_entry_set_filetype(x, AE_IFCHR);
                        break;
                }
                cr_assert_eq(archive_write_header(a, x), ARCHIVE_OK);
                if (e[i].type == 'f')
                        cr_assert_eq(archive_write_data(a, e[i].data, strlen(e[i].data)),
                                     (la_ssize_t)strlen(e[i].data));
                archive_entry_free(x);
        }
        archive_write_close(a);
        archive_write_free(a);
}

static void refused(const struct ent *e, size_t n, int want, const char *needle)
{
        char err[512] = "", p[256];
        struct stat st;

        build(false, e, n);
        cr_assert_eq(archive_extract_safe(arc, out, &lim_1m, err, sizeof(err)), want, "%s", err);
        cr_assert(strstr(err, needle), "'%s' does not say '%s'", err, needle);
        snprintf(p, sizeof(p), "%s/out/x", root);
        cr_assert_neq(stat(p, &st), 0, "something was written outside");
        /* streamed: entries before the refused one are in @out, which the caller removes */
}

static char *slurp(const char *rel)
{
        char p[256], *buf = calloc(1, 4096);
        int fd;

        snprintf(p, sizeof(p), "%s/%s", out, rel);
        fd = open(p, O_RDONLY);
        cr_assert_geq(fd, 0, "%s missing", p);
        cr_assert_geq(read(fd, buf, 4095), 0);
        close(fd);
        return buf;
}

TestSuite(extract, .init = setup, .fini = teardown);

Test(extract, good_tar_gz)
{
        const struct ent e[] = {
                { "./model-settings.json", 'f', "{}" }, { "sub", 'd', NULL },
                { "sub/w.bin", 'f', "weights" },        { "sub/alias", 'l', "w.bin" },
                { "top", 'l', "sub/../sub/w.bin" },     { "hard", 'h', "sub/w.bin" },
        };
        char err[256] = "";
        char *s;

        build(false, e, sizeof(e) / sizeof(e[0]));
        cr_assert_eq(archive_extract_safe(arc, out, &lim_1m, err, sizeof(err)), 0, "%s", err);
        s = slurp("sub/alias");
        cr_assert_str_eq(s, "weights");
        free(s);
        s = slurp("hard");
        cr_assert_str_eq(s, "weights");
        free(s);
        s = slurp("model-settings.json");
        cr_assert_str_eq(s, "{}");
        free(s);
}

Test(extract, good_zip)
{
        const struct ent e[] = { { "m/model.joblib", 'f', "zipped" } };
        char err[256] = "";
        char *s;

        build(true, e, 1);
        cr_assert_eq(archive_extract_safe(arc, out, &lim_1m, err, sizeof(err)), 0, "%s", err);
        s = slurp("m/model.joblib");
        cr_assert_str_eq(s, "zipped");
        free(s);
}

Test(extract, dotdot_refused)
{
        const struct ent e[] = { { "first", 'f', "1" }, { "../x", 'f', "evil" } };
        refused(e, 2, -EPERM, "'../x' leaves the model directory");
}

Test(extract, nested_dotdot_refused)
{
        const struct ent e[] = { { "first", 'f', "1" }, { "a/../../x", 'f', "evil" } };
        refused(e, 2, -EPERM, "leaves the model directory");
}

Test(extract, absolute_refused)
{
        const struct ent e[] = { { "first", 'f', "1" }, { "/tmp/x", 'f', "evil" } };
        refused(e, 2, -EPERM, "'/tmp/x' leaves the model directory");
}

Test(extract, symlink_out_refused)
{
        const struct ent e[] = { { "first", 'f', "1" }, { "l", 'l', "../x" } };
        refused(e, 2, -EPERM, "symbolic link out of the model directory");
}

Test(extract, absolute_symlink_refused)
{
        const struct ent e[] = { { "first", 'f', "1" }, { "d/l", 'l', "/etc/passwd" } };
        refused(e, 2, -EPERM, "symbolic link out of the model directory ('/etc/passwd')");
}

Test(extract, hardlink_out_refused)
{
        const struct ent e[] = { { "first", 'f', "1" }, { "h", 'h', "../x" } };
        refused(e, 2, -EPERM, "hard link out of the model directory");
}

Test(extract, device_refused)
{
        const struct ent e[] = { { "first", 'f', "1" }, { "dev", 'c', NULL } };
        refused(e, 2, -EPERM, "not a file, directory or link");
}

Test(extract, size_limit)
{
        const struct ent e[] = { { "first", 'f', "0123456789" }, { "second", 'f', "0123456789" } };
        char err[256] = "";

        build(false, e, 2);
        cr_assert_eq(archive_extract_safe(arc, out, &lim_15, err, sizeof(err)), -EFBIG);
        cr_assert(strstr(err, "size limit of 15 bytes"), "%s", err);
}

Test(extract, corrupt)
{
        char err[256] = "";
        FILE *f = fopen(arc, "w");

        fputs("\x1f\x8b garbage that is not gzip at all", f);
        fclose(f);
        cr_assert_lt(archive_extract_safe(arc, out, &lim_1m, err, sizeof(err)), 0);
        cr_assert(err[0], "no message");
}

/* One archive of @count entries "f<i>" of @size zero bytes each (a bomb compresses well). */
static void build_zeros(bool zip, size_t count, size_t size)
{
        struct archive *a = archive_write_new();
        static char zeros[1 << 16];

        if (zip) {
                archive_write_set_format_zip(a);
        } else {
                archive_write_set_format_pax_restricted(a);
                archive_write_add_filter_gzip(a);
        }
        cr_assert_eq(archive_write_open_filename(a, arc), ARCHIVE_OK);
        for (size_t i = 0; i < count; i++) {
                struct archive_entry *x = archive_entry_new();
                char name[32];

                snprintf(name, sizeof(name), "f%zu", i);
                archive_entry_set_pathname(x, name);
                archive_entry_set_perm(x, 0644);
                archive_entry_set_filetype(x, AE_IFREG);
                archive_entry_set_size(x, (la_int64_t)size);
                cr_assert_eq(archive_write_header(a, x), ARCHIVE_OK);
                for (size_t done = 0; done < size;) {
                        size_t n = size - done < sizeof(zeros) ? size - done : sizeof(zeros);
                        cr_assert_eq(archive_write_data(a, zeros, n), (la_ssize_t)n);
                        done += n;
                }
                archive_entry_free(x);
        }
        cr_assert_eq(archive_write_close(a), ARCHIVE_OK);
        archive_write_free(a);
}

/* Bytes allocated under @out (what reached the disk). */
static long long du_out(void)
{
        long long total = 0;
        char p[256];
        struct stat st;

        for (int i = 0; i < 5000; i++) {
                snprintf(p, sizeof(p), "%s/f%d", out, i);
                if (stat(p, &st) == 0)
                        total += (long long)st.st_blocks * 512;
        }
        return total;
}

/* The archive file fed through a pipe by a child: libarchive cannot seek or re-read it. */
static int extract_through_pipe(const struct extract_limits *lim, char *err, size_t len)
{
        int fds[2], r, status;
        pid_t pid;

        cr_assert_eq(pipe(fds), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                char buf[65536];
                ssize_t n;
                int in = open(arc, O_RDONLY);

                close(fds[0]);
                while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
                        if (write(fds[1], buf, (size_t)n) != n)
                                _exit(0); /* the reader stopped: fine */
                _exit(0);
        }
        close(fds[1]);
        r = archive_extract_fd(fds[0], out, lim, err, len);
        close(fds[0]);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return r;
}

/* A gzip bomb whose entries declare their size: refused before a byte of it is written. */
Test(extract, tar_gz_bomb_declared)
{
        const struct extract_limits lim = { .size_max = 16 << 20, .entries_max = 1000 };
        char err[256] = "";

        build_zeros(false, 1, (size_t)256 << 20);
        cr_assert_eq(extract_through_pipe(&lim, err, sizeof(err)), -EFBIG, "%s", err);
        cr_assert(strstr(err, "size limit of 16777216 bytes"), "%s", err);
        cr_assert_lt(du_out(), 1 << 20, "%lld bytes written", du_out());
}

/* A zip bomb streamed: its entries' sizes are in data descriptors after the data, so they are
 * unknown when the entry starts; the limit stops it as the bytes are written. */
Test(extract, zip_bomb_streamed)
{
        const struct extract_limits lim = { .size_max = 16 << 20, .entries_max = 1000 };
        char err[256] = "";

        build_zeros(true, 4, (size_t)64 << 20);
        cr_assert_eq(extract_through_pipe(&lim, err, sizeof(err)), -EFBIG, "%s", err);
        cr_assert(strstr(err, "size limit"), "%s", err);
        cr_assert_leq(du_out(), (17LL << 20), "%lld bytes written", du_out());
}

/* Many small entries: the entry limit stops it. */
Test(extract, entry_count_bomb)
{
        const struct extract_limits lim = { .size_max = 1 << 20, .entries_max = 100 };
        char err[256] = "", p[256];
        struct stat st;

        build_zeros(false, 3000, 0);
        cr_assert_eq(extract_through_pipe(&lim, err, sizeof(err)), -EFBIG, "%s", err);
        cr_assert(strstr(err, "more than 100 entries"), "%s", err);
        snprintf(p, sizeof(p), "%s/f100", out);
        cr_assert_neq(stat(p, &st), 0, "entry 101 was written");
}

/* tar.gz and zip both extract from a pipe (no seeking): what the http download streams. */
Test(extract, streamed_from_pipe)
{
        const struct ent e[] = { { "m/model.joblib", 'f', "streamed" } };
        char err[256] = "", p[256];
        char *s;

        for (int zip = 0; zip < 2; zip++) {
                build(zip, e, 1);
                cr_assert_eq(extract_through_pipe(&lim_1m, err, sizeof(err)), 0, "%s", err);
                s = slurp("m/model.joblib");
                cr_assert_str_eq(s, "streamed");
                free(s);
                snprintf(p, sizeof(p), "%s/m/model.joblib", out);
                cr_assert_eq(unlink(p), 0);
        }
}
