/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "mrlink/config.h"

static const char *const params_env[][2] = {
        { "NAMESPACE_LABEL", "modelregistry.kubeflow.org/namespace" },
        { "NAME_LABEL", "modelregistry.kubeflow.org/name" },
        { "URL_ANNOTATION", "modelregistry.kubeflow.org/url" },
        { "INFERENCE_SERVICE_ID_LABEL", "modelregistry.kubeflow.org/inference-service-id" },
        { "MODEL_VERSION_ID_LABEL", "modelregistry.kubeflow.org/model-version-id" },
        { "REGISTERED_MODEL_ID_LABEL", "modelregistry.kubeflow.org/registered-model-id" },
        { "FINALIZER", "modelregistry.kubeflow.org/finalizer" },
        { "SERVICE_ANNOTATION", "routing.kubeflow.org/external-address-rest" },
        { "REGISTRIES_NAMESPACE", "kubeflow" },
        { "SKIP_TLS_VERIFY", "false" },
        { "INFERENCE_SERVICE_CONTROLLER", "managed" },
};

static const char *override_name, *override_value;

static const char *fake_env(const char *name)
{
        if (override_name && strcmp(name, override_name) == 0)
                return override_value;
        for (size_t i = 0; i < sizeof(params_env) / sizeof(params_env[0]); i++)
                if (strcmp(params_env[i][0], name) == 0)
                        return params_env[i][1];
        return NULL;
}

static void set_override(const char *n, const char *v)
{
        override_name = n;
        override_value = v;
}

Test(config, params_env)
{
        struct mrlink_config *c = NULL;
        char err[256] = "";

        set_override(NULL, NULL);
        cr_assert(mrlink_enabled(fake_env));
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), 0, "%s", err);
        cr_assert_str_eq(c->isid_label, "modelregistry.kubeflow.org/inference-service-id");
        cr_assert_str_eq(c->finalizer, "modelregistry.kubeflow.org/finalizer");
        cr_assert_str_eq(c->registries_namespace, "kubeflow");
        cr_assert_not(c->skip_tls_verify);
        cr_assert_eq(c->undeploy_timeout, MRLINK_UNDEPLOY_TIMEOUT_DEFAULT);
        cr_assert_null(c->url_rewrite);
        mrlink_config_free(c);
}

Test(config, enable_is_exact)
{
        set_override("INFERENCE_SERVICE_CONTROLLER", "Managed");
        cr_assert_not(mrlink_enabled(fake_env));
        set_override("INFERENCE_SERVICE_CONTROLLER", NULL);
        cr_assert_not(mrlink_enabled(fake_env));
}

Test(config, required_empty_fails_with_name)
{
        struct mrlink_config *c = NULL;
        char err[256] = "";

        set_override("FINALIZER", "");
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "FINALIZER"), "%s", err);
        cr_assert_null(c);
}

Test(config, skip_tls_verify_go_parse_bool)
{
        static const struct {
                const char *v;
                bool want;
        } cases[] = { { "1", true },    { "t", true },    { "T", true },       { "TRUE", true },
                      { "true", true }, { "True", true }, { "yes", false },    { "tRuE", false },
                      { "0", false },   { "", false },    { "garbage", false } };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct mrlink_config *c = NULL;
                char err[256];

                set_override("SKIP_TLS_VERIFY", cases[i].v);
                cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), 0);
                cr_assert_eq(c->skip_tls_verify, cases[i].want, "%s", cases[i].v);
                mrlink_config_free(c);
        }
}

Test(config, undeploy_timeout)
{
        struct mrlink_config *c = NULL;
        char err[256];

        set_override("MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT", "5s");
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), 0);
        cr_assert_eq(c->undeploy_timeout, 5 * USEC_PER_SEC);
        mrlink_config_free(c);
        c = NULL;
        set_override("MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT", "soon");
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT"));
}

/* SSL_CERT_FILE / SSL_CERT_DIR, as Go reads them: the registry client's CA bundle and CA
 * directories; empty is unset; neither touches SKIP_TLS_VERIFY. */
Test(config, ssl_cert_file_and_dir)
{
        struct mrlink_config *c = NULL;
        char err[256];

        set_override(NULL, NULL);
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), 0);
        cr_assert_null(c->ca_file, "unset: libcurl's default bundle");
        cr_assert_null(c->ca_path);
        mrlink_config_free(c);

        set_override("SSL_CERT_FILE", "/etc/mr/ca.crt");
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), 0);
        cr_assert_str_eq(c->ca_file, "/etc/mr/ca.crt");
        cr_assert_null(c->ca_path);
        cr_assert_not(c->skip_tls_verify, "a CA never turns verification off");
        mrlink_config_free(c);

        set_override("SSL_CERT_DIR", "/etc/mr/certs:/etc/ssl/certs");
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), 0);
        cr_assert_null(c->ca_file);
        cr_assert_str_eq(c->ca_path, "/etc/mr/certs:/etc/ssl/certs", "the list is passed whole");
        mrlink_config_free(c);

        set_override("SSL_CERT_FILE", "");
        cr_assert_eq(mrlink_config_from_env(fake_env, &c, err, sizeof(err)), 0);
        cr_assert_null(c->ca_file, "empty is unset, as in Go");
        mrlink_config_free(c);
}
