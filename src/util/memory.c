/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/macro.h"
#include "util/memory.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FOREIGN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
        __has_feature(memory_sanitizer)
#define FOREIGN_ALLOCATOR 1
#endif
#endif

bool memory_glibc_allocator(void)
{
#ifdef FOREIGN_ALLOCATOR
        return false;
#else
        return true;
#endif
}

void memory_trim(void)
{
        if (memory_glibc_allocator())
                (void)malloc_trim(0);
}

void memory_limit_arenas(int n)
{
        if (memory_glibc_allocator() && n > 0)
                (void)mallopt(M_ARENA_MAX, n); /* NOLINT(concurrency-mt-unsafe): start-up */
}

DEFINE_CLEANUP_FUNC(FILE *, fclose)

static bool single_threaded(void)
{
        CLEANUP(fclosep) FILE *f = fopen("/proc/self/status", "re");
        char line[256];

        if (!f)
                return false;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "Threads:", 8) == 0)
                        return strtoul(line + 8, NULL, 10) == 1;
        return false;
}

/* One mapping of /proc/self/smaps, as far as read. */
struct smaps_entry {
        uintptr_t start, end;
        bool candidate; /* read-only, file-backed */
        unsigned long rss_kib, anon_kib;
        bool have_anon;
};

static unsigned long release(const struct smaps_entry *e)
{
        if (!e->candidate || !e->have_anon || e->anon_kib != 0 || e->rss_kib == 0)
                return 0;
        if (madvise((void *)e->start, e->end - e->start, MADV_DONTNEED) < 0)
                return 0;
        return e->rss_kib;
}

/*
 * The head line of an smaps entry, "start-end perms offset dev inode [path]": returns how many
 * of start, end, perms and path it found, in that order (perms and path truncated to 7 bytes).
 */
static int smaps_head(const char *line, uintptr_t *ret_start, uintptr_t *ret_end, char perms[8],
                      char path[8])
{
        const char *p = line;
        char *end;
        int n;

        errno = 0;
        *ret_start = (uintptr_t)strtoull(p, &end, 16);
        if (end == p || errno != 0)
                return 0;
        if (*end != '-')
                return 1;
        p = end + 1;
        *ret_end = (uintptr_t)strtoull(p, &end, 16);
        if (end == p || errno != 0)
                return 1;
        n = sscanf(end, " %7s %*s %*s %*s %7s", perms, path);
        return 2 + MAX(n, 0);
}

unsigned long memory_release_startup_pages(void)
{
        CLEANUP(fclosep) FILE *f = NULL;
        struct smaps_entry e = { 0 };
        unsigned long released = 0;
        char line[512];

        if (!single_threaded())
                return 0;
        f = fopen("/proc/self/smaps", "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f)) {
                uintptr_t a, b;
                char perms[8], path[8];
                int n;

                path[0] = '\0';
                n = smaps_head(line, &a, &b, perms, path);
                if (n >= 3 && strchr(line, '-') < strchr(line, ' ')) {
                        released += release(&e);
                        e = (struct smaps_entry){
                                .start = a,
                                .end = b,
                                .candidate = n == 4 && path[0] == '/' && perms[0] == 'r' &&
                                             perms[1] != 'w' && perms[3] == 'p',
                        };
                } else if (strncmp(line, "Rss:", 4) == 0) {
                        e.rss_kib = strtoul(line + 4, NULL, 10);
                } else if (strncmp(line, "Anonymous:", 10) == 0) {
                        e.anon_kib = strtoul(line + 10, NULL, 10);
                        e.have_anon = true;
                }
        }
        released += release(&e);
        return released;
}
