/* SPDX-License-Identifier: Apache-2.0 */
#include "registry/kinds.h"

#include <errno.h>
#include <string.h>

#include "filterq/filterq.h"
#include "filterq/sql.h"

static const char *const model_states[] = { "LIVE", "ARCHIVED", NULL };
const char *const reg_artifact_states[] = {
        "UNKNOWN", "PENDING",   "LIVE",      "MARKED_FOR_DELETION",
        "DELETED", "ABANDONED", "REFERENCE", NULL,
};
static const char *const execution_states[] = {
        "UNKNOWN", "NEW", "RUNNING", "COMPLETE", "FAILED", "CACHED", "CANCELED", NULL,
};
static const char *const desired_states[] = { "DEPLOYED", "UNDEPLOYED", NULL };
static const char *const run_statuses[] = { "RUNNING", "SCHEDULED", "FINISHED",
                                            "FAILED",  "KILLED",    NULL };
static const char *const parameter_types[] = { "string", "number", "boolean", "object", NULL };

#define CU (REG_FF_CREATE | REG_FF_UPDATE)

static const struct reg_field registered_model_fields[] = {
        { "owner", "owner", REG_F_STRING, CU, NULL, NULL, NULL },
        { "state", "state", REG_F_ENUM, CU, model_states, "RegisteredModelState", "LIVE" },
        { "readme", "readme", REG_F_STRING, CU, NULL, NULL, NULL },
        { "maturity", "maturity", REG_F_STRING, CU, NULL, NULL, NULL },
        { "language", "language", REG_F_STRLIST, CU, NULL, NULL, NULL },
        { "tasks", "tasks", REG_F_STRLIST, CU, NULL, NULL, NULL },
        { "provider", "provider", REG_F_STRING, CU, NULL, NULL, NULL },
        { "logo", "logo", REG_F_STRING, CU, NULL, NULL, NULL },
        { "license", "license", REG_F_STRING, CU, NULL, NULL, NULL },
        { "licenseLink", "license_link", REG_F_STRING, CU, NULL, NULL, NULL },
        { "libraryName", "library_name", REG_F_STRING, CU, NULL, NULL, NULL },
        { 0 },
};

static const struct reg_field model_version_fields[] = {
        { "registeredModelId", "registered_model_id", REG_F_ID,
          REG_FF_CREATE | REG_FF_REQUIRED | REG_FF_PARENT, NULL, NULL, NULL },
        { "state", "state", REG_F_ENUM, CU, model_states, "ModelVersionState", "LIVE" },
        { "author", "author", REG_F_STRING, CU, NULL, NULL, NULL },
        { 0 },
};

#define ARTIFACT_COMMON(dflt_state)                                                               \
        { "uri", "uri", REG_F_STRING, CU, NULL, NULL, NULL }, { "state",                          \
                                                                "state",                          \
                                                                REG_F_ENUM,                       \
                                                                CU,                               \
                                                                reg_artifact_states,              \
                                                                "ArtifactState",                  \
                                                                dflt_state },                     \
                { "experimentId", "experiment_id", REG_F_ID, REG_FF_OUTPUT, NULL, NULL, NULL },   \
        {                                                                                         \
                "experimentRunId", "experiment_run_id", REG_F_ID, REG_FF_OUTPUT, NULL, NULL, NULL \
        }

static const struct reg_field model_artifact_fields[] = {
        ARTIFACT_COMMON("UNKNOWN"),
        { "modelFormatName", "model_format_name", REG_F_STRING, CU, NULL, NULL, NULL },
        { "modelFormatVersion", "model_format_version", REG_F_STRING, CU, NULL, NULL, NULL },
        { "storageKey", "storage_key", REG_F_STRING, CU, NULL, NULL, NULL },
        { "storagePath", "storage_path", REG_F_STRING, CU, NULL, NULL, NULL },
        { "serviceAccountName", "service_account_name", REG_F_STRING, CU, NULL, NULL, NULL },
        { "modelSourceKind", "model_source_kind", REG_F_STRING, CU, NULL, NULL, NULL },
        { "modelSourceClass", "model_source_class", REG_F_STRING, CU, NULL, NULL, NULL },
        { "modelSourceGroup", "model_source_group", REG_F_STRING, CU, NULL, NULL, NULL },
        { "modelSourceId", "model_source_id", REG_F_STRING, CU, NULL, NULL, NULL },
        { "modelSourceName", "model_source_name", REG_F_STRING, CU, NULL, NULL, NULL },
        { 0 },
};

