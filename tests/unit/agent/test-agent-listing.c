/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The model directory's listing (src/agent/disk.h) on a real directory: whole once, then kept
 * from inotify one entry at a time, as the agent's downloads, swaps and removals change it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/disk.h"

static char dir[] = "/tmp/mp-disk-XXXXXX";
static struct disk_list *l;

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
        (void)st;
        (void)f;
        return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static void setup(void)
{
        cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
        l = disk_list_free(l);
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(agent_listing, .init = setup, .fini = teardown);

/* A model directory @name with a record naming @uri (NULL: no record). */
static void make_model(const char *name, const char *uri)
{
        char path[512];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
        cr_assert_eq(mkdir(path, 0755), 0, "%s: errno %d", path, errno);
        if (!uri)
                return;
        (void)snprintf(path, sizeof(path), "%s/%s/" DISK_SOURCE_RECORD, dir, name);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        (void)fprintf(f, "%s\n", uri);
        cr_assert_eq(fclose(f), 0);
}

static void path_of(char *buf, size_t len, const char *name)
{
        (void)snprintf(buf, len, "%s/%s", dir, name);
}

/* The listing as "name=uri,name=-" (static). */
static const char *listing(void)
{
        static char out[4096];
        const struct disk_model *items;
        size_t n, off = 0;

        cr_assert_eq(disk_list_view(l, &items, &n), 0);
        out[0] = 0;
        for (size_t i = 0; i < n; i++)
                off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s=%s", i ? "," : "",
                                        items[i].name,
                                        items[i].source_uri ? items[i].source_uri : "-");
        return out;
}

