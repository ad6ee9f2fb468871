/* SPDX-License-Identifier: Apache-2.0 */
/* agent/cloudevent.h: the request logger's CloudEvent headers and store records. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cloudevent.h"
#include "util/base64.h"

static const struct ce_event base = {
        .id = "req-1",
        .type = CE_TYPE_REQUEST,
        .source = "http://iris-predictor.default/",
        .time_usec = 1796616000123456ULL, /* 2026-12-07T04:00:00.123456Z */
        .recorded_usec = 1796616001000000ULL,
        .content_type = "application/json",
        .inference_service = "iris",
        .namespace_ = "default",
        .component = "predictor",
        .endpoint = "default",
        .metadata_json = "{\"X-User\":[\"alice\"]}",
        .annotations_json = "{\"team\":\"ml\"}",
        .body = "{\"inputs\":[]}",
        .body_len = 13,
};

static const char *find(char **v, const char *prefix)
{
        for (size_t i = 0; v[i]; i++)
                if (strncmp(v[i], prefix, strlen(prefix)) == 0)
                        return v[i] + strlen(prefix);
        return NULL;
}

Test(cloudevent, binary_mode_headers)
{
        char **v = NULL;

        cr_assert_eq(ce_http_headers(&base, &v), 0);
        cr_assert_str_eq(find(v, "Ce-Specversion: "), "1.0");
        cr_assert_str_eq(find(v, "Ce-Id: "), "req-1");
        cr_assert_str_eq(find(v, "Ce-Source: "), "http://iris-predictor.default/");
        cr_assert_str_eq(find(v, "Ce-Type: "), "org.kubeflow.serving.inference.request");
        cr_assert_str_eq(find(v, "Ce-Time: "), "2026-12-07T04:00:00.123456Z");
        cr_assert_str_eq(find(v, "Ce-Recordedtime: "), "2026-12-07T04:00:01.000000Z");
        cr_assert_str_eq(find(v, "Ce-Inferenceservicename: "), "iris");
        cr_assert_str_eq(find(v, "Ce-Namespace: "), "default");
        cr_assert_str_eq(find(v, "Ce-Component: "), "predictor");
        cr_assert_str_eq(find(v, "Ce-Endpoint: "), "default");
        /* as KServe's agent (sdk-go) sends them: not percent-encoded */
        cr_assert_str_eq(find(v, "Ce-Metadata: "), "{\"X-User\":[\"alice\"]}");
        cr_assert_str_eq(find(v, "Ce-Annotations: "), "{\"team\":\"ml\"}");
        cr_assert_str_eq(find(v, "Content-Type: "), "application/json");
        ce_strv_free(v);
}

Test(cloudevent, empty_extensions_and_no_annotations)
{
        struct ce_event ev = base;
        char **v = NULL;

        ev.inference_service = NULL;
        ev.annotations_json = NULL;
        ev.metadata_json = NULL;
        ev.content_type = NULL;
        cr_assert_eq(ce_http_headers(&ev, &v), 0);
        cr_assert_str_eq(find(v, "Ce-Inferenceservicename: "), "");
        cr_assert_str_eq(find(v, "Ce-Metadata: "), "{}");
        cr_assert_null(find(v, "Ce-Annotations: "));
        cr_assert_null(find(v, "Content-Type: "));
        ce_strv_free(v);
}

Test(cloudevent, refused_events)
{
        struct ce_event ev = base;
        char **v = NULL;

        ev.id = "";
        cr_assert_eq(ce_http_headers(&ev, &v), -EINVAL);
        ev = base;
        ev.source = NULL;
        cr_assert_eq(ce_http_headers(&ev, &v), -EINVAL);
        ev = base;
        ev.type = NULL;
        cr_assert_eq(ce_http_headers(&ev, &v), -EINVAL);
        ev = base;
        ev.content_type = "application/json\r\nX-Injected: 1";
        cr_assert_eq(ce_http_headers(&ev, &v), -EINVAL);
}

