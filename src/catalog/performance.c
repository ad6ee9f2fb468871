/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/performance.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/parse-util.h"

/* Relative latency improvement a recommendation must bring: 5%, 10% once an option is "fast". */
#define EPSILON_INITIAL 0.05
#define EPSILON_FAST    0.1
#define FAST_LATENCY    100.0

static const char *name_or(const char *s, const char *def)
{
        return s && s[0] ? s : def;
}

bool catalog_perf_active(const struct catalog_perf_params *p)
{
        return p && (p->target_rps > 0 || p->recommendations);
}

static const json_t *custom_prop(const json_t *artifact, const char *name, const char *type)
{
        const json_t *mv = json_object_get(json_object_get(artifact, "customProperties"), name);
        const char *t = json_string_value(json_object_get(mv, "metadataType"));

        return t && streq(t, type) ? mv : NULL;
}

static double prop_double(const json_t *a, const char *name, double def)
{
        const json_t *v = json_object_get(custom_prop(a, name, "MetadataDoubleValue"),
                                          "double_value");

        return json_is_number(v) ? json_number_value(v) : def;
}

static int64_t prop_int(const json_t *a, const char *name, int64_t def)
{
        const char *s = json_string_value(
                json_object_get(custom_prop(a, name, "MetadataIntValue"), "int_value"));
        int32_t v;

        return s && safe_atoi32(s, &v) == 0 ? v : def;
}

static const char *prop_string(const json_t *a, const char *name)
{
        const char *s = json_string_value(
                json_object_get(custom_prop(a, name, "MetadataStringValue"), "string_value"));

        return s ? s : "";
}

int catalog_perf_validate(json_t *const *artifacts, size_t n, const struct catalog_perf_params *p,
                          struct error_detail *reterr)
{
        const char *given[] = { p->rps_property, p->latency_property, p->hw_count_property,
                                p->hw_type_property };
        struct buf missing = BUF_INIT(1024);
        int r = 0;

        if (n == 0)
                return 0;
        for (size_t g = 0; g < ELEMENTSOF(given) && r >= 0; g++) {
                bool found = false, dup = false;

                if (!given[g] || !given[g][0])
                        continue;
                for (size_t k = 0; k < g; k++)
                        dup = dup || (given[k] && streq(given[k], given[g]));
                if (dup)
                        continue;
                for (size_t i = 0; i < n && !found; i++)
                        found = json_object_get(json_object_get(artifacts[i], "customProperties"),
                                                given[g]) != NULL;
                if (!found)
                        r = buf_printf(&missing, "%s%s", missing.len ? " " : "", given[g]);
        }
        if (r >= 0 && missing.len > 0) {
                (void)error_detail_set(
                        reterr, ERROR_INVALID, -EINVAL,
                        "invalid custom properties: properties not found in any performance "
                        "artifacts: [%s]",
                        buf_str(&missing));
                r = -EINVAL;
        }
        buf_release(&missing);
        return r == -E2BIG ? -EINVAL : r;
}

int catalog_perf_add_target_rps(json_t *artifact, int32_t target_rps, const char *rps_property)
{
        json_t *custom = json_object_get(artifact, "customProperties");
        double rps, replicas;
        char ibuf[32];

        if (target_rps <= 0)
                return 0;
        if (!json_is_object(custom)) {
                custom = json_object();
                if (!custom || json_object_set_new(artifact, "customProperties", custom) < 0)
                        return -ENOMEM;
        }
        rps = prop_double(artifact, name_or(rps_property, CATALOG_PERF_RPS_DEFAULT), 1);
        if (!(rps > 0))
                rps = 1;
        replicas = ceil((double)target_rps / rps);
        if (replicas > INT32_MAX)
                replicas = INT32_MAX;
        else if (replicas < 1)
                replicas = 1;
        snprintf(ibuf, sizeof(ibuf), "%d", (int)replicas);
        if (json_object_set_new(custom, "replicas",
                                json_pack("{s:s, s:s}", "metadataType", "MetadataIntValue",
                                          "int_value", ibuf)) < 0 ||
            json_object_set_new(custom, "total_requests_per_second",
                                json_pack("{s:s, s:f}", "metadataType", "MetadataDoubleValue",
                                          "double_value", replicas * rps)) < 0)
                return -ENOMEM;
        return 0;
}

