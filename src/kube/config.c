/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json/yaml-doc.h"
#include "util/base64.h"
#include "util/file-util.h"
#include "util/string-util.h"

/* A kubeconfig is a few KiB; inline PEM blobs make it bigger, 4 MiB is plenty. */
#define KUBECONFIG_MAX ((size_t)4 * 1024 * 1024)
/* CA bundles, certificates, keys and tokens read from files. */
#define KUBE_CRED_FILE_MAX ((size_t)4 * 1024 * 1024)
/* How many entries of clusters/users/contexts we look at. */
#define KUBECONFIG_LIST_MAX 4096

#define IN_CLUSTER_ROOT_DEFAULT "/var/run/secrets/kubernetes.io/serviceaccount"

static void *mfree(void *p)
{
        free(p);
        return NULL;
}

struct kube_config *kube_config_free(struct kube_config *c)
{
        if (!c)
                return NULL;
        free(c->server);
        if (c->ca_pem)
                explicit_bzero(c->ca_pem, strlen(c->ca_pem));
        free(c->ca_pem);
        free(c->client_cert_pem);
        if (c->client_key_pem)
                explicit_bzero(c->client_key_pem, strlen(c->client_key_pem));
        free(c->client_key_pem);
        if (c->token)
                explicit_bzero(c->token, strlen(c->token));
        free(c->token);
        free(c->token_file);
        free(c->namespace);
        free(c->source);
        free(c);
        return NULL;
}

/* strerror() is banned (not thread-safe); GNU strerror_r into a caller buffer. */
#define ERRSTR(r) strerror_r(-(r), (char[128]){ 0 }, 128)

/* The kubeconfig's bounds: 4 MiB of text, shallow, a few thousand nodes per list. */
static const struct yaml_limits kubeconfig_limits = {
        .size_max = KUBECONFIG_MAX,
        .depth_max = 32,
        .nodes_max = (size_t)1024 * 1024,
        .cpu_usec_max = 2ULL * 1000000ULL,
};

/* Fills e with the whole message (it names the file and line itself) and returns r. */
_printf_(3, 4) static int cfg_error(struct error_detail *e, int r, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        r = error_detail_setv(e, r == -ENOMEM ? ERROR_INTERNAL : ERROR_INVALID, r, NULL, fmt, ap);
        va_end(ap);
        return r;
}

/*
 * Reads a whole file of at most max bytes into an owned NUL-terminated string, with this file's
 * codes: -E2BIG when it is larger (as kube__config_parse), -EBADMSG when it holds a NUL byte.
 */
static int read_cfg_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
        int r = read_file_bounded(path, max, READ_FILE_REFUSE_NUL, ret, ret_len, NULL);

        return r == -EFBIG ? -E2BIG : r;
}

/*
 * Decodes kubeconfig base64 into an owned, NUL-terminated string: whitespace is ignored, padding
 * is optional and the URL-safe letters '-' and '_' are accepted. The text is normalised to what
 * util/base64 takes (standard alphabet, padded). -EINVAL on invalid input or a decoded NUL byte
 * (PEM and tokens are text).
 */
static int base64_decode_text(const char *in, char **ret)
{
        size_t n = strlen(in), o = 0, pad = 0, len = 0;
        AUTOFREE char *norm = malloc(n + 4), *out = NULL;
        int r;

        if (!norm)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char c = in[i];

                if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
                        continue;
                if (c == '=') {
                        pad++;
                        continue;
                }
                if (pad > 0)
                        return -EINVAL; /* data after padding */
                if (c == '-')
                        c = '+'; /* the URL-safe alphabet */
                else if (c == '_')
                        c = '/';
                norm[o++] = c;
        }
        if (pad > 2 || o % 4 == 1)
                return -EINVAL;
        while (o % 4 != 0)
                norm[o++] = '=';
        norm[o] = '\0';
        r = base64_decode(norm, &out, &len);
        if (r < 0)
                return r;
        if (strlen(out) != len)
                return -EINVAL;
        *ret = TAKE_PTR(out);
        return 0;
}

