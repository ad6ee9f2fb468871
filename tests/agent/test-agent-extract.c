/* SPDX-License-Identifier: Apache-2.0 */
/* Safe extraction: archives built here with libarchive's writer, extracted into a temp dir. */
#include <archive.h>
#include <archive_entry.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/extract.h"

static char root[64], out[128], arc[128];

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
        cr_assert_eq(archive_extract_safe(arc, out, 1 << 20, err, sizeof(err)), want, "%s", err);
        cr_assert(strstr(err, needle), "'%s' does not say '%s'", err, needle);
        snprintf(p, sizeof(p), "%s/out/x", root);
        cr_assert_neq(stat(p, &st), 0, "something was written outside");
        snprintf(p, sizeof(p), "%s/first", out);
        cr_assert_neq(stat(p, &st), 0, "a refused archive wrote its first entry");
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
        cr_assert_eq(archive_extract_safe(arc, out, 1 << 20, err, sizeof(err)), 0, "%s", err);
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
        cr_assert_eq(archive_extract_safe(arc, out, 1 << 20, err, sizeof(err)), 0, "%s", err);
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
        cr_assert_eq(archive_extract_safe(arc, out, 15, err, sizeof(err)), -EFBIG);
        cr_assert(strstr(err, "size limit of 15 bytes"), "%s", err);
}

Test(extract, corrupt)
{
        char err[256] = "";
        FILE *f = fopen(arc, "w");

        fputs("\x1f\x8b garbage that is not gzip at all", f);
        fclose(f);
        cr_assert_lt(archive_extract_safe(arc, out, 1 << 20, err, sizeof(err)), 0);
        cr_assert(err[0], "no message");
}
