/* SPDX-License-Identifier: Apache-2.0 */
/* agent/hf-json.h: the Hugging Face Hub's model info (siblings, sha) and error documents. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "agent/hf-json.h"

Test(hf, model_info)
{
        const char *doc = "{\"_id\":\"x\",\"id\":\"acme/iris\",\"sha\":\"5ea1b2c3\",\"siblings\":["
                          "{\"rfilename\":\"model.joblib\",\"size\":50000,\"lfs\":{\"sha256\":"
                          "\"ab\"}},{\"rfilename\":\"tokenizer/vocab.txt\"}]}";
        struct s3_list l = { 0 };
        char *sha = NULL, buf[128];

        cr_assert_eq(hf_model_info_parse(doc, strlen(doc), &l, &sha), 0);
        cr_assert_str_eq(sha, "5ea1b2c3");
        cr_assert_eq(l.n_keys, 2);
        cr_assert_str_eq(l.keys[1], "tokenizer/vocab.txt");
        cr_assert_eq(l.sizes[0], 50000);
        cr_assert_eq(l.sizes[1], S3_SIZE_UNKNOWN);
        free(sha);
        s3_list_release(&l);

        static const char *const bad[] = {
                "",
                "[]",
                "{\"id\":\"a/b\"}",
                "{\"siblings\":{}}",
                "{\"siblings\":[{}]}",
                "{\"siblings\":[],\"sha\":\"../x\"}", /* a commit id goes into URL paths */
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_lt(hf_model_info_parse(bad[i], strlen(bad[i]), &l, &sha), 0, "%s",
                             bad[i]);
                cr_assert_null(sha);
                s3_list_release(&l);
        }
        cr_assert(hf_error_parse("{\"error\":\"Repository not found\"}", 32, buf, sizeof(buf)));
        cr_assert_str_eq(buf, "Repository not found");
        cr_assert(!hf_error_parse("{\"error\":{\"code\":1}}", 20, buf, sizeof(buf)));
}