struct kcfg {
        const char *file; /* borrowed */
        const char *dir;  /* borrowed; directory of file, for relative paths */
        struct ydoc doc;
        struct error_detail *err; /* borrowed; the caller's, may be NULL */
        bool no_files;            /* file references are errors (fuzzing) */
};

static size_t node_line(const yaml_node_t *n)
{
        return ynode_line(n);
}

/* Borrowed value of key in mapping node map, NULL when absent or null. */
static yaml_node_t *map_get(struct kcfg *k, yaml_node_t *map, const char *key)
{
        return ydoc_map_get(&k->doc, map, key);
}

/* *ret = borrowed string value of map.key (NULL if absent). -EINVAL with a message naming
 * where.key when present but not a scalar. */
static int get_string(struct kcfg *k, yaml_node_t *map, const char *where, const char *key,
                      const char **ret)
{
        yaml_node_t *v = map_get(k, map, key);

        if (!v) {
                *ret = NULL;
                return 0;
        }
        if (v->type != YAML_SCALAR_NODE)
                return cfg_error(k->err, -EINVAL, "%s:%zu: field %s.%s: expected a string", k->file,
                                 node_line(v), where, key);
        *ret = (const char *)v->data.scalar.value;
        return 0;
}

static int get_bool(struct kcfg *k, yaml_node_t *map, const char *where, const char *key, bool *ret)
{
        const char *s = NULL;
        int r;

        r = get_string(k, map, where, key, &s);
        if (r < 0)
                return r;
        if (!s) {
                *ret = false;
                return 0;
        }
        if (yaml_parse_bool(s, ret) == 0)
                return 0;
        return cfg_error(k->err, -EINVAL, "%s:%zu: field %s.%s: expected true or false, got \"%s\"",
                         k->file, node_line(map_get(k, map, key)), where, key, s);
}

/*
 * Finds the entry of list list_key (clusters/users/contexts) whose name is name and returns its
 * inner mapping (the value of inner_key) as a borrowed node.
 */
static int find_named(struct kcfg *k, yaml_node_t *root, const char *list_key, const char *name,
                      const char *inner_key, yaml_node_t **ret)
{
        yaml_node_t *list = map_get(k, root, list_key);
        yaml_node_item_t *item;
        size_t i = 0;

        if (!list)
                return cfg_error(k->err, -EINVAL, "%s: field %s: missing, but \"%s\" is referenced",
                                 k->file, list_key, name);
        if (list->type != YAML_SEQUENCE_NODE)
                return cfg_error(k->err, -EINVAL, "%s:%zu: field %s: expected a list", k->file,
                                 node_line(list), list_key);

        for (item = list->data.sequence.items.start; item < list->data.sequence.items.top;
             item++, i++) {
                yaml_node_t *e = ydoc_node(&k->doc, *item);
                yaml_node_t *inner;
                const char *n = NULL;
                char where[64];
                int r;

                if (i >= KUBECONFIG_LIST_MAX)
                        break;
                (void)snprintf(where, sizeof(where), "%s[%zu]", list_key, i);
                if (!e || e->type != YAML_MAPPING_NODE)
                        return cfg_error(k->err, -EINVAL, "%s:%zu: field %s: expected a mapping",
                                         k->file, e ? node_line(e) : node_line(list), where);
                r = get_string(k, e, where, "name", &n);
                if (r < 0)
                        return r;
                if (!n || !streq(n, name))
                        continue;
                inner = map_get(k, e, inner_key);
                if (!inner)
                        return cfg_error(k->err, -EINVAL, "%s:%zu: field %s.%s: missing", k->file,
                                         node_line(e), where, inner_key);
                if (inner->type != YAML_MAPPING_NODE)
                        return cfg_error(k->err, -EINVAL, "%s:%zu: field %s.%s: expected a mapping",
                                         k->file, node_line(inner), where, inner_key);
                *ret = inner;
                return 0;
        }
        return cfg_error(k->err, -EINVAL, "%s:%zu: field %s: no entry named \"%s\"", k->file,
                         node_line(list), list_key, name);
}

