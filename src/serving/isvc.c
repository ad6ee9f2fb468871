/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/isvc.h"

#include <stdio.h>
#include <string.h>

#include "json/json-util.h"

static const char *const impl_keys[ISVC_IMPL__MAX] = {
        [ISVC_IMPL_XGBOOST] = "xgboost",
        [ISVC_IMPL_PYTORCH] = "pytorch",
        [ISVC_IMPL_TRITON] = "triton",
        [ISVC_IMPL_SKLEARN] = "sklearn",
        [ISVC_IMPL_TENSORFLOW] = "tensorflow",
        [ISVC_IMPL_ONNX] = "onnx",
        [ISVC_IMPL_PMML] = "pmml",
        [ISVC_IMPL_LIGHTGBM] = "lightgbm",
        [ISVC_IMPL_PADDLE] = "paddle",
        [ISVC_IMPL_HUGGINGFACE] = "huggingface",
        [ISVC_IMPL_MODEL] = "model",
        [ISVC_IMPL_CUSTOM] = "custom",
};

const char *isvc_impl_to_string(enum isvc_impl i)
{
        if (i < 0 || i >= ISVC_IMPL__MAX)
                return NULL;
        return impl_keys[i];
}

static const char *str_or(const char *s, const char *dflt)
{
        return s ? s : dflt;
}

/* The first element of array @arr whose string member @key is @value; NULL when none (or when
 * @arr is not an array). */
static const json_t *element_with(const json_t *arr, const char *key, const char *value)
{
        size_t i;
        json_t *e;

        json_array_foreach(arr, i, e) {
                const char *v = json_get_string_path(e, key, NULL);
                if (v && streq(v, value))
                        return e;
        }
        return NULL;
}

/* The value of env entry @name of container @c, NULL when absent or not a string. */
static const char *env_value(const json_t *c, const char *name)
{
        return json_get_string_path(element_with(json_get_path(c, "env", NULL), "name", name),
                                    "value", NULL);
}

static bool present(const json_t *v)
{
        return v && !json_is_null(v);
}

static bool is_ready(const json_t *isvc)
{
        const json_t *conds = json_get_path(isvc, "status", "conditions", NULL);
        const char *s = json_get_string_path(element_with(conds, "type", "Ready"), "status", NULL);

        return s && streq(s, "True");
}

static const json_t *find_container(const json_t *containers, const char *name)
{
        return element_with(containers, "name", name);
}

static const char *default_protocol(enum isvc_impl impl)
{
        return impl == ISVC_IMPL_TRITON || impl == ISVC_IMPL_HUGGINGFACE ? "v2" : "v1";
}

static void read_limit(const json_t *container, struct isvc_info *info)
{
        const json_t *mem = json_get_path(container, "resources", "limits", "memory", NULL);

        quantity_init_zero(&info->memory_limit, QUANTITY_DECIMAL_SI);
        info->limit_known = true;
        if (!present(mem))
                return;
        if (quantity_from_json(mem, &info->memory_limit) < 0) {
                quantity_init_zero(&info->memory_limit, QUANTITY_DECIMAL_SI);
                info->limit_known = false;
        }
}

/* §4.2: framework keys in fixed order, then custom containers. Returns the framework object. */
static const json_t *find_impl(const json_t *predictor, bool have_containers,
                               struct isvc_info *info)
{
        for (int i = 0; i < ISVC_IMPL_CUSTOM; i++) {
                const json_t *o = json_get_path(predictor, impl_keys[i], NULL);
                if (present(o)) {
                        info->has_impl = true;
                        info->impl = (enum isvc_impl)i;
                        return o;
                }
        }
        if (have_containers) {
                info->has_impl = true;
                info->impl = ISVC_IMPL_CUSTOM;
        }
        return NULL;
}

/* §4.3 IsMMSPredictor, for a predictor without containers that has a framework object. */
static bool framework_is_mms(const json_t *predictor, const json_t *impl_obj)
{
        const char *format = json_get_string_path(predictor, "model", "modelFormat", "name", NULL);
        const json_t *uris = json_get_path(predictor, "storageUris", NULL);

        if (present(json_get_path(predictor, "huggingface", NULL)) ||
            (format && streq(format, "huggingface")))
                return false;
        return !present(json_get_path(impl_obj, "storageUri", NULL)) &&
               !present(json_get_path(impl_obj, "storage", NULL)) &&
               !(json_is_array(uris) && json_array_size(uris) > 0);
}

