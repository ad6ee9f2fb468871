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
 *
 * jansson's parser is the one exception. jansson 2.14 (Debian 2.14-2) ignores a failed allocation
 * while its lexer saves a token's text (lex_save() drops strbuffer_append_byte()'s -1, upstream
 * issue akheron/jansson#362): the byte goes missing, so json_loads() either returns a string with
 * a character missing or, when the missing byte is a string's closing quote, copies past its
 * buffer until it finds a quote in memory (a SEGV in lex_scan_string). That is a bug of the
 * library, not of its callers, and no caller can handle it. So the binaries are also linked with
 * -Wl,--wrap for json_loads, json_loadb and json_load_file: the wrapper counts as one allocation
 * (failing it returns NULL with jansson's "out of memory" error, json_error_out_of_memory, as if
 * the parser's first allocation had failed), and the allocations jansson makes inside the call
 * are neither counted nor failed. Our callers' handling of a failed parse is still exercised, once
 * per call; jansson's value constructors are still failed everywhere else. The other loaders
 * (json_loadf, json_loadfd, json_load_callback) are not wrapped: nothing here calls them; a new
 * caller adds its loader to the -Wl,--wrap list in meson.build and a wrapper here.
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

#include "alloc-fault.h"

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
json_t *__real_json_loads(const char *input, size_t flags, json_error_t *error);
json_t *__real_json_loadb(const char *buffer, size_t len, size_t flags, json_error_t *error);
json_t *__real_json_load_file(const char *path, size_t flags, json_error_t *error);
json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error);
json_t *__wrap_json_loadb(const char *buffer, size_t len, size_t flags, json_error_t *error);
json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error);

static unsigned long fail_at; /* set before main() (or by alloc_fault_set()), then read-only */
static const char *fault_log; /* MODELPLANE_ALLOC_FAULT_LOG, or NULL */
static atomic_ulong calls;
static _Thread_local unsigned in_parser; /* inside one of jansson's loaders on this thread */

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
        return in_parser ? __real_malloc(n) : __wrap_malloc(n);
}

/* The loader's one allocation point: false (and error set as jansson sets it for a failed
 * allocation) if it fails, else true and the loader's own allocations are exempt until
 * parse_end(). */
static bool parse_begin(json_error_t *error, const char *source)
{
        if (!inject()) {
                in_parser++;
                return true;
        }
        if (error) {
                *error = (json_error_t){ .line = -1, .column = -1 };
                (void)snprintf(error->source, sizeof(error->source), "%s", source);
                (void)snprintf(error->text, sizeof(error->text), "out of memory");
                error->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
        }
        return false;
}

static json_t *parse_end(json_t *v)
{
        in_parser--;
        return v;
}

json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error)
{
        if (!parse_begin(error, "<string>"))
                return NULL;
        return parse_end(__real_json_loads(input, flags, error));
}

json_t *__wrap_json_loadb(const char *buffer, size_t len, size_t flags, json_error_t *error)
{
        if (!parse_begin(error, "<buffer>"))
                return NULL;
        return parse_end(__real_json_loadb(buffer, len, flags, error));
}

json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error)
{
        if (!parse_begin(error, path))
                return NULL;
        return parse_end(__real_json_load_file(path, flags, error));
}

void alloc_fault_set(unsigned long n)
{
        fail_at = n;
        atomic_store(&calls, 0);
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
