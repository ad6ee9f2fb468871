/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "kube/config.h"

/* "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n" etc., base64-encoded */
#define CA_PEM   "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"
#define CA_B64   "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n"
#define CERT_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNFUlQKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define KEY_PEM  "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n"
#define KEY_B64  "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCktFWQotLS0tLUVORCBQUklWQVRFIEtFWS0tLS0tCg=="

static char dir[64];

static void make_dir(void)
{
        (void)snprintf(dir, sizeof(dir), "/tmp/test-kubeconfig-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
}

static const char *write_file(const char *name, const char *content)
{
        static char path[256];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        cr_assert_not_null(f, "cannot create %s", path);
        cr_assert_eq(fputs(content, f) >= 0, true);
        cr_assert_eq(fclose(f), 0);
        return path;
}

static void cleanup_dir(void)
{
        char cmd[128];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        (void)!system(cmd);
}

TestSuite(kubeconfig, .init = make_dir, .fini = cleanup_dir);

/* Loads path; the message goes to err (512 bytes, as struct error_detail's). */
static int load(const char *path, const char *context, struct kube_config **ret, char *err)
{
        struct kube_config_options o = { .kubeconfig_path = path, .context = context };
        struct error_detail e = { 0 };
        int r;

        r = kube_config_load(&o, ret, &e);
        (void)snprintf(err, 512, "%s", e.message);
        return r;
}

/* kube_config_load() with the message copied to err (512 bytes). */
static int load_opts(const struct kube_config_options *o, struct kube_config **ret, char *err)
{
        struct error_detail e = { 0 };
        int r;

        r = kube_config_load(o, ret, &e);
        (void)snprintf(err, 512, "%s", e.message);
        return r;
}

static const char inline_config[] =
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        "- name: other\n"
        "  cluster: {server: 'https://other:1'}\n"
        "- name: main\n"
        "  cluster:\n"
        "    server: https://127.0.0.1:6443/\n"
        "    certificate-authority-data: " CA_B64 "\n"
        "users:\n"
        "- name: certuser\n"
        "  user:\n"
        "    client-certificate-data: " CERT_B64 "\n"
        "    client-key-data: " KEY_B64 "\n"
        "- name: tokenuser\n"
        "  user:\n"
        "    token: abc.def\n"
        "contexts:\n"
        "- name: certs\n"
        "  context: {cluster: main, user: certuser, namespace: team-a}\n"
        "- name: tokens\n"
        "  context: {cluster: main, user: tokenuser}\n"
        "- name: insecure\n"
        "  context: {cluster: other, user: tokenuser}\n"
        "current-context: certs\n";

Test(kubeconfig, inline_data_and_current_context)
{
        struct kube_config *c = NULL;
        char err[512] = "";
        const char *p = write_file("config", inline_config);

        cr_assert_eq(load(p, NULL, &c, err), 0, "%s", err);
        cr_assert_str_eq(c->server, "https://127.0.0.1:6443", "trailing slash is dropped");
        cr_assert_str_eq(c->ca_pem, CA_PEM);
        cr_assert_str_eq(c->client_cert_pem, CERT_PEM);
        cr_assert_str_eq(c->client_key_pem, KEY_PEM);
        cr_assert_null(c->token);
        cr_assert_str_eq(c->namespace, "team-a");
        cr_assert_str_eq(c->source, p);
        cr_assert_eq(c->insecure_skip_tls_verify, false);
        kube_config_free(c);
}

Test(kubeconfig, context_override_and_default_namespace)
{
        struct kube_config *c = NULL;
        char err[512] = "";
        const char *p = write_file("config", inline_config);

        cr_assert_eq(load(p, "tokens", &c, err), 0, "%s", err);
        cr_assert_str_eq(c->token, "abc.def");
        cr_assert_null(c->client_cert_pem);
        cr_assert_str_eq(c->namespace, "default");
        c = kube_config_free(c);

        cr_assert_eq(load(p, "insecure", &c, err), 0, "%s", err);
        cr_assert_str_eq(c->server, "https://other:1");
        cr_assert_null(c->ca_pem, "no CA means the system trust store");
        kube_config_free(c);

        cr_assert_eq(load(p, "nope", &c, err), -EINVAL);
        cr_assert(strstr(err, "contexts") && strstr(err, "\"nope\""), "%s", err);
}

Test(kubeconfig, files_relative_to_the_kubeconfig)
{
        struct kube_config *c = NULL;
        char err[512] = "";
        char abs_ca[256];
        const char *p;

        (void)snprintf(abs_ca, sizeof(abs_ca), "%s/pki", dir);
        cr_assert_eq(mkdir(abs_ca, 0700), 0);
        write_file("pki/ca.crt", CA_PEM);
        write_file("pki/me.crt", CERT_PEM);
        write_file("pki/me.key", KEY_PEM);
        write_file("token", "  secret-token\n");
        (void)snprintf(abs_ca, sizeof(abs_ca), "%s/pki/ca.crt", dir);
        {
                char cfg[1024];

                (void)snprintf(cfg, sizeof(cfg),
                               "clusters:\n- name: c\n  cluster:\n    server: https://h:1\n"
                               "    certificate-authority: %s\n"
                               "    insecure-skip-tls-verify: true\n"
                               "users:\n- name: u\n  user:\n"
                               "    client-certificate: pki/me.crt\n"
                               "    client-key: pki/me.key\n"
                               "    tokenFile: token\n"
                               "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                               "current-context: x\n",
                               abs_ca);
                p = write_file("config", cfg);
        }

        cr_assert_eq(load(p, NULL, &c, err), 0, "%s", err);
        cr_assert_str_eq(c->ca_pem, CA_PEM);
        cr_assert_str_eq(c->client_cert_pem, CERT_PEM);
        cr_assert_str_eq(c->client_key_pem, KEY_PEM);
        cr_assert_str_eq(c->token, "secret-token", "token from tokenFile, whitespace stripped");
        cr_assert_not_null(c->token_file);
        cr_assert(strstr(c->token_file, dir) == c->token_file, "tokenFile made absolute: %s",
                  c->token_file);
        cr_assert_eq(c->insecure_skip_tls_verify, true);
        kube_config_free(c);
}

/* Each malformed file must fail with a message naming the file, the field and (where there is
 * one) the line. */
Test(kubeconfig, malformed_files_name_file_field_and_line)
{
        static const struct {
                const char *yaml;
                const char *field;
                const char *line; /* ":N:" expected in the message, or NULL */
        } cases[] = {
                { "clusters: [\n  - name: x\n", "invalid YAML", NULL },
                { "- just\n- a list\n", "top level", ":1:" },
                { "current-context: a\ncontexts: {a: b}\n", "field contexts: expected a list",
                  ":2:" },
                { "contexts:\n- name: a\n  context: {cluster: c}\n", "current-context", NULL },
                { "current-context: a\ncontexts:\n- name: a\n  context: {user: u}\n",
                  "contexts[a].context.cluster: missing", ":4:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                  "clusters:\n- name: c\n  cluster: {}\n",
                  "clusters[c].cluster.server: missing", ":7:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                  "clusters:\n- name: c\n  cluster: {server: ftp://x}\n",
                  "clusters[c].cluster.server", ":7:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                  "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
                  "    certificate-authority-data: '!!notbase64!!'\n",
                  "clusters[c].cluster.certificate-authority-data: invalid base64", ":9:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                  "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                  "users:\n- name: u\n  user:\n    client-key: /nonexistent/key.pem\n"
                  "    client-certificate-data: " CERT_B64 "\n",
                  "users[u].user.client-key: cannot read \"/nonexistent/key.pem\"", ":11:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                  "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                  "users:\n- name: u\n  user:\n    client-certificate-data: " CERT_B64 "\n",
                  "users[u].user.client-key: missing", NULL },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                  "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                  "users:\n- name: u\n  user:\n    exec: {command: aws}\n",
                  "users[u].user.exec: not supported", ":11:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                  "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                  "users:\n- name: v\n  user: {token: t}\n",
                  "field users: no entry named \"u\"", ":9:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                  "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
                  "    insecure-skip-tls-verify: maybe\n",
                  "clusters[c].cluster.insecure-skip-tls-verify: expected true or false", ":9:" },
                { "current-context: a\ncontexts:\n- name: a\n  context: {cluster: [c]}\n",
                  "contexts[a].context.cluster: expected a string", ":4:" },
                { "kind: Pod\n", "field kind", ":1:" },
                { "", "empty document", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct kube_config *c = NULL;
                char err[512] = "";
                const char *p = write_file("bad-config", cases[i].yaml);
                int r = load(p, NULL, &c, err);

                cr_assert_lt(r, 0, "case %zu must fail", i);
                cr_assert_null(c);
                cr_assert(strstr(err, p) == err, "case %zu: message must start with the file: %s",
                          i, err);
                cr_assert(strstr(err, cases[i].field), "case %zu: expected \"%s\" in \"%s\"", i,
                          cases[i].field, err);
                if (cases[i].line)
                        cr_assert(strstr(err, cases[i].line), "case %zu: expected line %s in %s", i,
                                  cases[i].line, err);
        }
}

Test(kubeconfig, yaml_syntax_error_has_line_and_column)
{
        struct kube_config *c = NULL;
        char err[512] = "";
        const char *p = write_file("config", "current-context: a\nclusters:\n  - name: \"x\n");

        cr_assert_eq(load(p, NULL, &c, err), -EINVAL);
        cr_assert(strstr(err, "invalid YAML"), "%s", err);
        cr_assert(strstr(err, ":4:") || strstr(err, ":3:"), "line of the problem: %s", err);
        {
                unsigned line = 0, column = 0;
                int used = 0;

                cr_assert(strncmp(err, p, strlen(p)) == 0, "%s", err);
                cr_assert_eq(sscanf(err + strlen(p), ":%u:%u: invalid YAML%n", &line, &column,
                                    &used),
                             2, "file:line:column: %s", err);
                cr_assert(used > 0 && line > 0 && column > 0, "%s", err);
        }
}

Test(kubeconfig, missing_file)
{
        struct kube_config *c = NULL;
        char err[512] = "";

        cr_assert_eq(load("/nonexistent/kubeconfig", NULL, &c, err), -ENOENT);
        cr_assert(strstr(err, "/nonexistent/kubeconfig"), "%s", err);
}

Test(kubeconfig, kubeconfig_env_takes_first_existing)
{
        struct kube_config *c = NULL;
        char err[512] = "";
        char env[512];
        const char *p = write_file("config", inline_config);

        (void)snprintf(env, sizeof(env), "/nonexistent/a:%s:/nonexistent/b", p);
        cr_assert_eq(setenv("KUBECONFIG", env, 1), 0);
        cr_assert_eq(load_opts(NULL, &c, err), 0, "%s", err);
        cr_assert_str_eq(c->source, p);
        kube_config_free(c);
}

Test(kubeconfig, home_fallback_and_nothing_found)
{
        struct kube_config *c = NULL;
        char err[512] = "";
        char kdir[256];

        (void)unsetenv("KUBECONFIG");
        (void)unsetenv("KUBERNETES_SERVICE_HOST");
        cr_assert_eq(setenv("HOME", dir, 1), 0);
        cr_assert_eq(load_opts(NULL, &c, err), -ENOENT);
        cr_assert(strstr(err, "no Kubernetes configuration"), "%s", err);

        (void)snprintf(kdir, sizeof(kdir), "%s/.kube", dir);
        cr_assert_eq(mkdir(kdir, 0700), 0);
        write_file(".kube/config", inline_config);
        cr_assert_eq(load_opts(NULL, &c, err), 0, "%s", err);
        cr_assert(strstr(c->source, "/.kube/config"));
        kube_config_free(c);
}

Test(kubeconfig, in_cluster)
{
        struct kube_config_options o = { .in_cluster_root = dir };
        struct kube_config *c = NULL;
        char err[512] = "";

        (void)unsetenv("KUBECONFIG");
        cr_assert_eq(setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1), 0);
        cr_assert_eq(setenv("KUBERNETES_SERVICE_PORT", "443", 1), 0);

        cr_assert_eq(load_opts(&o, &c, err), -ENOENT, "no token file yet");
        cr_assert(strstr(err, "token"), "%s", err);

        write_file("token", "sa-token\n");
        write_file("ca.crt", CA_PEM);
        write_file("namespace", "modelplane-system");
        cr_assert_eq(load_opts(&o, &c, err), 0, "%s", err);
        cr_assert_str_eq(c->server, "https://10.0.0.1:443");
        cr_assert_str_eq(c->token, "sa-token");
        cr_assert(strstr(c->token_file, "/token"), "token file kept for rotation");
        cr_assert_str_eq(c->ca_pem, CA_PEM);
        cr_assert_str_eq(c->namespace, "modelplane-system");
        kube_config_free(c);

        cr_assert_eq(setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1), 0);
        cr_assert_eq(load_opts(&o, &c, err), 0, "%s", err);
        cr_assert_str_eq(c->server, "https://[fd00::1]:443");
        kube_config_free(c);
}

Test(kubeconfig, parse_from_memory_without_files)
{
        static const char with_file[] = "current-context: x\n"
                                        "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                                        "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
                                        "users:\n- name: u\n  user:\n    tokenFile: /etc/passwd\n";
        struct kube_config *c = NULL;
        struct error_detail e = { 0 };
        const char *err = e.message;

        cr_assert_eq(kube__config_parse("mem", inline_config, strlen(inline_config), NULL,
                                        /* allow_files= */ false, &c, &e),
                     0, "%s", err);
        cr_assert_str_eq(c->source, "mem");
        cr_assert_str_eq(c->client_key_pem, KEY_PEM);
        kube_config_free(c);
        c = NULL;

        cr_assert_eq(kube__config_parse("mem", with_file, strlen(with_file), NULL, false, &c, &e),
                     -EPERM);
        cr_assert_eq(e.error, -EPERM);
        cr_assert_null(c);
        cr_assert(strstr(err,
                         "mem:11: field users[u].user.tokenFile: file references are disabled"),
                  "%s", err);
}
