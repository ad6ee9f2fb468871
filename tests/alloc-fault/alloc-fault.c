/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocation fault injection for the unit test binaries of a -Dalloc_fault=true build (house
 * style 5.14, curl's torture idea). The binaries are linked with -Wl,--wrap for malloc, calloc,
 * realloc, reallocarray, strdup and strndup, so every allocation our code makes (the project's
 * static libraries and the tests) comes here, and jansson's too (json_set_alloc_funcs). Libraries
 * that allocate on their own (libcurl, libc's asprintf) are not counted.
 *
 * MODELPLANE_ALLOC_FAIL_AT=N makes the Nth counted allocation of each process fail (NULL,
 * errno ENOMEM), once; unset or 0 fails none. Criterion forks a process per test, so each test
 * counts from its own start. Each injected failure appends one line ("alloc-fault: failing
 * allocation N") to the file MODELPLANE_ALLOC_FAULT_LOG names (Criterion does not pass a test's
 * stderr through), which tells the torture runner that some test reached N.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t n, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t n, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static unsigned long fail_at; /* set once before main(), read-only afterwards */
static const char *fault_log; /* MODELPLANE_ALLOC_FAULT_LOG, or NULL */
static atomic_ulong calls;

static bool inject(void)
{
        unsigned long n;
        char line[64];
        int len;

        if (fail_at == 0)
                return false;
        n = atomic_fetch_add(&calls, 1) + 1;
        if (n != fail_at)
                return false;
        len = snprintf(line, sizeof(line), "alloc-fault: failing allocation %lu\n", n);
        if (len > 0 && fault_log) {
                int fd = open(fault_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

                if (fd >= 0) {
                        (void)!write(fd, line, (size_t)len);
                        (void)close(fd);
                }
        }
        errno = ENOMEM;
        return true;
}

void *__wrap_malloc(size_t n)
{
        return inject() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
        return inject() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
        return inject() ? NULL : __real_realloc(p, n);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
        return inject() ? NULL : __real_reallocarray(p, n, size);
}

char *__wrap_strdup(const char *s)
{
        return inject() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
        return inject() ? NULL : __real_strndup(s, n);
}

static void *json_malloc(size_t n)
{
        return __wrap_malloc(n);
}

static void json_free(void *p)
{
        free(p);
}

__attribute__((constructor)) static void alloc_fault_init(void)
{
        const char *v = getenv("MODELPLANE_ALLOC_FAIL_AT");
        char *end = NULL;

        if (v && *v) {
                errno = 0;
                fail_at = strtoul(v, &end, 10);
                if (errno != 0 || !end || *end != '\0')
                        fail_at = 0;
        }
        fault_log = getenv("MODELPLANE_ALLOC_FAULT_LOG");
        json_set_alloc_funcs(json_malloc, json_free);
}