Test(cloudevent, control_characters_never_break_a_header)
{
        struct ce_event ev = base;
        char **v = NULL;

        ev.id = "a\r\nX-Injected: 1";
        ev.endpoint = "tab\there\x7f";
        cr_assert_eq(ce_http_headers(&ev, &v), 0);
        cr_assert_str_eq(find(v, "Ce-Id: "), "a%0D%0AX-Injected: 1");
        cr_assert_str_eq(find(v, "Ce-Endpoint: "), "tab%09here%7F");
        for (size_t i = 0; v[i]; i++)
                cr_assert_null(strpbrk(v[i], "\r\n"));
        ce_strv_free(v);
}

Test(cloudevent, json_record_as_kserve_marshals_it)
{
        struct ce_event ev = base;
        AUTOFREE char *s = NULL;
        json_t *j;
        char *body = NULL;
        size_t len = 0;

        ev.log_url = "file:///logs";
        s = ce_record_json(&ev);
        cr_assert_not_null(s);
        j = json_loads(s, 0, NULL);
        cr_assert_not_null(j);
        cr_assert_str_eq(json_string_value(json_object_get(j, "id")), "req-1");
        cr_assert_str_eq(json_string_value(json_object_get(j, "reqType")), CE_TYPE_REQUEST);
        cr_assert_str_eq(json_string_value(json_object_get(j, "inferenceService")), "iris");
        cr_assert_str_eq(json_string_value(json_object_get(j, "sourceUri")), base.source);
        cr_assert_str_eq(json_string_value(json_object_get(j, "url")), "file:///logs");
        cr_assert_str_eq(json_string_value(json_object_get(j, "occurrenceTime")),
                         "2026-12-07T04:00:00.123456Z");
        cr_assert_str_eq(json_string_value(json_array_get(
                                 json_object_get(json_object_get(j, "metadata"), "X-User"), 0)),
                         "alice");
        cr_assert_eq(base64_decode(json_string_value(json_object_get(j, "bytes")), &body, &len), 0);
        cr_assert_eq(len, 13);
        cr_assert(memcmp(body, "{\"inputs\":[]}", 13) == 0);
        /* omitempty as Go: no tlsSkipVerify, no certName */
        cr_assert_null(json_object_get(j, "tlsSkipVerify"));
        cr_assert_null(json_object_get(j, "certName"));
        free(body);
        json_decref(j);
}

Test(cloudevent, csv_record_quotes_as_rfc4180)
{
        struct ce_event ev = base;
        AUTOFREE char *s = NULL;

        ev.endpoint = "a,\"b\"";
        ev.metadata_json = "not json";
        s = ce_record_csv(&ev);
        cr_assert_not_null(s);
        cr_assert(strstr(s, ",\"a,\"\"b\"\"\",") != NULL, "%s", s);
        /* bad metadata JSON: an empty column, as KServe's for an unmarshalable map */
        cr_assert(strstr(s, "\"a,\"\"b\"\"\",,\"{\"\"team\"\":\"\"ml\"\"}\",,false\n") != NULL,
                  "%s", s);
        cr_assert(strncmp(ce_record_csv_header(), "url,bytes,contentType,reqType,id,", 33) == 0);
}

Test(cloudevent, batches_as_kserve_embedded_marshallers_write_them)
{
        struct ce_event evs[3] = { base, base, base };
        AUTOFREE char *one = NULL, *single = NULL, *many = NULL, *csv = NULL;
        json_t *a;
        const char *nl;
        size_t lines = 0;

        evs[1].id = "req-2";
        evs[2].id = "req-3";
        evs[2].type = CE_TYPE_RESPONSE;
        /* one record: the object, as marshaller_json.go's batch of 1 */
        one = ce_records_text(evs, 1, false);
        single = ce_record_json(&evs[0]);
        cr_assert_str_eq(one, single);
        /* several: a JSON array of the same objects, in order */
        many = ce_records_text(evs, 3, false);
        a = json_loads(many, 0, NULL);
        cr_assert(json_is_array(a) && json_array_size(a) == 3, "%s", many);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(a, 2), "id")), "req-3");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(a, 2), "reqType")),
                         CE_TYPE_RESPONSE);
        json_decref(a);
        /* csv: the header once, then a line per record */
        csv = ce_records_text(evs, 3, true);
        cr_assert(strncmp(csv, ce_record_csv_header(), strlen(ce_record_csv_header())) == 0);
        for (nl = csv; (nl = strchr(nl, '\n')); nl++)
                lines++;
        cr_assert_eq(lines, 4, "%s", csv);
        cr_assert(strstr(csv, ",req-2,") && strstr(csv, ",req-3,"), "%s", csv);
}

