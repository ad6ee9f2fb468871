/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/batch.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

#define ROWS_MAX ((size_t)1 << 24)

static bool ends_with(const char *s, const char *suffix)
{
        size_t a = strlen(s), b = strlen(suffix);

        return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

enum batch_kind batch_kind_of_path(const char *path)
{
        const char *m = strstr(path, "/models/");

        if (!m || strchr(path, '?'))
                return BATCH_KIND__INVALID;
        if (ends_with(path, ":predict") && !strchr(m + 8, '/'))
                return BATCH_V1;
        if (ends_with(path, "/infer") && m[8] != '/')
                return BATCH_V2;
        return BATCH_KIND__INVALID;
}

void batch_req_release(struct batch_req *r)
{
        json_decref(r->body);
        free(r->key);
        free(r->req_id);
        *r = (struct batch_req){ 0 };
}

/* The product of shape[from..], or 0 with -EBADMSG for a non-integer or negative dimension. */
static int shape_elems(json_t *shape, size_t from, size_t *ret)
{
        size_t p = 1, i;
        json_t *d;

        json_array_foreach(shape, i, d) {
                json_int_t v;

                if (!json_is_integer(d) || (v = json_integer_value(d)) < 0 ||
                    v > (json_int_t)ROWS_MAX)
                        return -EBADMSG;
                if (i < from)
                        continue;
                if (v != 0 && p > ROWS_MAX / (size_t)v)
                        return -EBADMSG;
                p *= (size_t)v;
        }
        *ret = p;
        return 0;
}

/* One V2 input: checks shape against data and adds its skeleton (all but shape[0] and data) to
 * @key; sets *rows. */
static int v2_input(json_t *in, json_t *key, size_t *rows)
{
        json_t *shape = json_object_get(in, "shape"), *data = json_object_get(in, "data");
        json_t *sk, *dims;
        size_t per_row = 0, n;
        int r;

        if (!json_is_object(in) || !json_is_string(json_object_get(in, "name")))
                return -EBADMSG;
        if (!json_is_array(shape) || json_array_size(shape) == 0 || !json_is_array(data))
                return -EBADMSG;
        r = shape_elems(shape, 1, &per_row);
        if (r < 0)
                return r;
        n = (size_t)json_integer_value(json_array_get(shape, 0));
        if (n == 0)
                return -EBADMSG;
        for (size_t i = 0; i < json_array_size(data); i++)
                if (json_is_array(json_array_get(data, i)) ||
                    json_is_object(json_array_get(data, i)))
                        return -EMEDIUMTYPE; /* nested data: not cut here */
        if (per_row > ROWS_MAX / n || json_array_size(data) != n * per_row)
                return -EBADMSG;
        if (*rows && *rows != n)
                return -EMEDIUMTYPE; /* inputs with different first dimensions */
        *rows = n;
        sk = json_deep_copy(in);
        if (!sk)
                return -ENOMEM;
        (void)json_object_del(sk, "data");
        dims = json_object_get(sk, "shape");
        if (json_array_remove(dims, 0) < 0 || json_array_append_new(key, sk) < 0)
                return -ENOMEM;
        return 0;
}

static int parse_v2(json_t *b, struct batch_req *ret)
{
        json_t *inputs = json_object_get(b, "inputs"), *key, *in, *id = json_object_get(b, "id");
        const char *k;
        json_t *v;
        size_t i;
        int r = 0;

        if (!json_is_array(inputs) || json_array_size(inputs) == 0)
                return -EBADMSG;
        json_object_foreach(b, k, v)
                if (!streq(k, "inputs") && !streq(k, "id") && !streq(k, "parameters"))
                        return -EMEDIUMTYPE;
        if (id && !json_is_string(id))
                return -EBADMSG;
        /* the binary tensor extension answers in bytes, which are not cut here */
        if (json_object_get(json_object_get(b, "parameters"), "binary_data_output"))
                return -EMEDIUMTYPE;
        key = json_pack("{s:O*,s:[]}", "parameters", json_object_get(b, "parameters"), "inputs");
        if (!key)
                return -ENOMEM;
        json_array_foreach(inputs, i, in) {
                r = v2_input(in, json_object_get(key, "inputs"), &ret->rows);
                if (r < 0)
                        break;
        }
        if (r >= 0) {
                ret->key = json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS);
                ret->req_id = id ? strdup(json_string_value(id)) : NULL;
                if (!ret->key || (id && !ret->req_id))
                        r = -ENOMEM;
        }
        json_decref(key);
        return r;
}