/* Resolves a path from the kubeconfig relative to the kubeconfig's directory. */
static int resolve_path(struct kcfg *k, const char *path, char **ret)
{
        return path_resolve(k->dir, path, ret);
}

/* The error for a file reference when files are disabled. */
static int no_files_error(struct kcfg *k, yaml_node_t *map, const char *where, const char *key)
{
        return cfg_error(k->err, -EPERM, "%s:%zu: field %s.%s: file references are disabled",
                         k->file, node_line(map_get(k, map, key)), where, key);
}

/*
 * Reads credential material from where.<data_key> (base64, inline) or where.<file_key> (a path).
 * *ret stays NULL when neither is set.
 */
static int load_blob(struct kcfg *k, yaml_node_t *map, const char *where, const char *data_key,
                     const char *file_key, char **ret)
{
        const char *data = NULL, *file = NULL;
        int r;

        r = get_string(k, map, where, data_key, &data);
        if (r < 0)
                return r;
        r = get_string(k, map, where, file_key, &file);
        if (r < 0)
                return r;

        if (data) {
                r = base64_decode_text(data, ret);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return cfg_error(k->err, r, "%s:%zu: field %s.%s: invalid base64", k->file,
                                         node_line(map_get(k, map, data_key)), where, data_key);
                return 0;
        }
        if (file) {
                AUTOFREE char *path = NULL;

                if (k->no_files)
                        return no_files_error(k, map, where, file_key);

                r = resolve_path(k, file, &path);
                if (r < 0)
                        return r;
                r = read_cfg_file(path, KUBE_CRED_FILE_MAX, ret, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        return cfg_error(k->err, r, "%s:%zu: field %s.%s: cannot read \"%s\": %s",
                                         k->file, node_line(map_get(k, map, file_key)), where,
                                         file_key, path, ERRSTR(r));
                }
        }
        return 0;
}