Test(cloudevent, csv_empty_metadata_is_an_empty_column_as_kserve_writes_it)
{
        struct ce_event ev = base;
        AUTOFREE char *s = NULL;

        /* KServe's agent drops an empty map on its way to its marshaller (omitempty) */
        ev.metadata_json = "{}";
        s = ce_record_csv(&ev);
        cr_assert_not_null(s);
        cr_assert(strstr(s, ",default,,\"{\"\"team\"\"") != NULL, "%s", s);
}

Test(cloudevent, marshaller_request_has_go_url_structures)
{
        struct ce_event evs[2] = { base, base };
        AUTOFREE char *s = NULL;
        json_t *a, *u, *src;

        evs[0].log_url = "S3://logs/prefix";
        evs[1].log_url = "http://user:pw@sink.example:8080/a%20b/c?x=1&y=2#frag";
        evs[1].id = "req-2";
        s = ce_marshal_request(evs, 2);
        cr_assert_not_null(s);
        a = json_loads(s, 0, NULL);
        cr_assert(json_is_array(a) && json_array_size(a) == 2, "%s", s);
        /* every field of Go's url.URL, as encoding/json writes the struct */
        u = json_object_get(json_array_get(a, 0), "url");
        cr_assert(json_is_object(u), "%s", s);
        cr_assert_eq(json_object_size(u), 11, "%s", s);
        cr_assert_str_eq(json_string_value(json_object_get(u, "Scheme")), "s3");
        cr_assert_str_eq(json_string_value(json_object_get(u, "Host")), "logs");
        cr_assert_str_eq(json_string_value(json_object_get(u, "Path")), "/prefix");
        cr_assert(json_is_null(json_object_get(u, "User")));
        cr_assert(json_is_false(json_object_get(u, "OmitHost")));
        src = json_object_get(json_array_get(a, 0), "sourceUri");
        cr_assert_str_eq(json_string_value(json_object_get(src, "Scheme")), "http");
        cr_assert_str_eq(json_string_value(json_object_get(src, "Host")), "iris-predictor.default");
        cr_assert_str_eq(json_string_value(json_object_get(src, "Path")), "/");
        /* user information is an empty object (Userinfo's fields are unexported); the path is
         * decoded with its raw form kept; query and fragment apart */
        u = json_object_get(json_array_get(a, 1), "url");
        cr_assert(json_is_object(json_object_get(u, "User")) &&
                  json_object_size(json_object_get(u, "User")) == 0);
        cr_assert_str_eq(json_string_value(json_object_get(u, "Host")), "sink.example:8080");
        cr_assert_str_eq(json_string_value(json_object_get(u, "Path")), "/a b/c");
        cr_assert_str_eq(json_string_value(json_object_get(u, "RawPath")), "/a%20b/c");
        cr_assert_str_eq(json_string_value(json_object_get(u, "RawQuery")), "x=1&y=2");
        cr_assert_str_eq(json_string_value(json_object_get(u, "Fragment")), "frag");
        /* the rest is the record as stored */
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(a, 1), "id")), "req-2");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(a, 1), "occurrenceTime")),
                         "2026-12-07T04:00:00.123456Z");
        json_decref(a);
}

Test(cloudevent, metadata_headers_canonical_and_allow_listed)
{
        const char *allow[] = { "x-user", "X-TENANT" };
        const char *names[] = { "X-User", "x-tenant", "X-Other", "x-user" };
        const char *values[] = { "alice", "t1", "no", "bob" };
        AUTOFREE char *s = ce_metadata_json(allow, 2, names, values, 4);
        AUTOFREE char *none = ce_metadata_json(NULL, 0, names, values, 4);

        cr_assert_str_eq(s, "{\"X-Tenant\":[\"t1\"],\"X-User\":[\"alice\",\"bob\"]}");
        cr_assert_str_eq(none, "{}");
}