int batch_req_parse(enum batch_kind kind, const char *body, size_t len, struct batch_req *ret)
{
        struct batch_req q = { .kind = kind };
        json_t *inst;
        int r;

        q.body = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(q.body)) {
                batch_req_release(&q);
                return -EBADMSG;
        }
        if (kind == BATCH_V1) {
                inst = json_object_get(q.body, "instances");
                r = json_is_array(inst) && json_array_size(inst) > 0 ? 0 : -EBADMSG;
                q.rows = r == 0 ? json_array_size(inst) : 0;
                if (r == 0 && !(q.key = strdup("v1")))
                        r = -ENOMEM;
        } else if (kind == BATCH_V2) {
                r = parse_v2(q.body, &q);
        } else {
                r = -EINVAL;
        }
        if (r < 0) {
                batch_req_release(&q);
                return r;
        }
        *ret = q;
        return 0;
}

/* V2: each input's data concatenated, shape[0] summed; the first request's skeleton. */
static json_t *merge_v2(const struct batch_req *reqs, size_t n)
{
        json_t *out = json_deep_copy(reqs[0].body), *inputs, *in;
        size_t i, total = 0;

        if (!out)
                return NULL;
        (void)json_object_del(out, "id");
        inputs = json_object_get(out, "inputs");
        for (size_t q = 0; q < n; q++)
                total += reqs[q].rows;
        json_array_foreach(inputs, i, in) {
                json_t *data = json_object_get(in, "data");

                for (size_t q = 1; q < n; q++) {
                        json_t *other = json_array_get(json_object_get(reqs[q].body, "inputs"), i);
                        if (json_array_extend(data, json_object_get(other, "data")) < 0)
                                goto oom;
                }
                if (json_array_set_new(json_object_get(in, "shape"), 0,
                                       json_integer((json_int_t)total)) < 0)
                        goto oom;
        }
        return out;
oom:
        json_decref(out);
        return NULL;
}

char *batch_merge(const struct batch_req *reqs, size_t n)
{
        json_t *out = NULL;
        char *s;

        if (n == 0)
                return NULL;
        if (reqs[0].kind == BATCH_V1) {
                json_t *all = json_array();

                for (size_t q = 0; q < n && all; q++)
                        if (json_array_extend(all, json_object_get(reqs[q].body, "instances")) < 0)
                                json_decref(all), all = NULL;
                out = all ? json_pack("{s:o}", "instances", all) : NULL;
        } else {
                out = merge_v2(reqs, n);
        }
        s = out ? json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(out);
        return s;
}

static void free_all(char **ret, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(ret[i]);
                ret[i] = NULL;
        }
}

static int split_v1(const struct batch_req *reqs, size_t n, json_t *resp, const char *batch_id,
                    char **ret, char *err, size_t err_size)
{
        json_t *pred = json_object_get(resp, "predictions");
        size_t total = 0, at = 0;

        for (size_t q = 0; q < n; q++)
                total += reqs[q].rows;
        if (!json_is_array(pred) || json_array_size(pred) != total) {
                (void)snprintf(err, err_size,
                               "size of prediction is not equal to the size of instances");
                return -EBADMSG;
        }
        for (size_t q = 0; q < n; q++) {
                json_t *mine = json_array(), *o;

                for (size_t k = 0; k < reqs[q].rows && mine; k++)
                        if (json_array_append(mine, json_array_get(pred, at + k)) < 0)
                                json_decref(mine), mine = NULL;
                at += reqs[q].rows;
                o = mine ? json_pack("{s:s,s:s,s:o}", "message", "", "batchId", batch_id,
                                     "predictions", mine)
                         : NULL;
                ret[q] = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                json_decref(o);
                if (!ret[q])
                        return -ENOMEM;
        }
        return 0;
}