struct perf_item {
        size_t pos; /* index in the input */
        const char *hw_type;
        double latency;  /* for sorting: +inf when absent or <= 0 */
        int64_t hw_sort; /* for sorting: INT32_MAX when absent or <= 0 */
        int64_t cost;
        double latency_raw; /* NAN when absent */
};

static int perf_item_cmp(const void *pa, const void *pb)
{
        const struct perf_item *a = pa, *b = pb;
        int c = strcmp(a->hw_type, b->hw_type);

        if (c != 0)
                return c;
        if (a->latency != b->latency)
                return a->latency < b->latency ? -1 : 1;
        if (a->hw_sort != b->hw_sort)
                return a->hw_sort < b->hw_sort ? -1 : 1;
        return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Steps 2 and 3 on one hardware type's items g[0..n), sorted by latency. */
static void recommend_group(const struct perf_item *g, size_t n, size_t *front, bool *keep)
{
        int64_t cheapest = INT64_MAX;
        size_t nf = 0;
        double last, epsilon = EPSILON_INITIAL;

        for (size_t i = 0; i < n; i++)
                if (g[i].cost < cheapest) {
                        front[nf++] = i;
                        cheapest = g[i].cost;
                }
        if (nf == 0)
                return;
        /* front is by cost descending: walk it backwards (cheapest first) */
        keep[g[front[nf - 1]].pos] = true;
        last = isnan(g[front[nf - 1]].latency_raw) ? 0 : g[front[nf - 1]].latency_raw;
        for (size_t k = nf - 1; k-- > 0;) {
                const struct perf_item *it = &g[front[k]];
                double latency = isnan(it->latency_raw) ? last : it->latency_raw;

                if (last <= FAST_LATENCY)
                        epsilon = EPSILON_FAST;
                if ((last - latency) / last > epsilon) {
                        keep[it->pos] = true;
                        last = latency;
                }
        }
}

int catalog_perf_recommend(json_t *const *artifacts, size_t n, const struct catalog_perf_params *p,
                           bool *keep)
{
        const char *lat = name_or(p->latency_property, CATALOG_PERF_LATENCY_DEFAULT);
        const char *hwc = name_or(p->hw_count_property, CATALOG_PERF_HW_COUNT_DEFAULT);
        const char *hwt = name_or(p->hw_type_property, CATALOG_PERF_HW_TYPE_DEFAULT);
        AUTOFREE struct perf_item *v = calloc(n + 1, sizeof(*v));
        AUTOFREE size_t *front = calloc(n + 1, sizeof(*front));

        if (!v || !front)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const json_t *a = artifacts[i];
                int64_t count = prop_int(a, hwc, 1), replicas = prop_int(a, "replicas", 1);

                keep[i] = false;
                v[i] = (struct perf_item){
                        .pos = i,
                        .hw_type = prop_string(a, hwt),
                        .latency = prop_double(a, lat, DBL_MAX),
                        .hw_sort = prop_int(a, hwc, INT32_MAX),
                        .cost = count * replicas,
                        .latency_raw = prop_double(a, lat, (double)NAN),
                };
                if (v[i].latency <= 0)
                        v[i].latency = DBL_MAX;
                if (v[i].hw_sort <= 0)
                        v[i].hw_sort = INT32_MAX;
        }
        qsort(v, n, sizeof(*v), perf_item_cmp);
        for (size_t start = 0; start < n;) {
                size_t end = start + 1;

                while (end < n && streq(v[end].hw_type, v[start].hw_type))
                        end++;
                recommend_group(v + start, end - start, front, keep);
                start = end;
        }
        return 0;
}
