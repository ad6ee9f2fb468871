/* SPDX-License-Identifier: Apache-2.0 */
/* agent/batch.h: the batcher's merge and split, and the bodies it refuses or passes through. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agent/batch.h"

static int parse(enum batch_kind k, const char *s, struct batch_req *r)
{
        return batch_req_parse(k, s, strlen(s), r);
}

static json_t *J(const char *s)
{
        json_t *j = json_loads(s, 0, NULL);
        cr_assert_not_null(j, "%s", s);
        return j;
}

static void assert_json_eq(const char *got, const char *want)
{
        json_t *a = J(got), *b = J(want);
        cr_assert(json_equal(a, b), "got %s\nwant %s", got, want);
        json_decref(a);
        json_decref(b);
}

Test(batch, kind_of_path)
{
        cr_assert_eq(batch_kind_of_path("/v1/models/iris:predict"), BATCH_V1);
        cr_assert_eq(batch_kind_of_path("/v2/models/iris/infer"), BATCH_V2);
        cr_assert_eq(batch_kind_of_path("/v2/models/iris/versions/3/infer"), BATCH_V2);
        cr_assert_eq(batch_kind_of_path("/v1/models/iris:explain"), BATCH_KIND__INVALID);
        cr_assert_eq(batch_kind_of_path("/v2/models/iris/ready"), BATCH_KIND__INVALID);
        cr_assert_eq(batch_kind_of_path("/v2/models//infer"), BATCH_KIND__INVALID);
        cr_assert_eq(batch_kind_of_path("/v2/models/iris/infer?x=1"), BATCH_KIND__INVALID);
        cr_assert_eq(batch_kind_of_path("/infer"), BATCH_KIND__INVALID);
}

Test(batch, v1_merge_and_split_in_order)
{
        struct batch_req r[2] = { 0 };
        AUTOFREE char *m = NULL;
        char *out[2], err[128];

        cr_assert_eq(parse(BATCH_V1, "{\"instances\":[[1,2],[3,4]]}", &r[0]), 0);
        cr_assert_eq(parse(BATCH_V1, "{\"instances\":[[5,6]]}", &r[1]), 0);
        cr_assert_eq(r[0].rows, 2);
        m = batch_merge(r, 2);
        assert_json_eq(m, "{\"instances\":[[1,2],[3,4],[5,6]]}");
        const char *resp = "{\"predictions\":[10,20,30]}";
        cr_assert_eq(batch_split(r, 2, resp, strlen(resp), "b-1", out, err, sizeof(err)), 0);
        assert_json_eq(out[0], "{\"message\":\"\",\"batchId\":\"b-1\",\"predictions\":[10,20]}");
        assert_json_eq(out[1], "{\"message\":\"\",\"batchId\":\"b-1\",\"predictions\":[30]}");
        free(out[0]);
        free(out[1]);
        /* predictions that do not add up: KServe's words, nothing handed out */
        resp = "{\"predictions\":[10,20]}";
        cr_assert_eq(batch_split(r, 2, resp, strlen(resp), "b", out, err, sizeof(err)), -EBADMSG);
        cr_assert_str_eq(err, "size of prediction is not equal to the size of instances");
        cr_assert_null(out[0]);
        batch_req_release(&r[0]);
        batch_req_release(&r[1]);
}