Test(agent_listing, listed_whole_once_then_kept_from_events)
{
        char a[512], b[512];

        make_model("m1", "s3://b/m1");
        make_model(DISK_TMP_PREFIX "m9-abc", "s3://b/m9"); /* a crash's leftover */
        make_model(".hidden", "s3://b/h");                 /* an unsafe name: never listed */
        cr_assert_eq(disk_list_new(dir, true, &l), 0);
        cr_assert(disk_list_watched(l), "inotify is there on Linux");
        cr_assert_str_eq(listing(), "m1=s3://b/m1");
        cr_assert_eq(disk_list_scans(l), 1);
        path_of(a, sizeof(a), DISK_TMP_PREFIX "m9-abc");
        cr_assert_eq(access(a, F_OK), -1, "the leftover was removed");

        /* a download: a temporary directory renamed into place */
        make_model(DISK_TMP_PREFIX "m2-xyz", "s3://b/m2");
        cr_assert_str_eq(listing(), "m1=s3://b/m1", "a temporary directory is not a model");
        path_of(a, sizeof(a), DISK_TMP_PREFIX "m2-xyz");
        path_of(b, sizeof(b), "m2");
        cr_assert_eq(rename(a, b), 0);
        cr_assert_str_eq(listing(), "m1=s3://b/m1,m2=s3://b/m2");

        /* a change: the new copy exchanged with the old one, which is then removed */
        make_model(DISK_TMP_PREFIX "m1-new", "s3://b/m1-v2");
        path_of(a, sizeof(a), DISK_TMP_PREFIX "m1-new");
        path_of(b, sizeof(b), "m1");
        cr_assert_eq(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE), 0);
        (void)nftw(a, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        cr_assert_str_eq(listing(), "m1=s3://b/m1-v2,m2=s3://b/m2");

        /* a removal, a directory without a record, a plain file */
        path_of(a, sizeof(a), "m2");
        (void)nftw(a, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        make_model("m0", NULL);
        path_of(a, sizeof(a), "file");
        cr_assert_eq(close(open(a, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        cr_assert_str_eq(listing(), "m0=-,m1=s3://b/m1-v2");
        cr_assert_eq(disk_list_scans(l), 1, "every change above was applied one entry at a time");
}

/* The directory replaced under the watch: listed whole again, and watched again. */
Test(agent_listing, a_replaced_directory_is_listed_whole_again)
{
        char moved[600];

        make_model("m1", "s3://b/m1");
        cr_assert_eq(disk_list_new(dir, true, &l), 0);
        cr_assert_str_eq(listing(), "m1=s3://b/m1");
        (void)snprintf(moved, sizeof(moved), "%s-old", dir);
        cr_assert_eq(rename(dir, moved), 0);
        cr_assert_eq(mkdir(dir, 0755), 0);
        make_model("m2", "s3://b/m2");
        cr_assert_str_eq(listing(), "m2=s3://b/m2");
        cr_assert_eq(disk_list_scans(l), 2);
        make_model("m3", "s3://b/m3");
        cr_assert_str_eq(listing(), "m2=s3://b/m2,m3=s3://b/m3");
        cr_assert_eq(disk_list_scans(l), 2, "the new directory is watched");
        (void)nftw(moved, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

Test(agent_listing, a_missing_directory_is_an_error_then_listed_when_back)
{
        const struct disk_model *items;
        size_t n;

        cr_assert_eq(disk_list_new(dir, true, &l), 0);
        cr_assert_eq(rmdir(dir), 0);
        cr_assert_eq(disk_list_view(l, &items, &n), -ENOENT);
        cr_assert_eq(mkdir(dir, 0755), 0);
        make_model("m1", "s3://b/m1");
        cr_assert_str_eq(listing(), "m1=s3://b/m1");
}

/* Without inotify the directory's stat decides: every change above is still seen, each by a
 * whole listing (a change within DISK_RACY_USEC of the last listing lists it whole again). */
Test(agent_listing, without_inotify_the_stat_decides)
{
        char a[512], b[512];

        make_model("m1", "s3://b/m1");
        cr_assert_eq(disk_list_new(dir, false, &l), 0);
        cr_assert_not(disk_list_watched(l));
        cr_assert_str_eq(listing(), "m1=s3://b/m1");
        make_model(DISK_TMP_PREFIX "m2-xyz", "s3://b/m2");
        path_of(a, sizeof(a), DISK_TMP_PREFIX "m2-xyz");
        path_of(b, sizeof(b), "m2");
        cr_assert_eq(rename(a, b), 0);
        cr_assert_str_eq(listing(), "m1=s3://b/m1,m2=s3://b/m2");
        path_of(a, sizeof(a), "m1");
        (void)nftw(a, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        cr_assert_str_eq(listing(), "m2=s3://b/m2");
        cr_assert_geq(disk_list_scans(l), 3);
}

static void write_file(const char *rel, const char *text)
{
        char path[600];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "we");
        cr_assert_not_null(f, "%s", path);
        (void)fputs(text, f);
        cr_assert_eq(fclose(f), 0);
}

/* A copy written by this agent records what it holds; the first listing after a restart checks
 * it, so a copy a crash cut short (a power loss before the file system wrote its data) is
 * downloaded again instead of loaded. A record of an older modelplane (one line) is taken as it
 * is. */
Test(agent_listing, the_first_listing_checks_each_copy_against_its_record)
{
        char path[512];

        make_model("whole", NULL);
        make_model("cut", NULL);
        make_model("old", "s3://b/old");
        write_file("whole/model.bin", "0123456789");
        write_file("cut/model.bin", "0123456789");
        path_of(path, sizeof(path), "cut/sub");
        cr_assert_eq(mkdir(path, 0755), 0);
        write_file("cut/sub/settings.json", "{}");
        path_of(path, sizeof(path), "whole");
        cr_assert_eq(disk_write_record(path, "s3://b/whole"), 0);
        path_of(path, sizeof(path), "cut");
        cr_assert_eq(disk_write_record(path, "s3://b/cut"), 0);
        write_file("cut/model.bin", "01234"); /* what a crash left of it */

        cr_assert_eq(disk_list_new(dir, true, &l), 0);
        cr_assert_str_eq(listing(), "cut=-,old=s3://b/old,whole=s3://b/whole");
}

Test(agent_listing, the_record_names_the_uri_then_what_the_copy_holds)
{
        char path[512], text[256] = "";
        FILE *f;

        make_model("m", NULL);
        write_file("m/a", "12345");
        write_file("m/b", "");
        path_of(path, sizeof(path), "m");
        cr_assert_eq(disk_write_record(path, "gs://b/m"), 0);
        path_of(path, sizeof(path), "m/" DISK_SOURCE_RECORD);
        f = fopen(path, "re");
        cr_assert_not_null(f);
        (void)!fread(text, 1, sizeof(text) - 1, f);
        (void)fclose(f);
        cr_assert_str_eq(text, "gs://b/m\nsize 5 files 2\n");
}