/* Strips surrounding whitespace (tokens in files usually end with a newline). */
static void strip(char *s)
{
        size_t n = strlen(s), i = 0;

        while (n > 0 &&
               (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
                s[--n] = '\0';
        while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
                i++;
        if (i > 0)
                memmove(s, s + i, n - i + 1);
}

static int load_cluster(struct kcfg *k, yaml_node_t *root, const char *name, struct kube_config *c)
{
        yaml_node_t *cl;
        const char *server = NULL;
        char where[128];
        size_t n;
        int r;

        r = find_named(k, root, "clusters", name, "cluster", &cl);
        if (r < 0)
                return r;
        (void)snprintf(where, sizeof(where), "clusters[%s].cluster", name);

        r = get_string(k, cl, where, "server", &server);
        if (r < 0)
                return r;
        if (!server)
                return cfg_error(k->err, -EINVAL, "%s:%zu: field %s.server: missing", k->file,
                                 node_line(cl), where);
        if (!strneq(server, "https://", 8) && !strneq(server, "http://", 7))
                return cfg_error(k->err, -EINVAL,
                                 "%s:%zu: field %s.server: \"%s\" is not an http(s) URL", k->file,
                                 node_line(map_get(k, cl, "server")), where, server);
        c->server = strdup(server);
        if (!c->server)
                return -ENOMEM;
        n = strlen(c->server);
        while (n > 0 && c->server[n - 1] == '/')
                c->server[--n] = '\0';

        r = load_blob(k, cl, where, "certificate-authority-data", "certificate-authority",
                      &c->ca_pem);
        if (r < 0)
                return r;
        return get_bool(k, cl, where, "insecure-skip-tls-verify", &c->insecure_skip_tls_verify);
}

static int load_user(struct kcfg *k, yaml_node_t *root, const char *name, struct kube_config *c)
{
        static const char *const unsupported[] = { "exec", "auth-provider", "username",
                                                   "password" };
        yaml_node_t *u;
        const char *token = NULL, *token_file = NULL;
        char where[128];
        int r;

        r = find_named(k, root, "users", name, "user", &u);
        if (r < 0)
                return r;
        (void)snprintf(where, sizeof(where), "users[%s].user", name);

        for (size_t i = 0; i < ELEMENTSOF(unsupported); i++) {
                yaml_node_t *v = map_get(k, u, unsupported[i]);

                if (v)
                        return cfg_error(k->err, -EOPNOTSUPP,
                                         "%s:%zu: field %s.%s: not supported by modelplane "
                                         "(use a token or a client certificate)",
                                         k->file, node_line(v), where, unsupported[i]);
        }

        r = load_blob(k, u, where, "client-certificate-data", "client-certificate",
                      &c->client_cert_pem);
        if (r < 0)
                return r;
        r = load_blob(k, u, where, "client-key-data", "client-key", &c->client_key_pem);
        if (r < 0)
                return r;
        if (!!c->client_cert_pem != !!c->client_key_pem)
                return cfg_error(k->err, -EINVAL,
                                 "%s:%zu: field %s.%s: missing (a client certificate needs a key "
                                 "and a key needs a certificate)",
                                 k->file, node_line(u), where,
                                 c->client_cert_pem ? "client-key" : "client-certificate");

        r = get_string(k, u, where, "token", &token);
        if (r < 0)
                return r;
        r = strdup_opt(token, &c->token);
        if (r < 0)
                return r;

        r = get_string(k, u, where, "tokenFile", &token_file);
        if (r < 0)
                return r;
        if (token_file) {
                AUTOFREE char *t = NULL;

                if (k->no_files)
                        return no_files_error(k, u, where, "tokenFile");

                r = resolve_path(k, token_file, &c->token_file);
                if (r < 0)
                        return r;
                /* Read once now so that a missing file is a configuration error. */
                r = read_cfg_file(c->token_file, KUBE_CRED_FILE_MAX, &t, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        return cfg_error(k->err, r,
                                         "%s:%zu: field %s.tokenFile: cannot read \"%s\": %s",
                                         k->file, node_line(map_get(k, u, "tokenFile")), where,
                                         c->token_file, ERRSTR(r));
                }
                if (!c->token) {
                        strip(t);
                        c->token = TAKE_PTR(t);
                }
        }
        return 0;
}

/* The directory of file (relative paths in it are relative to that), NULL for a bare name. */
static int parent_dir(const char *file, char **ret)
{
        char *dir = strdup(file), *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash)
                *slash = '\0';
        else
                dir = mfree(dir);
        *ret = dir;
        return 0;
}

/* The document's root: a mapping whose kind, when present, is "Config". */
static int config_root(struct kcfg *k, yaml_node_t **ret)
{
        yaml_node_t *root = ydoc_root(&k->doc), *v;

        if (!root)
                return cfg_error(k->err, -EINVAL, "%s: empty document", k->file);
        if (root->type != YAML_MAPPING_NODE)
                return cfg_error(k->err, -EINVAL, "%s:%zu: top level: expected a mapping", k->file,
                                 node_line(root));
        v = map_get(k, root, "kind");
        if (v &&
            (v->type != YAML_SCALAR_NODE || !streq((const char *)v->data.scalar.value, "Config")))
                return cfg_error(k->err, -EINVAL, "%s:%zu: field kind: expected \"Config\"",
                                 k->file, node_line(v));
        *ret = root;
        return 0;
}

struct context_names {
        const char *cluster; /* borrowed from the document; never NULL on success */
        const char *user;    /* borrowed; NULL when the context names none */
        const char *ns;      /* borrowed; NULL when the context names none */
};

/* The names in the chosen context (context_override, else current-context). */
static int read_context(struct kcfg *k, yaml_node_t *root, const char *context_override,
                        struct context_names *ret)
{
        const char *context = context_override;
        struct context_names n = { 0 };
        yaml_node_t *ctx;
        char where[128];
        int r;

        if (!context) {
                r = get_string(k, root, "", "current-context", &context);
                if (r < 0)
                        return r;
                if (!context)
                        return cfg_error(k->err, -EINVAL,
                                         "%s: field current-context: missing (and no context "
                                         "was given)",
                                         k->file);
        }
        r = find_named(k, root, "contexts", context, "context", &ctx);
        if (r < 0)
                return r;
        (void)snprintf(where, sizeof(where), "contexts[%s].context", context);
        r = get_string(k, ctx, where, "cluster", &n.cluster);
        if (r < 0)
                return r;
        if (!n.cluster)
                return cfg_error(k->err, -EINVAL, "%s:%zu: field %s.cluster: missing", k->file,
                                 node_line(ctx), where);
        r = get_string(k, ctx, where, "user", &n.user);
        if (r < 0)
                return r;
        r = get_string(k, ctx, where, "namespace", &n.ns);
        if (r < 0)
                return r;
        *ret = n;
        return 0;
}

/* The walk of a loaded document: the context's cluster and user. */
static int config_walk(struct kcfg *k, const char *context_override, struct kube_config **ret)
{
        CLEANUP(kube_config_freep) struct kube_config *c = NULL;
        struct context_names names = { 0 };
        yaml_node_t *root = NULL;
        int r;

        r = config_root(k, &root);
        if (r < 0)
                return r;
        r = read_context(k, root, context_override, &names);
        if (r < 0)
                return r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        r = load_cluster(k, root, names.cluster, c);
        if (r < 0)
                return r;
        if (names.user) {
                r = load_user(k, root, names.user, c);
                if (r < 0)
                        return r;
        }
        c->namespace = strdup(names.ns ? names.ns : "default");
        c->source = strdup(k->file);
        if (!c->namespace || !c->source)
                return -ENOMEM;

        *ret = TAKE_PTR(c);
        return 0;
}

int kube__config_parse(const char *file, const char *data, size_t len, const char *context_override,
                       bool allow_files, struct kube_config **ret, struct error_detail *reterr)
{
        AUTOFREE char *dir = NULL;
        struct error_detail yerr = { 0 };
        int r;

        if (!file || !data || !ret)
                return -EINVAL;
        if (len > KUBECONFIG_MAX)
                return cfg_error(reterr, -E2BIG, "%s: larger than %zu bytes", file, KUBECONFIG_MAX);
        r = parent_dir(file, &dir);
        if (r < 0)
                return r;
        struct kcfg k = { .file = file, .dir = dir, .err = reterr, .no_files = !allow_files };

        r = ydoc_load(&k.doc, file, data, len, &kubeconfig_limits, &yerr);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && yerr.column > 0)
                return cfg_error(reterr, r, "%s:%u:%u: %s", file, yerr.line, yerr.column,
                                 yerr.message);
        if (r < 0) {
                char msg[sizeof(yerr.message) + 64];

                return cfg_error(reterr, r, "%s", error_detail_format(&yerr, msg, sizeof(msg)));
        }
        r = config_walk(&k, context_override, ret);
        ydoc_release(&k.doc);
        return r;
}
static int load_kubeconfig(const char *file, const char *context_override, struct kube_config **ret,
                           struct error_detail *err)
{
        AUTOFREE char *data = NULL;
        size_t len;
        int r;

