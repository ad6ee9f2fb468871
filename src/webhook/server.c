/* SPDX-License-Identifier: Apache-2.0 */
#include "webhook/server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/server.h"
#include "serving/webhook-rules.h"
#include "util/log.h"
#include "util/macro.h"
#include "webhook/admission.h"

/* The HTTP layer's 413 answer (sent before the body is read), shaped as a review. */
#define TOO_LARGE_REVIEW                                                                   \
        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"" ADMISSION_V1 "\",\"response\":{" \
        "\"uid\":\"\",\"allowed\":false,\"status\":{\"metadata\":{},\"message\":"          \
        "\"request body is larger than 7 MiB\",\"code\":413}}}\n"

struct webhook_server {
        struct http_server *http;
        admission_validate_fn *validate;
};

/* tm_validate_admission() returns its own enum; both name the same three verdicts. */
_Static_assert((int)TM_ADMISSION_ALLOWED == (int)ADMISSION_ALLOWED, "verdict mismatch");
_Static_assert((int)TM_ADMISSION_DENIED == (int)ADMISSION_DENIED, "verdict mismatch");
_Static_assert((int)TM_ADMISSION_BAD_REQUEST == (int)ADMISSION_BAD_REQUEST, "verdict mismatch");

static int on_request(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct webhook_server *s = userdata;
        struct admission_answer a = { 0 };
        int r;

        if (!streq(req->path, WEBHOOK_PATH) && !streq(req->path, WEBHOOK_PATH_ALIAS)) {
                http_resp_set_json(resp, 404,
                                   json_pack("{s:s,s:i}", "message", "not found", "code", 404));
                return 0;
        }
        if (!streq(req->method, "POST")) {
                http_resp_set_json(resp, 405,
                                   json_pack("{s:s,s:i}", "message", "method not allowed", "code",
                                             405));
                return http_resp_add_header(resp, "Allow", "POST");
        }

        r = webhook_review(http_req_header(req, "Content-Type"), req->body.p ? req->body.p : "",
                           req->body.len, s->validate, &a);
        if (r < 0)
                return log_error_errno(r, "admission review failed: %s", errno_to_string(r));
        log_debug("answered %s review: http %u, allowed %s, code %d", a.api_version, a.http_status,
                  a.allowed ? "true" : "false", a.code);
        http_resp_set_text(resp, a.http_status, "application/json", a.body);
        admission_answer_release(&a);
        return 0;
}

static int path_join(const char *dir, const char *name, char **ret)
{
        char *p;

        if (asprintf(&p, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        *ret = p;
        return 0;
}

int webhook_server_start(const struct webhook_server_config *cfg, struct webhook_server **ret)
{
        AUTOFREE char *cert = NULL, *key = NULL;
        struct webhook_server *s;
        struct http_server_config hc = { HTTP_SERVER_CONFIG_DEFAULTS };
        int r;

        if (!cfg || !cfg->cert_dir || !ret)
                return -EINVAL;
        r = path_join(cfg->cert_dir, cfg->cert_name ? cfg->cert_name : "tls.crt", &cert);
        if (r < 0)
                return r;
        r = path_join(cfg->cert_dir, cfg->key_name ? cfg->key_name : "tls.key", &key);
        if (r < 0)
                return r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->validate = cfg->validate ? cfg->validate : tm_validate_admission;

        hc.address = cfg->address;
        hc.port = cfg->port;
        hc.body_max = ADMISSION_BODY_MAX;
        hc.connection_timeout = cfg->connection_timeout ? cfg->connection_timeout : 10;
        /* a review is one small request: cut off a client that trickles it */
        hc.request_timeout = MAX(30U, 3U * hc.connection_timeout);
        if (cfg->max_connections)
                hc.max_connections = cfg->max_connections;
        hc.threads = 4; /* reviews are CPU only; handshakes never hold a thread */
        hc.handler = on_request;
        hc.userdata = s;
        hc.tls_cert_file = cert;
        hc.tls_key_file = key;
        hc.too_large_json = TOO_LARGE_REVIEW;
        r = http_server_start(&hc, &s->http);
        if (r < 0) {
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

struct webhook_server *webhook_server_free(struct webhook_server *s)
{
        if (!s)
                return NULL;
        http_server_free(s->http);
        free(s);
        return NULL;
}

uint16_t webhook_server_port(const struct webhook_server *s)
{
        return http_server_port(s->http);
}

uint64_t webhook_server_cert_generation(struct webhook_server *s)
{
        return http_server_tls_generation(s->http);
}