/* §4.4 protocol and §4.5 memory limit of custom containers. */
static void read_custom(const json_t *containers, struct isvc_info *info)
{
        const json_t *t = find_container(containers, "transformer-container");
        const json_t *k = find_container(containers, "kserve-container");

        if (t)
                info->protocol = str_or(env_value(t, "PROTOCOL"), "v1");
        else
                info->protocol = str_or(env_value(json_array_get(containers, 0), "PROTOCOL"), "v1");
        if (k)
                read_limit(k, info);
        else
                info->limit_known = false; /* KServe dereferences nil here */
}

static void read_metadata(const json_t *isvc, struct isvc_info *info)
{
        info->name = str_or(json_get_string_path(isvc, "metadata", "name", NULL), "");
        info->namespace_ = str_or(json_get_string_path(isvc, "metadata", "namespace", NULL), "");
        info->uid = json_get_string_path(isvc, "metadata", "uid", NULL);
        info->labels = json_get_path(isvc, "metadata", "labels", NULL);
        if (!json_is_object(info->labels))
                info->labels = NULL;
        info->being_deleted = present(json_get_path(isvc, "metadata", "deletionTimestamp", NULL));
}

int isvc_info_from_json(const json_t *isvc, struct isvc_info *ret)
{
        struct isvc_info info = { 0 };
        const json_t *predictor, *containers, *impl_obj;
        bool have_containers;

        if (!json_is_object(isvc))
                return -EINVAL;

        read_metadata(isvc, &info);
        info.ready = is_ready(isvc);
        info.url = json_get_string_path(isvc, "status", "url", NULL);
        info.address_url = json_get_string_path(isvc, "status", "address", "url", NULL);
        info.protocol = "v1";
        quantity_init_zero(&info.memory_limit, QUANTITY_DECIMAL_SI);

        predictor = json_get_path(isvc, "spec", "predictor", NULL);
        containers = json_get_path(predictor, "containers", NULL);
        have_containers = json_is_array(containers) && json_array_size(containers) > 0;
        impl_obj = find_impl(predictor, have_containers, &info);

        /* §4.3 IsMMSPredictor */
        if (have_containers) {
                const char *v = env_value(json_array_get(containers, 0), "MULTI_MODEL_SERVER");
                info.mms = info.has_impl && v && streq(v, "true");
        } else if (info.has_impl) {
                info.mms = framework_is_mms(predictor, impl_obj);
        }

        /* §4.4 protocol and §4.5 memory limit of the first implementation */
        if (info.has_impl && info.impl != ISVC_IMPL_CUSTOM) {
                info.protocol = str_or(json_get_string_path(impl_obj, "protocolVersion", NULL),
                                       default_protocol(info.impl));
                read_limit(impl_obj, &info);
        } else if (info.has_impl) {
                read_custom(containers, &info);
        }

        *ret = info;
        return 0;
}

bool isvc_memory_available(const struct isvc_info *info, const struct quantity *total)
{
        return info->has_impl && info->limit_known && quantity_cmp(&info->memory_limit, total) >= 0;
}

char *isvc_model_path(const char *protocol, const char *tm)
{
        char *s = NULL;
        int k;

        if (protocol && streq(protocol, "v1"))
                k = asprintf(&s, "/v1/models/%s:predict", tm);
        else if (protocol && streq(protocol, "v2"))
                k = asprintf(&s, "/v2/models/%s/infer", tm);
        else
                k = asprintf(&s, "%s", "");
        return k < 0 ? NULL : s;
}

char *isvc_model_url(const char *base, const char *protocol, const char *tm)
{
        AUTOFREE char *path = isvc_model_path(protocol, tm);
        char *s = NULL;

        if (!path)
                return NULL;
        if (asprintf(&s, "%s%s", base, path) < 0)
                return NULL;
        return s;
}

/* Copies the listed keys of from (borrowed) into to; false on OOM. */
static bool copy_keys(json_t *to, const json_t *from, const char *const *keys, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                json_t *v = json_object_get(from, keys[i]);

                if (v && json_object_set(to, keys[i], v) < 0)
                        return false;
        }
        return true;
}

json_t *isvc_cache_transform(void *userdata, json_t *obj)
{
        static const char *const meta_keys[] = {
                "name",       "namespace",         "uid",         "labels",    "resourceVersion",
                "generation", "deletionTimestamp", "annotations", "finalizers"
        };
        static const char *const top_keys[] = { "apiVersion", "kind", "spec", "status" };
        json_auto_t *out = json_object();
        json_t *meta;

        (void)userdata;
        if (!out || json_object_set_new(out, "metadata", json_object()) < 0)
                return NULL;
        meta = json_object_get(out, "metadata");
        if (!copy_keys(meta, json_object_get(obj, "metadata"), meta_keys, ELEMENTSOF(meta_keys)) ||
            !copy_keys(out, obj, top_keys, ELEMENTSOF(top_keys)))
                return NULL;
        return TAKE_PTR(out);
}