static const struct reg_field doc_artifact_fields[] = {
        ARTIFACT_COMMON("UNKNOWN"),
        { 0 },
};

static const struct reg_field dataset_fields[] = {
        ARTIFACT_COMMON("UNKNOWN"),
        { "digest", "digest", REG_F_STRING, CU, NULL, NULL, NULL },
        { "sourceType", "source_type", REG_F_STRING, CU, NULL, NULL, NULL },
        { "source", "source", REG_F_STRING, CU, NULL, NULL, NULL },
        { "schema", "schema", REG_F_STRING, CU, NULL, NULL, NULL },
        { "profile", "profile", REG_F_STRING, CU, NULL, NULL, NULL },
        { 0 },
};

static const struct reg_field metric_fields[] = {
        ARTIFACT_COMMON("UNKNOWN"),
        { "value", "value", REG_F_DOUBLE, CU, NULL, NULL, NULL },
        { "timestamp", "timestamp", REG_F_STRING, CU, NULL, NULL, NULL },
        { "step", "step", REG_F_INT, CU, NULL, NULL, NULL },
        { 0 },
};

static const struct reg_field parameter_fields[] = {
        ARTIFACT_COMMON("UNKNOWN"),
        { "value", "value", REG_F_STRING, CU, NULL, NULL, NULL },
        { "parameterType", "parameter_type", REG_F_ENUM, CU, parameter_types, "ParameterType",
          NULL },
        { 0 },
};

static const struct reg_field serving_environment_fields[] = {
        { 0 },
};

static const struct reg_field inference_service_fields[] = {
        { "registeredModelId", "registered_model_id", REG_F_ID, REG_FF_CREATE | REG_FF_REQUIRED,
          NULL, NULL, NULL },
        { "servingEnvironmentId", "serving_environment_id", REG_F_ID,
          REG_FF_CREATE | REG_FF_REQUIRED | REG_FF_PARENT, NULL, NULL, NULL },
        { "modelVersionId", "model_version_id", REG_F_ID, CU, NULL, NULL, NULL },
        { "runtime", "runtime", REG_F_STRING, CU, NULL, NULL, NULL },
        { "desiredState", "desired_state", REG_F_ENUM, CU, desired_states, "InferenceServiceState",
          "DEPLOYED" },
        { 0 },
};

static const struct reg_field serve_model_fields[] = {
        { "modelVersionId", "model_version_id", REG_F_ID, REG_FF_CREATE | REG_FF_REQUIRED, NULL,
          NULL, NULL },
        { "lastKnownState", "last_known_state", REG_F_ENUM, CU, execution_states, "ExecutionState",
          "UNKNOWN" },
        { 0 },
};

static const struct reg_field experiment_fields[] = {
        { "owner", "owner", REG_F_STRING, CU, NULL, NULL, NULL },
        { "state", "state", REG_F_ENUM, CU, model_states, "ExperimentState", "LIVE" },
        { 0 },
};

static const struct reg_field experiment_run_fields[] = {
        { "experimentId", "experiment_id", REG_F_ID,
          REG_FF_CREATE | REG_FF_REQUIRED | REG_FF_PARENT, NULL, NULL, NULL },
        { "startTimeSinceEpoch", "start_time_since_epoch", REG_F_STRING, REG_FF_CREATE, NULL, NULL,
          NULL },
        { "endTimeSinceEpoch", "end_time_since_epoch", REG_F_STRING, CU, NULL, NULL, NULL },
        { "status", "status", REG_F_ENUM, CU, run_statuses, "ExperimentRunStatus", "RUNNING" },
        { "state", "state", REG_F_ENUM, CU, model_states, "ExperimentRunState", "LIVE" },
        { "owner", "owner", REG_F_STRING, CU, NULL, NULL, NULL },
        { 0 },
};

