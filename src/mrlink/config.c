/* SPDX-License-Identifier: Apache-2.0 */
#include "mrlink/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-util.h"

bool mrlink_enabled(mrlink_getenv_fn getenv_fn)
{
        const char *v = getenv_fn("INFERENCE_SERVICE_CONTROLLER");

        return v && streq(v, MRLINK_ENABLE_VALUE);
}

int mrlink_parse_go_bool(const char *s, bool *ret)
{
        static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
        static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (streq(s, yes[i])) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (streq(s, no[i])) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

struct mrlink_config *mrlink_config_free(struct mrlink_config *c)
{
        if (!c)
                return NULL;
        free(c->namespace_label);
        free(c->name_label);
        free(c->url_annotation);
        free(c->isid_label);
        free(c->mvid_label);
        free(c->rmid_label);
        free(c->finalizer);
        free(c->service_annotation);
        free(c->registries_namespace);
        free(c->url_rewrite);
        free(c->token_file);
        free(c->ca_file);
        free(c->ca_path);
        free(c);
        return NULL;
}

static int dup_opt(const char *v, char **ret)
{
        if (!v || !*v)
                return 0;
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

int mrlink_config_from_env(mrlink_getenv_fn getenv_fn, struct mrlink_config **ret, char *err,
                           size_t errlen)
{
        CLEANUP(mrlink_config_freep) struct mrlink_config *c = calloc(1, sizeof(*c));
        const char *v;
        uint64_t u;
        bool b;

        if (!c)
                return -ENOMEM;
        const struct {
                const char *name;
                char **field; /* into c */
        } required[] = {
                { "NAMESPACE_LABEL", &c->namespace_label },
                { "NAME_LABEL", &c->name_label },
                { "URL_ANNOTATION", &c->url_annotation },
                { "INFERENCE_SERVICE_ID_LABEL", &c->isid_label },
                { "MODEL_VERSION_ID_LABEL", &c->mvid_label },
                { "REGISTERED_MODEL_ID_LABEL", &c->rmid_label },
                { "FINALIZER", &c->finalizer },
                { "SERVICE_ANNOTATION", &c->service_annotation },
                { "REGISTRIES_NAMESPACE", &c->registries_namespace },
        };

        for (size_t i = 0; i < ELEMENTSOF(required); i++) {
                v = getenv_fn(required[i].name);
                if (!v || !*v) {
                        (void)snprintf(err, errlen, "environment variable %s is not set",
                                       required[i].name);
                        return -EINVAL;
                }
                *required[i].field = strdup(v);
                if (!*required[i].field)
                        return -ENOMEM;
        }
        /* upstream: unparsable or empty is false */
        c->skip_tls_verify = mrlink_parse_go_bool(getenv_fn("SKIP_TLS_VERIFY"), &b) >= 0 && b;

        c->undeploy_timeout = MRLINK_UNDEPLOY_TIMEOUT_DEFAULT;
        v = getenv_fn("MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT");
        if (v && *v) {
                if (parse_duration_usec(v, &u) < 0) {
                        (void)snprintf(err, errlen,
                                       "invalid MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT: %s", v);
                        return -EINVAL;
                }
                c->undeploy_timeout = u;
        }
        if (dup_opt(getenv_fn("MODELPLANE_MRLINK_TEST_URL_REWRITE"), &c->url_rewrite) < 0 ||
            dup_opt(getenv_fn("MODELPLANE_MRLINK_TOKEN_FILE"), &c->token_file) < 0 ||
            dup_opt(getenv_fn("SSL_CERT_FILE"), &c->ca_file) < 0 ||
            dup_opt(getenv_fn("SSL_CERT_DIR"), &c->ca_path) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 0;
}

const char *mrlink_getenv(const char *name)
{
        /* read at start-up; nothing in this process changes its environment */
        return getenv(name); /* NOLINT(concurrency-mt-unsafe) */
}