/* Checks every output of a V2 answer: flat data, shape[0] == @total, data matching shape. */
static int check_v2_outputs(json_t *outputs, size_t total, char *err, size_t err_size)
{
        json_t *o;
        size_t i;

        if (!json_is_array(outputs)) {
                (void)snprintf(err, err_size, "the model server's answer has no outputs");
                return -EBADMSG;
        }
        json_array_foreach(outputs, i, o) {
                json_t *shape = json_object_get(o, "shape"), *data = json_object_get(o, "data");
                size_t per_row = 0;

                if (!json_is_array(shape) || json_array_size(shape) == 0 || !json_is_array(data) ||
                    shape_elems(shape, 1, &per_row) < 0 ||
                    json_integer_value(json_array_get(shape, 0)) != (json_int_t)total ||
                    per_row > ROWS_MAX || json_array_size(data) != total * per_row) {
                        (void)snprintf(err, err_size,
                                       "output %zu does not have the batch's %zu rows as flat data",
                                       i, total);
                        return -EBADMSG;
                }
        }
        return 0;
}

static int split_v2(const struct batch_req *reqs, size_t n, json_t *resp, char **ret, char *err,
                    size_t err_size)
{
        json_t *outputs = json_object_get(resp, "outputs");
        size_t total = 0, at = 0;
        int r;

        for (size_t q = 0; q < n; q++)
                total += reqs[q].rows;
        r = check_v2_outputs(outputs, total, err, err_size);
        if (r < 0)
                return r;
        for (size_t q = 0; q < n; q++) {
                json_t *mine = json_deep_copy(resp), *o;
                size_t i;

                if (!mine)
                        return -ENOMEM;
                (void)json_object_del(mine, "id");
                if (reqs[q].req_id)
                        (void)json_object_set_new(mine, "id", json_string(reqs[q].req_id));
                json_array_foreach(json_object_get(mine, "outputs"), i, o) {
                        json_t *data = json_object_get(o, "data"), *cut = json_array();
                        size_t per_row = json_array_size(data) / total;

                        for (size_t k = 0; k < reqs[q].rows * per_row && cut; k++)
                                if (json_array_append(cut, json_array_get(data, at * per_row + k)) <
                                    0)
                                        json_decref(cut), cut = NULL;
                        if (!cut || json_object_set_new(o, "data", cut) < 0 ||
                            json_array_set_new(json_object_get(o, "shape"), 0,
                                               json_integer((json_int_t)reqs[q].rows)) < 0) {
                                json_decref(mine);
                                return -ENOMEM;
                        }
                }
                at += reqs[q].rows;
                ret[q] = json_dumps(mine, JSON_COMPACT | JSON_PRESERVE_ORDER);
                json_decref(mine);
                if (!ret[q])
                        return -ENOMEM;
        }
        return 0;
}

int batch_split(const struct batch_req *reqs, size_t n, const char *resp, size_t resp_len,
                const char *batch_id, char **ret, char *err, size_t err_size)
{
        json_t *j = json_loadb(resp, resp_len, 0, NULL);
        int r;

        for (size_t i = 0; i < n; i++)
                ret[i] = NULL;
        if (!json_is_object(j)) {
                json_decref(j);
                (void)snprintf(err, err_size, "the model server's answer is not a JSON object");
                return -EBADMSG;
        }
        r = reqs[0].kind == BATCH_V1 ? split_v1(reqs, n, j, batch_id, ret, err, err_size)
                                     : split_v2(reqs, n, j, ret, err, err_size);
        json_decref(j);
        if (r < 0)
                free_all(ret, n);
        return r;
}