        r = read_cfg_file(file, KUBECONFIG_MAX, &data, &len);
        if (r == -E2BIG)
                return cfg_error(err, r, "%s: larger than %zu bytes", file, KUBECONFIG_MAX);
        if (r < 0)
                return cfg_error(err, r, "%s: cannot read: %s", file, ERRSTR(r));
        return kube__config_parse(file, data, len, context_override, /* allow_files= */ true, ret,
                                  err);
}

static int load_in_cluster(const char *root, struct kube_config **ret, struct error_detail *err)
{
        CLEANUP(kube_config_freep) struct kube_config *c = NULL;
        const char *host = getenv("KUBERNETES_SERVICE_HOST"); /* NOLINT(concurrency-mt-unsafe) */
        const char *port = getenv("KUBERNETES_SERVICE_PORT"); /* NOLINT(concurrency-mt-unsafe) */
        AUTOFREE char *path = NULL;
        AUTOFREE char *ns = NULL;
        int r;

        if (!host || !port || !*host || !*port)
                return cfg_error(err, -ENOENT, "in-cluster: KUBERNETES_SERVICE_HOST/PORT not set");

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;

        if (strchr(host, ':'))
                r = asprintf(&c->server, "https://[%s]:%s", host, port);
        else
                r = asprintf(&c->server, "https://%s:%s", host, port);
        if (r < 0) {
                c->server = NULL;
                return -ENOMEM;
        }

        if (asprintf(&c->token_file, "%s/token", root) < 0) {
                c->token_file = NULL;
                return -ENOMEM;
        }
        r = read_cfg_file(c->token_file, KUBE_CRED_FILE_MAX, &c->token, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                return cfg_error(err, r, "in-cluster: %s: cannot read token: %s", c->token_file,
                                 ERRSTR(r));
        }
        strip(c->token);

        if (asprintf(&path, "%s/ca.crt", root) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        r = read_cfg_file(path, KUBE_CRED_FILE_MAX, &c->ca_pem, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                return cfg_error(err, r, "in-cluster: %s: cannot read CA: %s", path, ERRSTR(r));
        }

        path = mfree(path);
        if (asprintf(&path, "%s/namespace", root) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        r = read_cfg_file(path, 256, &ns, NULL);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                strip(ns);
        c->namespace = strdup(r >= 0 && ns[0] != '\0' ? ns : "default");
        c->source = strdup("in-cluster");
        if (!c->namespace || !c->source)
                return -ENOMEM;

        *ret = TAKE_PTR(c);
        return 0;
}

/* first_existing() on a writable list, split in place. */
static int first_existing_split(char *list, char **ret)
{
        char *next;

        for (char *cur = list; cur; cur = next) {
                next = strchr(cur, ':');
                if (next)
                        *next++ = '\0';
                if (*cur && access(cur, F_OK) >= 0) {
                        *ret = strdup(cur);
                        return *ret ? 1 : -ENOMEM;
                }
        }
        return 0;
}

/* The first existing file of a colon-separated list ($KUBECONFIG): 1 with *ret (owned), else 0. */
static int first_existing(const char *list, char **ret)
{
        AUTOFREE char *copy = strdup(list);

        if (!copy)
                return -ENOMEM;
        return first_existing_split(copy, ret);
}

int kube_config_load(const struct kube_config_options *opts, struct kube_config **ret,
                     struct error_detail *reterr)
{
        static const struct kube_config_options defaults = { 0 };
        const char *env, *home;

        if (!ret)
                return -EINVAL;
        if (!opts)
                opts = &defaults;
        if (reterr)
                *reterr = (struct error_detail){ 0 };

        if (opts->kubeconfig_path)
                return load_kubeconfig(opts->kubeconfig_path, opts->context, ret, reterr);

        env = getenv("KUBECONFIG"); /* NOLINT(concurrency-mt-unsafe) */
        if (env && *env) {
                AUTOFREE char *path = NULL;
                int r = first_existing(env, &path);

                if (r < 0)
                        return r;
                if (r > 0)
                        return load_kubeconfig(path, opts->context, ret, reterr);
        }

        env = getenv("KUBERNETES_SERVICE_HOST"); /* NOLINT(concurrency-mt-unsafe) */
        if (env && *env)
                return load_in_cluster(opts->in_cluster_root ? opts->in_cluster_root
                                                             : IN_CLUSTER_ROOT_DEFAULT,
                                       ret, reterr);

        home = getenv("HOME"); /* NOLINT(concurrency-mt-unsafe) */
        if (home && *home) {
                AUTOFREE char *path = NULL;

                if (asprintf(&path, "%s/.kube/config", home) < 0) {
                        path = NULL;
                        return -ENOMEM;
                }
                if (access(path, F_OK) >= 0)
                        return load_kubeconfig(path, opts->context, ret, reterr);
        }

        return cfg_error(reterr, -ENOENT,
                         "no Kubernetes configuration: no --kubeconfig, no usable $KUBECONFIG, "
                         "not in a cluster, no ~/.kube/config");
}
