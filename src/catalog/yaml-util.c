/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/yaml-util.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog/limits.h"
#include "catalog/yaml-compose.h"
#include "util/time-util.h"
#include "util/parse-util.h"

void catalog_error_set(struct catalog_error *e, const char *file, unsigned line, const char *fmt,
                       ...)
{
        va_list ap;

        if (!e)
                return;
        snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
        e->line = line;
        va_start(ap, fmt);
        (void)vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
}

const char *catalog_error_format(const struct catalog_error *e, char *buf, size_t n)
{
        if (e->line > 0)
                snprintf(buf, n, "%s:%u: %s", e->file, e->line, e->message);
        else if (e->file[0])
                snprintf(buf, n, "%s: %s", e->file, e->message);
        else
                snprintf(buf, n, "%s", e->message);
        return buf;
}

char **catalog_strv_free(char **v)
{
        if (!v)
                return NULL;
        for (char **i = v; *i; i++)
                free(*i);
        free(v);
        return NULL;
}

size_t catalog_strv_length(char *const *v)
{
        size_t n = 0;

        if (v)
                while (v[n])
                        n++;
        return n;
}

int catalog_strv_copy(char *const *v, char ***ret)
{
        size_t n = catalog_strv_length(v);
        CLEANUP(catalog_strv_freep) char **c = NULL;

        if (!v) {
                *ret = NULL;
                return 0;
        }
        c = calloc(n + 1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(v[i]);
                if (!c[i])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

bool catalog_strv_contains(char *const *v, const char *s)
{
        if (v)
                for (; *v; v++)
                        if (streq(*v, s))
                                return true;
        return false;
}

json_t *catalog_strv_to_json(char *const *v)
{
        json_t *a = json_array();

        for (; a && v && *v; v++)
                if (json_array_append_new(a, json_string(*v)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static int too_large(const char *file, size_t max, struct catalog_error *err)
{
        catalog_error_set(err, file, 0, "file too large (limit %zu bytes)", max);
        return -EFBIG;
}

int catalog_check_size(const char *file, size_t len, size_t max, struct catalog_error *err)
{
        return len <= max ? 0 : too_large(file, max, err);
}

int catalog_read_file_reported(const char *path, size_t max, char **ret_data, size_t *ret_len,
                               struct catalog_error *err)
{
        char msg[128];
        int r;

        r = catalog_read_file(path, max, ret_data, ret_len);
        if (r == -EFBIG)
                return too_large(path, max, err);
        if (r == -EFTYPE_CATALOG)
                catalog_error_set(err, path, 0, "cannot read: not a regular file");
        else if (r < 0)
                catalog_error_set(err, path, 0, "cannot read: %s",
                                  strerror_r(-r, msg, sizeof(msg)));
        return r;
}

/* Reads fd to its end into *data (capacity *cap, grown by doubling); -EFBIG past max. */
static int read_all(int fd, size_t max, char **data, size_t *cap, size_t *ret_len)
{
        size_t len = 0;

        for (;;) {
                ssize_t k;

                if (len + 1 >= *cap) {
                        char *p;

                        if (*cap > max + 1)
                                return -EFBIG;
                        p = realloc(*data, *cap * 2);
                        if (!p)
                                return -ENOMEM;
                        *data = p;
                        *cap *= 2;
                }
                k = read(fd, *data + len, *cap - len - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                len += (size_t)k;
                if (len > max)
                        return -EFBIG;
        }
        (*data)[len] = '\0';
        *ret_len = len;
        return 0;
}

int catalog_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len)
{
        AUTOCLOSE int fd = -EBADF;
        AUTOFREE char *data = NULL;
        struct stat st;
        size_t len = 0, cap;
        int r;

        /* non-blocking: a FIFO (or a device) in place of a file must not block the reload */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EFTYPE_CATALOG;
        if (st.st_size > 0 && (size_t)st.st_size > max)
                return -EFBIG;
        cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
        data = malloc(cap);
        if (!data)
                return -ENOMEM;
        r = read_all(fd, max, &data, &cap, &len);
        if (r < 0)
                return r;
        *ret_data = TAKE_PTR(data);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int ydoc_load(struct ydoc *d, const char *file, const char *data, size_t len,
              struct catalog_error *err)
{
        int r;

        *d = (struct ydoc){ .file = file };
        if (memchr(data, '\0', len)) {
                catalog_error_set(err, file, 0, "file contains NUL bytes");
                return -EINVAL;
        }
        r = yaml_compose(file, data, len, &d->doc, &d->text, err);
        if (r < 0)
                return r;
        d->loaded = true;
        {
                size_t n = (size_t)(d->doc.nodes.top - d->doc.nodes.start);

                d->budget = MIN(n * 4 + 1024, (size_t)CATALOG_YAML_NODES_MAX);
        }
        return 0;
}

void ydoc_release(struct ydoc *d)
{
        if (d->loaded)
                yaml_compose_release(&d->doc, &d->text);
        d->loaded = false;
}

yaml_node_t *ydoc_root(struct ydoc *d)
{
        return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

yaml_node_t *ydoc_node(struct ydoc *d, int index)
{
        return yaml_document_get_node(&d->doc, index);
}

unsigned ynode_line(const yaml_node_t *n)
{
        return n ? (unsigned)n->start_mark.line + 1 : 0;
}

const char *ynode_scalar(const yaml_node_t *n)
{
        if (!n || n->type != YAML_SCALAR_NODE)
                return NULL;
        return (const char *)n->data.scalar.value;
}

static bool ynode_is_plain(const yaml_node_t *n)
{
        return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

bool ynode_is_null(const yaml_node_t *n)
{
        const char *s = ynode_scalar(n);

        if (!s || !ynode_is_plain(n))
                return false;
        return s[0] == '\0' || streq(s, "~") || streq(s, "null") || streq(s, "Null") ||
               streq(s, "NULL");
}

int ydoc_visit(struct ydoc *d, const yaml_node_t *n, struct catalog_error *err)
{
        if (++d->visited > d->budget) {
                catalog_error_set(err, d->file, ynode_line(n),
                                  "too many YAML nodes (aliases expand past %zu)", d->budget);
                return -E2BIG;
        }
        return 0;
}

static const char *node_kind(const yaml_node_t *n)
{
        switch (n->type) {
        case YAML_SCALAR_NODE:
                return "a scalar";
        case YAML_SEQUENCE_NODE:
                return "a list";
        case YAML_MAPPING_NODE:
                return "a mapping";
        default:
                return "nothing";
        }
}

int ydoc_string(struct ydoc *d, yaml_node_t *n, char **ret, struct catalog_error *err)
{
        char *s;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (ynode_is_null(n)) {
                *ret = NULL;
                return 0;
        }
        if (n->type != YAML_SCALAR_NODE) {
                catalog_error_set(err, d->file, ynode_line(n), "expected a string, got %s",
                                  node_kind(n));
                return -EINVAL;
        }
        s = strdup(ynode_scalar(n));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int parse_yaml_bool(const char *s, bool *ret)
{
        if (streq(s, "true") || streq(s, "True") || streq(s, "TRUE")) {
                *ret = true;
                return 0;
        }
        if (streq(s, "false") || streq(s, "False") || streq(s, "FALSE")) {
                *ret = false;
                return 0;
        }
        return -EINVAL;
}

int ydoc_bool(struct ydoc *d, yaml_node_t *n, bool *ret, struct catalog_error *err)
{
        const char *s = ynode_scalar(n);
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (!s || parse_yaml_bool(s, ret) < 0) {
                catalog_error_set(err, d->file, ynode_line(n), "expected true or false, got %s%s%s",
                                  s ? "'" : "", s ? s : node_kind(n), s ? "'" : "");
                return -EINVAL;
        }
        return 0;
}

int ydoc_strv(struct ydoc *d, yaml_node_t *n, size_t max, char ***ret, struct catalog_error *err)
{
        CLEANUP(catalog_strv_freep) char **v = NULL;
        size_t count, i = 0;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (ynode_is_null(n)) {
                v = calloc(1, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                *ret = TAKE_PTR(v);
                return 0;
        }
        if (n->type != YAML_SEQUENCE_NODE) {
                catalog_error_set(err, d->file, ynode_line(n), "expected a list, got %s",
                                  node_kind(n));
                return -EINVAL;
        }
        count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
        if (count > max) {
                catalog_error_set(err, d->file, ynode_line(n), "list too long (limit %zu)", max);
                return -E2BIG;
        }
        v = calloc(count + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
                yaml_node_t *item = ydoc_node(d, *it);

                if (!item || item->type != YAML_SCALAR_NODE || ynode_is_null(item)) {
                        catalog_error_set(err, d->file, ynode_line(item ? item : n),
                                          "expected a list of strings");
                        return -EINVAL;
                }
                r = ydoc_string(d, item, &v[i], err);
                if (r < 0)
                        return r;
                i++;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

/* YAML 1.2 core schema resolution of a plain scalar. */
static json_t *plain_scalar_to_json(const char *s)
{
        bool b;
        int64_t i;
        char *end;
        double f;

        if (s[0] == '\0' || streq(s, "~") || streq(s, "null") || streq(s, "Null") ||
            streq(s, "NULL"))
                return json_null();
        if (parse_yaml_bool(s, &b) == 0)
                return json_boolean(b);
        if (safe_atoi64(s, &i) == 0)
                return json_integer(i);
        if (strpbrk(s, "0123456789") && strspn(s, "0123456789+-.eE") == strlen(s)) {
                errno = 0;
                f = strtod(s, &end);
                if (errno == 0 && *end == '\0' && isfinite(f))
                        return json_real(f);
        }
        return json_string(s);
}

static int to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t **ret,
                   struct catalog_error *err);

static int sequence_to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t *v,
                            struct catalog_error *err)
{
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
                json_t *item = NULL;
                int r = to_json(d, ydoc_node(d, *it), depth + 1, &item, err);

                if (r < 0)
                        return r;
                if (json_array_append_new(v, item) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int mapping_to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t *v,
                           struct catalog_error *err)
{
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = ydoc_node(d, p->key);
                const char *key = ynode_scalar(k);
                json_t *item = NULL;
                int r;

                if (!key) {
                        catalog_error_set(err, d->file, ynode_line(k),
                                          "mapping keys must be scalars");
                        return -EINVAL;
                }
                if (json_object_get(v, key)) {
                        catalog_error_set(err, d->file, ynode_line(k), "duplicate key '%s'", key);
                        return -EINVAL;
                }
                r = to_json(d, ydoc_node(d, p->value), depth + 1, &item, err);
                if (r < 0)
                        return r;
                if (json_object_set_new(v, key, item) < 0) {
                        catalog_error_set(err, d->file, ynode_line(k), "invalid key '%s'", key);
                        return -EINVAL;
                }
        }
        return 0;
}

static int to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t **ret,
                   struct catalog_error *err)
{
        json_auto_t *v = NULL;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (depth > CATALOG_YAML_DEPTH_MAX) {
                catalog_error_set(err, d->file, ynode_line(n), "value nested too deeply");
                return -E2BIG;
        }
        switch (n->type) {
        case YAML_SCALAR_NODE:
                v = ynode_is_plain(n) ? plain_scalar_to_json(ynode_scalar(n))
                                      : json_string(ynode_scalar(n));
                if (!v) {
                        catalog_error_set(err, d->file, ynode_line(n), "string is not UTF-8");
                        return -EINVAL;
                }
                break;
        case YAML_SEQUENCE_NODE:
        case YAML_MAPPING_NODE:
                v = n->type == YAML_SEQUENCE_NODE ? json_array() : json_object();
                if (!v)
                        return -ENOMEM;
                r = n->type == YAML_SEQUENCE_NODE ? sequence_to_json(d, n, depth, v, err)
                                                  : mapping_to_json(d, n, depth, v, err);
                if (r < 0)
                        return r;
                break;
        default:
                catalog_error_set(err, d->file, ynode_line(n), "unexpected YAML node");
                return -EINVAL;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

int ydoc_to_json(struct ydoc *d, yaml_node_t *n, json_t **ret, struct catalog_error *err)
{
        return to_json(d, n, 0, ret, err);
}

int ydoc_dispatch(struct ydoc *d, yaml_node_t *n, const struct yfield *table, void *base,
                  struct catalog_error *err)
{
        size_t n_fields = 0;
        uint64_t seen_small = 0;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (ynode_is_null(n))
                return 0;
        if (n->type != YAML_MAPPING_NODE) {
                catalog_error_set(err, d->file, ynode_line(n), "expected a mapping, got %s",
                                  node_kind(n));
                return -EINVAL;
        }
        while (table[n_fields].key)
                n_fields++;
        if (n_fields > 64)
                return -EINVAL; /* programming error: tables are small */

        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = ydoc_node(d, p->key);
                const char *key = ynode_scalar(k);
                size_t i;

                if (!key) {
                        catalog_error_set(err, d->file, ynode_line(k),
                                          "mapping keys must be scalars");
                        return -EINVAL;
                }
                for (i = 0; i < n_fields; i++)
                        if (streq(table[i].key, key))
                                break;
                if (i == n_fields) {
                        catalog_error_set(err, d->file, ynode_line(k), "unknown key '%s'", key);
                        return -EINVAL;
                }
                if (seen_small & (UINT64_C(1) << i)) {
                        catalog_error_set(err, d->file, ynode_line(k), "duplicate key '%s'", key);
                        return -EINVAL;
                }
                seen_small |= UINT64_C(1) << i;
                if (!table[i].fn)
                        continue; /* accepted and ignored */
                r = table[i].fn(d, ydoc_node(d, p->value), (char *)base + table[i].offset, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ydoc_field_string(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err)
{
        char **p = ret;
        char *s = NULL;
        int r;

        r = ydoc_string(d, n, &s, err);
        if (r < 0)
                return r;
        free(*p);
        *p = s;
        return 0;
}

int ydoc_field_strv(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err)
{
        char ***p = ret;
        char **v = NULL;
        int r;

        r = ydoc_strv(d, n, CATALOG_PATTERNS_MAX, &v, err);
        if (r < 0)
                return r;
        catalog_strv_free(*p);
        *p = v;
        return 0;
}

int ydoc_field_json(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err)
{
        json_t **p = ret;
        json_t *v = NULL;
        int r;

        r = ydoc_to_json(d, n, &v, err);
        if (r < 0)
                return r;
        json_decref(*p);
        *p = v;
        return 0;
}

int ydoc_field_tristate(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err)
{
        int *p = ret;
        bool b;
        int r;

        r = ydoc_bool(d, n, &b, err);
        if (r < 0)
                return r;
        *p = b;
        return 0;
}