static const struct reg_kind kinds[REG_KIND__MAX] = {
        [REG_REGISTERED_MODEL] = { REG_REGISTERED_MODEL, "RegisteredModel", "registered model",
                                   "registered models", STORE_GROUP_CONTEXT, NULL, true, false,
                                   registered_model_fields },
        [REG_MODEL_VERSION] = { REG_MODEL_VERSION, "ModelVersion", "model version",
                                "model versions", STORE_GROUP_CONTEXT, NULL, true, false,
                                model_version_fields },
        [REG_MODEL_ARTIFACT] = { REG_MODEL_ARTIFACT, "ModelArtifact", "model artifact",
                                 "model artifacts", STORE_GROUP_ARTIFACT, "model-artifact", false,
                                 true, model_artifact_fields },
        [REG_DOC_ARTIFACT] = { REG_DOC_ARTIFACT, "DocArtifact", "doc artifact", "doc artifacts",
                               STORE_GROUP_ARTIFACT, "doc-artifact", false, true,
                               doc_artifact_fields },
        [REG_DATASET] = { REG_DATASET, "DataSet", "dataset", "datasets", STORE_GROUP_ARTIFACT,
                          "dataset-artifact", false, true, dataset_fields },
        [REG_METRIC] = { REG_METRIC, "Metric", "metric", "metrics", STORE_GROUP_ARTIFACT, "metric",
                         false, true, metric_fields },
        [REG_PARAMETER] = { REG_PARAMETER, "Parameter", "parameter", "parameters",
                            STORE_GROUP_ARTIFACT, "parameter", false, true, parameter_fields },
        [REG_METRIC_HISTORY] = { REG_METRIC_HISTORY, "MetricHistory", "metric history",
                                 "metric history", STORE_GROUP_ARTIFACT, "metric", false, true,
                                 metric_fields },
        [REG_SERVING_ENVIRONMENT] = { REG_SERVING_ENVIRONMENT, "ServingEnvironment",
                                      "serving environment", "serving environments",
                                      STORE_GROUP_CONTEXT, NULL, true, false,
                                      serving_environment_fields },
        [REG_INFERENCE_SERVICE] = { REG_INFERENCE_SERVICE, "InferenceService", "inference service",
                                    "inference services", STORE_GROUP_CONTEXT, NULL, false, true,
                                    inference_service_fields },
        [REG_SERVE_MODEL] = { REG_SERVE_MODEL, "ServeModel", "serve model", "serve models",
                              STORE_GROUP_EXECUTION, NULL, false, true, serve_model_fields },
        [REG_EXPERIMENT] = { REG_EXPERIMENT, "Experiment", "experiment", "experiments",
                             STORE_GROUP_CONTEXT, NULL, true, false, experiment_fields },
        [REG_EXPERIMENT_RUN] = { REG_EXPERIMENT_RUN, "ExperimentRun", "experiment run",
                                 "experiment runs", STORE_GROUP_CONTEXT, NULL, false, true,
                                 experiment_run_fields },
};

const char *const reg_artifact_types[] = {
        "ModelArtifact", "DocArtifact", "DataSet", "Metric", "Parameter",
};
const size_t reg_n_artifact_types = ELEMENTSOF(reg_artifact_types);

const struct reg_kind *reg_kind(enum reg_kind_id id)
{
        return id < REG_KIND__MAX ? &kinds[id] : NULL;
}

const struct reg_kind *reg_kind_by_artifact_type(const char *artifact_type)
{
        if (!artifact_type)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (kinds[i].id != REG_METRIC_HISTORY && kinds[i].artifact_type &&
                    streq(kinds[i].artifact_type, artifact_type))
                        return &kinds[i];
        return NULL;
}

const struct reg_kind *reg_kind_by_type(const char *type)
{
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (streq(kinds[i].type, type))
                        return &kinds[i];
        return NULL;
}

const struct reg_field *reg_kind_field(const struct reg_kind *k, const char *json)
{
        for (const struct reg_field *f = k->fields; f->json; f++)
                if (streq(f->json, json))
                        return f;
        return NULL;
}

/* ---- filterQuery resolution ---- */

static const struct {
        const char *json;
        enum store_column col;
        enum store_vcol vcol;
} filter_columns[] = {
        { "id", STORE_COL_ID, STORE_VCOL_INT },
        { "name", STORE_COL_NAME, STORE_VCOL_STRING },
        { "externalId", STORE_COL_EXTERNAL_ID, STORE_VCOL_STRING },
        { "createTimeSinceEpoch", STORE_COL_CREATE, STORE_VCOL_INT },
        { "lastUpdateTimeSinceEpoch", STORE_COL_UPDATE, STORE_VCOL_INT },
};

