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
#include "util/time-util.h"
#include "util/parse-util.h"

const struct yaml_limits catalog_yaml_limits = {
        .size_max = (size_t)CATALOG_FILE_MAX,
        .depth_max = CATALOG_YAML_DEPTH_MAX,
        .nodes_max = (size_t)CATALOG_YAML_NODES_MAX,
        .cpu_usec_max = CATALOG_PARSE_USEC_MAX,
};

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

int catalog_read_file_reported(const char *path, size_t max, char **ret_data, size_t *ret_len,
                               struct error_detail *err)
{
        char msg[128];
        int r;

        r = catalog_read_file(path, max, ret_data, ret_len);
        if (r == -EFBIG)
                /* the words of json/yaml-doc's size limit */
                return error_detail_set_at(err, r, path, 0, "file too large (limit %zu bytes)",
                                           max);
        if (r == -EFTYPE_CATALOG)
                return error_detail_set_at(err, r, path, 0, "cannot read: not a regular file");
        if (r < 0)
                return error_detail_set_at(err, r, path, 0, "cannot read: %s",
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

int catalog_yaml_strv(struct ydoc *d, yaml_node_t *n, size_t max, char ***ret,
                      struct error_detail *err)
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
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n), "expected a list, got %s",
                                    ynode_kind(n));
                return -EINVAL;
        }
        count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
        if (count > max) {
                error_detail_set_at(err, -E2BIG, d->file, ynode_line(n),
                                    "list too long (limit %zu)", max);
                return -E2BIG;
        }
        v = calloc(count + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
                yaml_node_t *item = ydoc_node(d, *it);

                if (!item || item->type != YAML_SCALAR_NODE || ynode_is_null(item)) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(item ? item : n),
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

int catalog_field_strv(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err)
{
        char ***p = ret;
        char **v = NULL;
        int r;

        r = catalog_yaml_strv(d, n, CATALOG_PATTERNS_MAX, &v, err);
        if (r < 0)
                return r;
        catalog_strv_free(*p);
        *p = v;
        return 0;
}
