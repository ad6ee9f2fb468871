/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/memory.h"

/* Informer threads trim after each LIST while the manager trims on its tick: concurrent trims
 * with allocations in flight must be safe in every build (under ASan, glibc's malloc_trim()
 * walked uninitialised arenas and crashed in mtrim()). */
static void *churn(void *arg)
{
        (void)arg;
        for (int i = 0; i < 200; i++) {
                char *p = malloc(64 * 1024);

                cr_assert_not_null(p);
                memset(p, i, 64 * 1024);
                memory_trim();
                free(p);
        }
        return NULL;
}

Test(memory, concurrent_trims_with_allocations)
{
        pthread_t t[8];

        memory_limit_arenas(2);
        for (size_t i = 0; i < 8; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, churn, NULL), 0);
        for (size_t i = 0; i < 8; i++)
                cr_assert_eq(pthread_join(t[i], NULL), 0);
}

Test(memory, allocator_matches_build)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        cr_assert(!memory_glibc_allocator());
#else
        cr_assert(memory_glibc_allocator());
#endif
}

/* Rss and Anonymous (KiB) of the mapping that starts at @p, from /proc/self/smaps. */
static void mapping_kib(const void *p, unsigned long *rss, unsigned long *anon)
{
        FILE *f = fopen("/proc/self/smaps", "re");
        char line[512], want[32];
        bool in = false;

        cr_assert_not_null(f);
        (void)snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)p);
        *rss = *anon = (unsigned long)-1;
        while (fgets(line, sizeof(line), f)) {
                if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
                        in = strncmp(line, want, strlen(want)) == 0;
                else if (in && strncmp(line, "Rss:", 4) == 0)
                        *rss = strtoul(line + 4, NULL, 10);
                else if (in && strncmp(line, "Anonymous:", 10) == 0)
                        *anon = strtoul(line + 10, NULL, 10);
        }
        fclose(f);
}

/* A 256 KiB file of a known pattern, mapped private read-only (and a writable private copy). */
static int pattern_file(void)
{
        char path[] = "/tmp/mp-test-memory-XXXXXX";
        int fd = mkstemp(path);
        static char buf[256 * 1024];

        cr_assert_geq(fd, 0);
        (void)unlink(path);
        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (char)(i * 7);
        cr_assert_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
        return fd;
}

static bool pattern_ok(const char *p, size_t from, size_t len)
{
        for (size_t i = from; i < len; i++)
                if (p[i] != (char)(i * 7))
                        return false;
        return true;
}

/* Valgrind runs the program on its own copy of the address space, so what madvise() does to RSS
 * is not visible there; the data checks still run. Memcheck preloads its vgpreload libraries. */
static bool under_valgrind(void)
{
        const char *p = getenv("LD_PRELOAD");

        return p && strstr(p, "vgpreload");
}

/* In a child (one thread for sure): the clean read-only mapping leaves RSS and still reads the
 * file; a private mapping with written (copied) pages keeps them. */
static int release_child(void)
{
        const size_t len = 256 * 1024;
        int fd = pattern_file();
        char *ro = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        char *rw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        unsigned long rss, anon;
        volatile char sink = 0;

        if (ro == MAP_FAILED || rw == MAP_FAILED)
                return 10;
        for (size_t i = 0; i < len; i += 4096)
                sink ^= ro[i];
        rw[0] = 'X'; /* one copied page */
        (void)mprotect(rw, len, PROT_READ);
        mapping_kib(ro, &rss, &anon);
        if (rss < 200)
                return 11; /* not resident to begin with: nothing to show */
        if (memory_release_startup_pages() == 0)
                return 12;
        mapping_kib(ro, &rss, &anon);
        if (rss != 0 && !under_valgrind())
                return 13;
        if (!pattern_ok(ro, 0, len))
                return 14; /* faulted back from the file */
        if (rw[0] != 'X' || !pattern_ok(rw, 1, len))
                return 15; /* the copied page was dropped */
        (void)sink;
        return 0;
}

Test(memory, release_startup_pages_drops_clean_file_pages_only)
{
        pid_t pid = fork();
        int st;

        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(release_child());
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st));
        cr_assert_eq(WEXITSTATUS(st), 0, "child step %d failed", WEXITSTATUS(st));
}

static void *sleeper(void *arg)
{
        (void)arg;
        pause();
        return NULL;
}

Test(memory, release_startup_pages_skipped_with_threads)
{
        pthread_t t;

        cr_assert_eq(pthread_create(&t, NULL, sleeper, NULL), 0);
        cr_assert_eq(memory_release_startup_pages(), 0);
}