static enum store_vcol field_vcol(enum reg_ftype type)
{
        switch (type) {
        case REG_F_ID:
        case REG_F_MS:
        case REG_F_INT:
                return STORE_VCOL_INT;
        case REG_F_DOUBLE:
                return STORE_VCOL_DOUBLE;
        default:
                return STORE_VCOL_STRING;
        }
}

static void filter_resolve(void *userdata, const char *name, struct filterq_sql_target *t)
{
        const struct reg_kind *k = userdata;
        const struct reg_field *f;

        for (size_t i = 0; i < ELEMENTSOF(filter_columns); i++)
                if (streq(name, filter_columns[i].json)) {
                        t->is_column = true;
                        t->column = filter_columns[i].col;
                        t->vcol = filter_columns[i].vcol;
                        return;
                }
        if (streq(name, "description")) {
                t->prop = "description";
                t->vcol = STORE_VCOL_STRING;
                return;
        }
        f = reg_kind_field(k, name);
        if (f) {
                t->prop = f->prop;
                t->vcol = field_vcol(f->type);
                if (k->artifact_type && streq(name, "state")) {
                        t->enum_names = reg_artifact_states;
                        t->n_enum_names = 7;
                }
                return;
        }
        t->custom = true;
        t->prop = name;
}

/* Characters and unescaped wildcards of a LIKE pattern (backslash escapes). */
static void like_cost(const char *pat, size_t *ret_chars, size_t *ret_wild)
{
        size_t chars = 0, wild = 0;

        for (const char *p = pat; *p; p++) {
                if (((unsigned char)*p & 0xC0) != 0x80)
                        chars++;
                if (*p == '\\' && p[1])
                        p++;
                else if (*p == '%' || *p == '_')
                        wild++;
        }
        *ret_chars = chars;
        *ret_wild = wild;
}

/* LIKE/ILIKE cost grows with pattern length times text length: both bounds in docs/registry.md. */
static int check_like(const struct store_cond *c, struct error_detail *err)
{
        if (c->kind == STORE_COND_AND || c->kind == STORE_COND_OR) {
                for (size_t i = 0; i < c->n_kids; i++) {
                        int r = check_like(c->kids[i], err);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (c->kind != STORE_COND_CMP || (c->op != STORE_OP_LIKE && c->op != STORE_OP_ILIKE))
                return 0;
        for (size_t i = 0; i < c->n_vals; i++) {
                size_t chars, wild;

                if (c->vals[i].type != STORE_TEXT)
                        continue;
                like_cost(c->vals[i].s, &chars, &wild);
                if (chars > REG_LIKE_PATTERN_MAX)
                        return error_detail_set(
                                err, ERROR_INVALID, -EINVAL,
                                "invalid filter query: LIKE pattern of %zu characters, at most %d allowed: bad request",
                                chars, REG_LIKE_PATTERN_MAX);
                if (wild > REG_LIKE_WILDCARDS_MAX)
                        return error_detail_set(
                                err, ERROR_INVALID, -EINVAL,
                                "invalid filter query: LIKE pattern with %zu wildcards, at most %d allowed: bad request",
                                wild, REG_LIKE_WILDCARDS_MAX);
        }
        return 0;
}

int reg_filter_compile(const struct reg_kind *k, const char *query, struct store_cond **ret,
                       struct error_detail *err)
{
        CLEANUP(filterq_freep) struct filterq_node *tree = NULL;
        char msg[256];
        int r;

        r = filterq_parse(query, &tree, msg, sizeof(msg));
        if (r == -EINVAL)
                return error_detail_set(err, ERROR_INVALID, r,
                                        "invalid filter query: %s: bad request", msg);
        if (r >= 0)
                r = filterq_sql_lower(tree, filter_resolve, (void *)k, ret);
        if (r < 0)
                return error_detail_set(err, ERROR_INTERNAL, r, "out of memory");
        if (*ret) {
                r = check_like(*ret, err);
                if (r < 0)
                        *ret = store_cond_free(*ret);
        }
        return r;
}
