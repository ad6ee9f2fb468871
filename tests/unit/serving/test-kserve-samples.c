/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A check against KServe's own sample objects (docs/samples/multimodelserving/ of the kserve Go
 * module at the pinned version, MODELPLANE_KSERVE_DIR: scripts/test sets it from
 * scripts/kserve-module): the webhook admits them and the planner serves them. Skipped, naming
 * why, when the variable is unset.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "json/json-util.h"
#include "serving/conditions.h"
#include "serving/isvc.h"
#include "serving/plan.h"
#include "serving/webhook-rules.h"

#define NOW ((usec_t)1750000000 * USEC_PER_SEC)

static json_t *node_to_json(yaml_document_t *doc, yaml_node_t *node, int depth)
{
        json_t *v;

        cr_assert_lt(depth, 64, "YAML nesting too deep");
        switch (node->type) {
        case YAML_SCALAR_NODE: {
                const char *s = (const char *)node->data.scalar.value;
                size_t len = node->data.scalar.length;
                bool digits = len > 0 && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                for (size_t i = 0; i < len && digits; i++)
                        digits = s[i] >= '0' && s[i] <= '9';
                return digits && len < 18 ? json_integer(strtoll(s, NULL, 10))
                                          : json_stringn(s, len);
        }
        case YAML_SEQUENCE_NODE:
                v = json_array();
                for (yaml_node_item_t *i = node->data.sequence.items.start;
                     i < node->data.sequence.items.top; i++)
                        json_array_append_new(v, node_to_json(doc, yaml_document_get_node(doc, *i),
                                                              depth + 1));
                return v;
        case YAML_MAPPING_NODE:
                v = json_object();
                for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
                     p < node->data.mapping.pairs.top; p++) {
                        yaml_node_t *k = yaml_document_get_node(doc, p->key);
                        json_object_set_new(v, (const char *)k->data.scalar.value,
                                            node_to_json(doc, yaml_document_get_node(doc, p->value),
                                                         depth + 1));
                }
                return v;
        default:
                return json_null();
        }
}

#define SAMPLES "docs/samples/multimodelserving"

/* All documents of a YAML file of the kserve module, as a JSON array; NULL when the module's
 * directory is not given. */
static json_t *load_samples(const char *file)
{
        const char *root = getenv("MODELPLANE_KSERVE_DIR");
        char path[4096];
        yaml_parser_t parser;
        json_t *docs;
        FILE *f;

        if (!root || !*root)
                return NULL;
        (void)snprintf(path, sizeof(path), "%s/" SAMPLES "/%s", root, file);
        f = fopen(path, "re");
        cr_assert_not_null(f, "%s: %m", path);
        docs = json_array();
        cr_assert(yaml_parser_initialize(&parser));
        yaml_parser_set_input_file(&parser, f);
        for (int n = 0; n < 16; n++) {
                yaml_document_t doc;
                yaml_node_t *top;

                cr_assert(yaml_parser_load(&parser, &doc), "YAML error in %s", path);
                top = yaml_document_get_root_node(&doc);
                if (!top) {
                        yaml_document_delete(&doc);
                        break;
                }
                json_array_append_new(docs, node_to_json(&doc, top, 0));
                yaml_document_delete(&doc);
        }
        yaml_parser_delete(&parser);
        fclose(f);
        return docs;
}

static void make_ready(json_t *isvc)
{
        json_object_set_new(isvc, "status",
                            json_pack("{s:[{s:s, s:s}], s:s, s:{s:s}}", "conditions", "type",
                                      "Ready", "status", "True", "url",
                                      "http://svc.default.example.com", "address", "url",
                                      "http://svc.default.svc.cluster.local"));
        json_object_set_new(json_object_get(isvc, "metadata"), "namespace", json_string("default"));
        json_object_set_new(json_object_get(isvc, "metadata"), "uid", json_string("uid-1"));
}

static void check_pair(const char *isvc_file, const char *const *tm_files, size_t n_files,
                       const char *protocol_path_part)
{
        json_auto_t *isvcs = load_samples(isvc_file);
        json_auto_t *tms = json_array();
        json_t *list[8];
        size_t n = 0;
        struct isvc_info info;
        struct isvc_plan plan;
        struct plan_input in;

        if (!isvcs)
                cr_skip_test("MODELPLANE_KSERVE_DIR is not set (scripts/kserve-module prints it)");
        for (size_t f = 0; f < n_files; f++) {
                json_auto_t *docs = load_samples(tm_files[f]);
                cr_assert_not_null(docs);
                json_array_extend(tms, docs);
        }
        for (size_t i = 0; i < json_array_size(tms) && n < 8; i++) {
                char *msg = NULL;
                json_t *tm = json_array_get(tms, i);
                cr_assert_eq(tm_validate_admission("CREATE", tm, NULL, &msg), TM_ADMISSION_ALLOWED,
                             "KServe's sample must be admitted: %s", msg ? msg : "");
                json_object_set_new(json_object_get(tm, "metadata"), "namespace",
                                    json_string("default"));
                list[n++] = tm;
        }
        cr_assert_gt(n, 0);

        make_ready(json_array_get(isvcs, 0));
        cr_assert_eq(isvc_info_from_json(json_array_get(isvcs, 0), &info), 0);
        cr_assert(info.mms, "the sample predictor is multi-model");

        in = (struct plan_input){ .isvc_name = info.name,
                                  .isvc = json_array_get(isvcs, 0),
                                  .configmap = NULL,
                                  .tms = (const json_t *const *)list,
                                  .n_tms = n,
                                  .now = NOW };
        cr_assert_eq(isvc_plan_compute(&in, &plan), 0);
        cr_assert_not_null(plan.configmap_create);
        for (size_t i = 0; i < n; i++) {
                const struct tm_plan *p = &plan.tms[i];
                const char *url = json_string_value(json_object_get(p->status, "url"));
                cr_assert(p->admitted, "%s fits the sample's memory limit", p->name);
                cr_assert(p->listed, "%s is listed", p->name);
                cr_assert_eq(p->state, TM_STATE_PENDING);
                cr_assert_not_null(url);
                cr_assert_not_null(strstr(url, protocol_path_part), "%s", url);
                cr_assert_not_null(strstr(plan.models_json, p->name));
        }
        isvc_plan_release(&plan);
}

Test(kserve_samples, sklearn)
{
        static const char *const files[] = { "sklearn/trainedmodels.yaml" };

        check_pair("sklearn/inferenceservice.yaml", files, 1, "/v1/models/");
}

Test(kserve_samples, triton)
{
        static const char *const files[] = { "triton/trained_model.yaml",
                                             "triton/trained_model2.yaml" };

        check_pair("triton/multi_model_triton.yaml", files, 2, "/v2/models/");
}