Test(batch, v2_merge_and_split_by_first_dimension)
{
        struct batch_req r[2] = { 0 };
        AUTOFREE char *m = NULL;
        char *out[2], err[128];

        cr_assert_eq(parse(BATCH_V2,
                           "{\"id\":\"a\",\"inputs\":[{\"name\":\"x\",\"shape\":[2,2],\"datatype\":"
                           "\"FP64\",\"data\":[1,2,3,4]}]}",
                           &r[0]),
                     0);
        cr_assert_eq(parse(BATCH_V2,
                           "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,2],\"datatype\":\"FP64\","
                           "\"data\":[5,6]}]}",
                           &r[1]),
                     0);
        cr_assert_str_eq(r[0].key, r[1].key);
        cr_assert_eq(r[0].rows, 2);
        m = batch_merge(r, 2);
        assert_json_eq(m, "{\"inputs\":[{\"name\":\"x\",\"shape\":[3,2],\"datatype\":\"FP64\","
                          "\"data\":[1,2,3,4,5,6]}]}");
        const char *resp = "{\"model_name\":\"iris\",\"id\":\"up\",\"outputs\":[{\"name\":\"y\","
                           "\"shape\":[3,1],\"datatype\":\"INT64\",\"data\":[7,8,9]}]}";
        cr_assert_eq(batch_split(r, 2, resp, strlen(resp), "b", out, err, sizeof(err)), 0);
        assert_json_eq(out[0], "{\"model_name\":\"iris\",\"id\":\"a\",\"outputs\":[{\"name\":\"y\","
                               "\"shape\":[2,1],\"datatype\":\"INT64\",\"data\":[7,8]}]}");
        assert_json_eq(out[1], "{\"model_name\":\"iris\",\"outputs\":[{\"name\":\"y\","
                               "\"shape\":[1,1],\"datatype\":\"INT64\",\"data\":[9]}]}");
        free(out[0]);
        free(out[1]);
        /* outputs whose first dimension is not the batch's */
        resp = "{\"outputs\":[{\"name\":\"y\",\"shape\":[2],\"datatype\":\"INT64\",\"data\":[7,8]}]}";
        cr_assert_eq(batch_split(r, 2, resp, strlen(resp), "b", out, err, sizeof(err)), -EBADMSG);
        resp = "{\"outputs\":[{\"name\":\"y\",\"shape\":[3],\"datatype\":\"INT64\",\"data\":[7,8]}]}";
        cr_assert_eq(batch_split(r, 2, resp, strlen(resp), "b", out, err, sizeof(err)), -EBADMSG);
        resp = "[]";
        cr_assert_eq(batch_split(r, 2, resp, strlen(resp), "b", out, err, sizeof(err)), -EBADMSG);
        resp = "{\"outputs\":7}";
        cr_assert_eq(batch_split(r, 2, resp, strlen(resp), "b", out, err, sizeof(err)), -EBADMSG);
        batch_req_release(&r[0]);
        batch_req_release(&r[1]);
}

Test(batch, v2_keys_keep_different_requests_apart)
{
        struct batch_req a = { 0 }, b = { 0 }, c = { 0 };

        cr_assert_eq(parse(BATCH_V2,
                           "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,2],\"datatype\":\"FP64\","
                           "\"data\":[1,2]}]}",
                           &a),
                     0);
        cr_assert_eq(parse(BATCH_V2,
                           "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,2],\"datatype\":\"FP32\","
                           "\"data\":[1,2]}]}",
                           &b),
                     0);
        cr_assert_eq(parse(BATCH_V2,
                           "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,1],\"datatype\":\"FP64\","
                           "\"data\":[1]}]}",
                           &c),
                     0);
        cr_assert_str_neq(a.key, b.key);
        cr_assert_str_neq(a.key, c.key);
        batch_req_release(&a);
        batch_req_release(&b);
        batch_req_release(&c);
}

Test(batch, malformed_and_unmergeable_bodies)
{
        static const char *const v1_bad[] = { "",
                                              "{",
                                              "[]",
                                              "{\"instances\":[]}",
                                              "{\"instances\":{}}",
                                              "{\"inputs\":[1]}",
                                              "{\"instances\":[1],\"instances\":[2]}" };
        static const char *const v2_bad[] = {
                "",
                "{\"inputs\":[",
                "{\"inputs\":[]}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[2,2],\"datatype\":\"FP64\",\"data\":[1,2,3]}]}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[0],\"datatype\":\"FP64\",\"data\":[]}]}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[-1],\"datatype\":\"FP64\",\"data\":[1]}]}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[1.5],\"datatype\":\"FP64\",\"data\":[1]}]}",
                "{\"inputs\":[{\"shape\":[1],\"datatype\":\"FP64\",\"data\":[1]}]}",
                "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP64\",\"data\":[1]}]}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[9999999999,9999999999],\"data\":[1]}]}",
                "{\"id\":7,\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"data\":[1]}]}",
        };
        static const char *const v2_through[] = {
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[1,2],\"datatype\":\"FP64\","
                "\"data\":[[1,2]]}]}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"data\":[1]}],\"outputs\":[]}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"data\":[1]}],"
                "\"parameters\":{\"binary_data_output\":true}}",
                "{\"inputs\":[{\"name\":\"x\",\"shape\":[1],\"data\":[1]},"
                "{\"name\":\"y\",\"shape\":[2],\"data\":[1,2]}]}",
        };
        struct batch_req r = { 0 };

        for (size_t i = 0; i < ELEMENTSOF(v1_bad); i++)
                cr_assert_eq(parse(BATCH_V1, v1_bad[i], &r), -EBADMSG, "%s", v1_bad[i]);
        for (size_t i = 0; i < ELEMENTSOF(v2_bad); i++)
                cr_assert_eq(parse(BATCH_V2, v2_bad[i], &r), -EBADMSG, "%s", v2_bad[i]);
        for (size_t i = 0; i < ELEMENTSOF(v2_through); i++)
                cr_assert_eq(parse(BATCH_V2, v2_through[i], &r), -EMEDIUMTYPE, "%s", v2_through[i]);
        cr_assert_eq(parse(BATCH_KIND__INVALID, "{}", &r), -EINVAL);
}