Test(cloudevent, annotations_from_kv_items)
{
        const char *items[] = { "team=ml", "bad", "env=a=b", "=x" };
        AUTOFREE char *s = ce_annotations_json(items, 4);

        cr_assert_str_eq(s, "{\"\":\"x\",\"env\":\"a=b\",\"team\":\"ml\"}");
        cr_assert_null(ce_annotations_json(items + 1, 1));
}

Test(cloudevent, store_urls_as_kserve_reads_them)
{
        struct ce_store_url u;

        cr_assert_eq(ce_store_url_parse("s3://logs/a/b/", &u), 0);
        cr_assert_eq(u.store, CE_STORE_S3);
        cr_assert_str_eq(u.bucket, "logs");
        cr_assert_null(u.account);
        cr_assert_str_eq(u.prefix, "a/b");
        ce_store_url_release(&u);
        cr_assert_eq(ce_store_url_parse("gs://logs", &u), 0);
        cr_assert_eq(u.store, CE_STORE_GCS);
        cr_assert_str_eq(u.bucket, "logs");
        cr_assert_str_eq(u.prefix, "");
        ce_store_url_release(&u);
        /* abfs: the bucket is the user part, the account the host's first label */
        cr_assert_eq(ce_store_url_parse("abfs://c1@acct.dfs.core.windows.net//p/", &u), 0);
        cr_assert_eq(u.store, CE_STORE_AZURE);
        cr_assert_str_eq(u.bucket, "c1");
        cr_assert_str_eq(u.account, "acct");
        cr_assert_str_eq(u.prefix, "p");
        ce_store_url_release(&u);
        cr_assert_eq(ce_store_url_parse("abfs://c1@acct", &u), 0);
        cr_assert_str_eq(u.account, "acct");
        ce_store_url_release(&u);
        cr_assert_eq(ce_store_url_parse("file:///var/log/x", &u), 0);
        cr_assert_eq(u.store, CE_STORE_FILE);
        cr_assert_str_eq(u.prefix, "/var/log/x");
        ce_store_url_release(&u);

        cr_assert_eq(ce_store_url_parse("http://sink/", &u), -EPROTONOSUPPORT);
        cr_assert_eq(ce_store_url_parse("s3a://logs", &u), -EPROTONOSUPPORT);
        cr_assert_eq(ce_store_url_parse("abfss://c@a/p", &u), -EPROTONOSUPPORT);
        cr_assert_eq(ce_store_url_parse("s3://", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("s3:///p", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("gs://a b/p", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("s3://logs/a/../b", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("s3://logs/p?x=1", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("abfs://acct/p", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("abfs://@acct/p", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("abfs://c@/p", &u), -EINVAL);
        cr_assert_eq(ce_store_url_parse("file://relative", &u), -EINVAL);
}

Test(cloudevent, record_keys_as_kserve_builds_them)
{
        const char *const all[5] = { "pfx", "default", "iris", "predictor", "sp" };
        const char *const some[5] = { "", NULL, "iris", NULL, "" };
        const char *const none[5] = { NULL, NULL, NULL, NULL, NULL };
        char *key = NULL;

        cr_assert_eq(ce_record_key(all, "req-1", false, "json", &key), 0);
        cr_assert_str_eq(key, "pfx/default/iris/predictor/sp/req-1-request.json");
        free(key);
        cr_assert_eq(ce_record_key(some, "req-1", true, "csv", &key), 0);
        cr_assert_str_eq(key, "iris/req-1-response.csv");
        free(key);
        cr_assert_eq(ce_record_key(none, "x", true, "json", &key), 0);
        cr_assert_str_eq(key, "x-response.json");
        free(key);
        cr_assert_eq(ce_record_key(all, "a/b", false, "json", &key), -EINVAL);
        cr_assert_eq(ce_record_key(all, "..", false, "json", &key), -EINVAL);
        cr_assert_eq(ce_record_key(all, "", false, "json", &key), -EINVAL);
}
