/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pure parts of the registry: the filterQuery compiler, the codec, the server's options
 * (flags, environment, --config YAML, precedence) and the PostgreSQL connection parameters.
 * No network I/O; the options tests write small config files to a temporary directory.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "registry/codec.h"
#include "registry/kinds.h"
#include "registry/options.h"
#include "store/store.h"

static struct store_cond *compile_ok(const char *q)
{
        struct error_detail err = { 0 };
        struct store_cond *c = NULL;
        int r = reg_filter_compile(reg_kind(REG_REGISTERED_MODEL), q, &c, &err);

        cr_assert_eq(r, 0, "%s: %s", q, err.message);
        return c;
}

static void compile_bad(const char *q)
{
        struct error_detail err = { 0 };
        struct store_cond *c = NULL;

        cr_assert_lt(reg_filter_compile(reg_kind(REG_REGISTERED_MODEL), q, &c, &err), 0, "%s", q);
        cr_assert_eq(err.kind, ERROR_INVALID, "%s", q);
        cr_assert_null(c);
}

Test(filter, precedence_and_resolution)
{
        struct store_cond *c;

        cr_assert_null(compile_ok(""));
        cr_assert_null(compile_ok("  -- only a comment"));

        /* a = 1 OR b = 2 AND c = 3  ==  a OR (b AND c) */
        c = compile_ok("name = 'a' OR owner = 'b' AND x = 3");
        cr_assert_eq(c->kind, STORE_COND_OR);
        cr_assert_eq(c->kids[0]->kind, STORE_COND_CMP);
        cr_assert(c->kids[0]->is_column);
        cr_assert_eq(c->kids[0]->column, STORE_COL_NAME);
        cr_assert_eq(c->kids[1]->kind, STORE_COND_AND);
        cr_assert_str_eq(c->kids[1]->kids[0]->prop, "owner");
        cr_assert(!c->kids[1]->kids[0]->custom);
        cr_assert_str_eq(c->kids[1]->kids[1]->prop, "x");
        cr_assert(c->kids[1]->kids[1]->custom);
        cr_assert_eq(c->kids[1]->kids[1]->vcol, STORE_VCOL_INT_OR_DOUBLE);
        store_cond_free(c);

        c = compile_ok("licenseLink <> \"u\"");
        cr_assert_str_eq(c->prop, "license_link");
        cr_assert_eq(c->op, STORE_OP_NE);
        store_cond_free(c);

        c = compile_ok("a.b.c.double_value >= -1.5e3");
        cr_assert_str_eq(c->prop, "a.b.c");
        cr_assert_eq(c->vcol, STORE_VCOL_DOUBLE);
        cr_assert_eq(c->vals[0].type, STORE_DOUBLE);
        cr_assert_eq(c->vals[0].d, -1500.0);
        store_cond_free(c);

        c = compile_ok("`a.b` IN ('x', \"y\", 'z\\'q')");
        cr_assert_str_eq(c->prop, "a.b");
        cr_assert_eq(c->op, STORE_OP_IN);
        cr_assert_eq(c->n_vals, 3);
        cr_assert_str_eq(c->vals[2].s, "z'q");
        store_cond_free(c);

        c = compile_ok("id = 'abc'"); /* cannot match an integer column */
        cr_assert_eq(c->kind, STORE_COND_FALSE);
        store_cond_free(c);

        c = compile_ok("flag = TRUE");
        cr_assert_eq(c->vcol, STORE_VCOL_BOOL);
        cr_assert_eq(c->vals[0].i, 1);
        store_cond_free(c);
}

Test(filter, errors)
{
        compile_bad("name");
        compile_bad("name =");
        compile_bad("= 'x'");
        compile_bad("name = 'x' AND");
        compile_bad("(name = 'x'");
        compile_bad("name = 'x')");
        compile_bad("name = 'unterminated");
        compile_bad("name ~ 'x'");
        compile_bad("name IN 'x'");
        compile_bad("name IN ('a' 'b')");
        compile_bad("name = 99999999999999999999");
        compile_bad("a. = 1");
}

Test(codec, strict_decode)
{
        struct reg_input in = { 0 };
        struct error_detail err = { 0 };
        json_t *j = json_loads(
                "{\"name\":\"n\",\"state\":\"ARCHIVED\",\"tasks\":[\"a\"],"
                "\"customProperties\":{\"k\":{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"7\"}}}",
                0, NULL);

        cr_assert_not_null(j);
        cr_assert_eq(reg_decode(reg_kind(REG_REGISTERED_MODEL), REG_SCHEMA_CREATE, j, &in, &err),
                     0);
        cr_assert(in.has_name && in.has_custom);
        cr_assert_str_eq(store_entity_prop(&in.vals, "state", false)->s, "ARCHIVED");
        cr_assert_eq(store_entity_prop(&in.vals, "k", true)->i, 7);
        cr_assert_str_eq(store_entity_prop(&in.vals, "tasks", false)->s, "[\"a\"]");
        reg_input_done(&in);
        /* name is not part of the Update schema */
        cr_assert_lt(reg_decode(reg_kind(REG_REGISTERED_MODEL), REG_SCHEMA_UPDATE, j, &in, &err),
                     0);
        cr_assert_eq(err.kind, ERROR_INVALID);
        cr_assert_str_eq(err.message, "json: unknown field \"name\"");
        json_decref(j);
}

Test(codec, encode_shape)
{
        struct store_entity e = { .group = STORE_GROUP_ARTIFACT,
                                  .id = 12,
                                  .create_ms = 1714400000123,
                                  .update_ms = 1714400000124 };
        json_t *j;

        e.name = strdup("m");
        cr_assert_not_null(e.name);
        cr_assert_eq(store_entity_set_string(&e, "uri", false, STORE_P_STRING, "s3://x"), 0);
        cr_assert_eq(store_entity_set_int(&e, "n", true, -3), 0);
        cr_assert_eq(store_entity_set_string(&e, "st", true, STORE_P_STRUCT, "{\"a\":1}"), 0);
        j = reg_encode(reg_kind(REG_MODEL_ARTIFACT), &e);
        cr_assert_str_eq(json_string_value(json_object_get(j, "id")), "12");
        cr_assert_str_eq(json_string_value(json_object_get(j, "createTimeSinceEpoch")),
                         "1714400000123");
        cr_assert_str_eq(json_string_value(json_object_get(j, "artifactType")), "model-artifact");
        cr_assert_null(json_object_get(j, "externalId"));
        cr_assert_null(json_object_get(j, "description"));
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(j, "customProperties"), "n"),
                                 "int_value")),
                         "-3");
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(j, "customProperties"), "st"),
                                 "struct_value")),
                         "{\"a\":1}");
        json_decref(j);
        store_entity_done(&e);
}

/* ---- PostgreSQL connection parameters (TLS flags onto libpq keywords) ---- */

static const char *param(const char *const *k, const char *const *v, const char *key)
{
        const char *found = NULL;

        for (size_t i = 0; k[i]; i++)
                if (strcmp(k[i], key) == 0)
                        found = v[i]; /* libpq: the last one wins */
        return found;
}

static size_t param_index(const char *const *k, const char *key)
{
        size_t i;

        for (i = 0; k[i] && strcmp(k[i], key) != 0; i++)
                ;
        return i;
}

Test(pgconn, params_without_tls_leave_the_dsn_alone)
{
        const char *k[STORE_PG_PARAMS_MAX + 1], *v[STORE_PG_PARAMS_MAX + 1];
        const char *dsn = "postgresql://u@db:5432/reg?sslmode=verify-full&connect_timeout=3";

        cr_assert_eq(store_pg_conn_params(dsn, NULL, k, v), 0);
        cr_assert_str_eq(param(k, v, "dbname"), dsn);
        cr_assert_null(param(k, v, "sslmode"));
        cr_assert_null(param(k, v, "sslrootcert"));
        /* defaults come before the DSN so that the DSN's own values win */
        cr_assert_str_eq(param(k, v, "connect_timeout"), "10");
        cr_assert_lt(param_index(k, "connect_timeout"), param_index(k, "dbname"));
        cr_assert_lt(param_index(k, "keepalives_idle"), param_index(k, "dbname"));

        {
                struct store_pg_tls empty = { .sslmode = NULL };

                cr_assert_eq(store_pg_conn_params("host=db dbname=reg", &empty, k, v), 0);
                cr_assert_str_eq(param(k, v, "dbname"), "host=db dbname=reg");
                cr_assert_null(param(k, v, "sslmode"));
        }
}

Test(pgconn, tls_settings_follow_and_override_the_dsn)
{
        const char *k[STORE_PG_PARAMS_MAX + 1], *v[STORE_PG_PARAMS_MAX + 1];
        struct store_pg_tls tls = { .sslmode = "verify-full",
                                    .sslcert = "/c.crt",
                                    .sslkey = "/c.key",
                                    .sslrootcert = "/ca.crt" };
        size_t db;

        cr_assert_eq(store_pg_conn_params("postgres://db/reg?sslmode=disable", &tls, k, v), 0);
        db = param_index(k, "dbname");
        cr_assert_str_eq(param(k, v, "sslmode"), "verify-full");
        cr_assert_str_eq(param(k, v, "sslcert"), "/c.crt");
        cr_assert_str_eq(param(k, v, "sslkey"), "/c.key");
        cr_assert_str_eq(param(k, v, "sslrootcert"), "/ca.crt");
        cr_assert_gt(param_index(k, "sslmode"), db);
        cr_assert_gt(param_index(k, "sslrootcert"), db);

        /* only what is set */
        tls = (struct store_pg_tls){ .sslrootcert = "/ca.crt" };
        cr_assert_eq(store_pg_conn_params("host=db", &tls, k, v), 0);
        cr_assert_null(param(k, v, "sslmode"));
        cr_assert_null(param(k, v, "sslcert"));
        cr_assert_str_eq(param(k, v, "sslrootcert"), "/ca.crt");
}

Test(pgconn, invalid_sslmode_and_empty_dsn)
{
        const char *k[STORE_PG_PARAMS_MAX + 1], *v[STORE_PG_PARAMS_MAX + 1];
        struct store_pg_tls tls = { .sslmode = "verify" };
        static const char *const good[] = { "disable", "allow",     "prefer",
                                            "require", "verify-ca", "verify-full" };

        cr_assert_eq(store_pg_conn_params("host=db", &tls, k, v), -EINVAL);
        cr_assert_eq(store_pg_conn_params("", NULL, k, v), -EINVAL);
        cr_assert_eq(store_pg_conn_params(NULL, NULL, k, v), -EINVAL);
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
                cr_assert(store_pg_sslmode_valid(good[i]), "%s", good[i]);
        cr_assert_not(store_pg_sslmode_valid("VERIFY-FULL"));
        cr_assert_not(store_pg_sslmode_valid(""));
        cr_assert_not(store_pg_sslmode_valid(NULL));

        {
                struct store *s = NULL;
                struct store_open_options o = { .n_conns = 1, .tls = { .sslmode = "bogus" } };

                cr_assert_eq(store_open_with("host=127.0.0.1 dbname=x", &o, &s), -EINVAL);
                cr_assert_null(s);
        }
}

/* ---- options: flags, environment, config file, precedence ---- */

static char optdir[128];

static void opt_setup(void)
{
        (void)snprintf(optdir, sizeof(optdir), "/tmp/mp-reg-options-XXXXXX");
        cr_assert_not_null(mkdtemp(optdir));
}

static void opt_teardown(void)
{
        char cmd[200];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", optdir);
        (void)!system(cmd);
}

TestSuite(options, .init = opt_setup, .fini = opt_teardown);

/* Writes a config file in optdir; returns its path (static buffer). */
static const char *write_config(const char *name, const char *text)
{
        static char path[256];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", optdir, name);
        f = fopen(path, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fputs(text, f) >= 0, true);
        cr_assert_eq(fclose(f), 0);
        return path;
}

static const char *fake_env(const char *name)
{
        if (strcmp(name, "MR_PORT") == 0)
                return "2222";
        if (strcmp(name, "MR_POOL_SIZE") == 0)
                return "5";
        if (strcmp(name, "MODEL_REGISTRY_REST_SERVICE_PORT") == 0)
                return ""; /* empty: the next name is read */
        return NULL;
}

static const char *no_env(const char *name)
{
        (void)name;
        return NULL;
}

Test(options, defaults)
{
        struct reg_options o;

        reg_options_init(&o);
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_HOSTNAME), "localhost");
        cr_assert_eq(reg_options_uint(&o, REG_OPT_PORT), 8080);
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_DATASTORE_TYPE), "embedmd");
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_DSN), "model-registry.db");
        cr_assert_eq(reg_options_uint(&o, REG_OPT_POOL_SIZE), 8);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_BODY_MAX), 4U * 1024U * 1024U);
        cr_assert_not(reg_options_bool(&o, REG_OPT_WIPE));
        cr_assert_null(reg_options_sslmode(&o));
        cr_assert_null(reg_options_sslrootcert(&o));
        cr_assert_eq(reg_options_source(&o, REG_OPT_PORT), REG_SRC_DEFAULT);
        reg_options_release(&o);
}

/* The per-address connection limit and its exemption (issue 28 item 6). */
Test(options, connection_limit_and_trusted_proxies)
{
        const char *path = write_config("p.yaml", "max-connections-per-ip: 0\n"
                                                  "trusted-proxy: 10.0.0.0/8, fd00::/8\n");
        const char *argv[] = { "registry", "--trusted-proxy", "10.0.0.0/33", NULL };
        struct error_detail e = { 0 };
        const char *err = e.message;
        struct cidr *v = NULL;
        struct reg_options o;
        size_t n = 0;

        reg_options_init(&o);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_MAX_CONNECTIONS_PER_IP), 256);
        cr_assert_null(reg_options_str(&o, REG_OPT_TRUSTED_PROXY));
        cr_assert_eq(reg_options_trusted_proxies(&o, &v, &n, &e), 0);
        cr_assert(v == NULL && n == 0);
        cr_assert_eq(reg_options_load_file(&o, path, &e), 0, "%s", err);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_MAX_CONNECTIONS_PER_IP), 0);
        cr_assert_eq(reg_options_check(&o, &e), 0, "%s", err);
        cr_assert_eq(reg_options_trusted_proxies(&o, &v, &n, &e), 0);
        cr_assert_eq(n, 2);
        free(v);
        cr_assert_eq(reg_options_parse_args(&o, 3, (char **)argv, &e), 0, "%s", err);
        cr_assert_eq(reg_options_check(&o, &e), -EINVAL);
        cr_assert(strstr(err, "invalid --trusted-proxy '10.0.0.0/33' (from the command line)"),
                  "%s", err);
        reg_options_release(&o);
}

Test(options, precedence_flag_env_config_default)
{
        const char *path = write_config("c.yaml", "# registry\n"
                                                  "hostname: 0.0.0.0\n"
                                                  "port: 1111\n"
                                                  "pool-size: 3\n"
                                                  "database: /var/lib/mr.db\n"
                                                  "embedmd-database-ssl-mode: require\n");
        const char *argv[] = { "registry", "--port", "3333", NULL };
        struct error_detail e = { 0 };
        const char *err = e.message;
        struct reg_options o;

        /* the config file is read first here: order does not matter, rank does */
        reg_options_init(&o);
        cr_assert_eq(reg_options_load_file(&o, path, &e), 0, "%s", err);
        cr_assert_eq(reg_options_load_env(&o, fake_env, &e), 0, "%s", err);
        cr_assert_eq(reg_options_parse_args(&o, 3, (char **)argv, &e), 0, "%s", err);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_PORT), 3333); /* flag */
        cr_assert_eq(reg_options_source(&o, REG_OPT_PORT), REG_SRC_FLAG);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_POOL_SIZE), 5); /* env */
        cr_assert_eq(reg_options_source(&o, REG_OPT_POOL_SIZE), REG_SRC_ENV);
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_HOSTNAME), "0.0.0.0"); /* config */
        cr_assert_eq(reg_options_source(&o, REG_OPT_HOSTNAME), REG_SRC_CONFIG);
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_DSN), "/var/lib/mr.db"); /* alias key */
        cr_assert_str_eq(reg_options_sslmode(&o), "require");
        cr_assert_eq(reg_options_uint(&o, REG_OPT_BODY_MAX), 4U * 1024U * 1024U); /* default */
        reg_options_release(&o);

        /* the other order gives the same result */
        reg_options_init(&o);
        cr_assert_eq(reg_options_parse_args(&o, 3, (char **)argv, &e), 0, "%s", err);
        cr_assert_eq(reg_options_load_env(&o, fake_env, &e), 0, "%s", err);
        cr_assert_eq(reg_options_load_file(&o, path, &e), 0, "%s", err);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_PORT), 3333);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_POOL_SIZE), 5);
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_HOSTNAME), "0.0.0.0");
        reg_options_release(&o);

        /* without the flag the environment wins over the file; without both, the file */
        reg_options_init(&o);
        cr_assert_eq(reg_options_load_file(&o, path, &e), 0, "%s", err);
        cr_assert_eq(reg_options_load_env(&o, fake_env, &e), 0, "%s", err);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_PORT), 2222);
        reg_options_release(&o);
        reg_options_init(&o);
        cr_assert_eq(reg_options_load_env(&o, no_env, &e), 0, "%s", err);
        cr_assert_eq(reg_options_load_file(&o, path, &e), 0, "%s", err);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_PORT), 1111);
        reg_options_release(&o);
}

Test(options, config_types_quoting_and_nulls)
{
        const char *path = write_config("t.yaml", "---\n"
                                                  "port: \"9090\"\n"
                                                  "hostname:\n"
                                                  "embedmd-database-ssl-verify-server-cert: true\n"
                                                  "embedmd-database-ssl-ca: '/etc/ca.pem'\n"
                                                  "embedmd-database-dsn: host=db dbname=mr\n");
        struct error_detail e = { 0 };
        const char *err = e.message;
        struct reg_options o;

        reg_options_init(&o);
        cr_assert_eq(reg_options_load_file(&o, path, &e), 0, "%s", err);
        cr_assert_eq(reg_options_uint(&o, REG_OPT_PORT), 9090);
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_HOSTNAME), "localhost"); /* null: unset */
        cr_assert_eq(reg_options_source(&o, REG_OPT_HOSTNAME), REG_SRC_DEFAULT);
        cr_assert_str_eq(reg_options_sslmode(&o), "verify-full");
        cr_assert_str_eq(reg_options_sslrootcert(&o), "/etc/ca.pem");
        cr_assert_str_eq(reg_options_str(&o, REG_OPT_DSN), "host=db dbname=mr");
        reg_options_release(&o);

        /* an empty file and a file with only comments set nothing */
        reg_options_init(&o);
        cr_assert_eq(reg_options_load_file(&o, write_config("e.yaml", ""), &e), 0);
        cr_assert_eq(reg_options_load_file(&o, write_config("n.yaml", "# nothing\n"), &e), 0);
        cr_assert_eq(reg_options_source(&o, REG_OPT_PORT), REG_SRC_DEFAULT);
        reg_options_release(&o);
}

/* Loads text as a config file and expects -EINVAL with all of the given fragments. */
static void config_error(const char *text, const char *a, const char *b, const char *c)
{
        const char *path = write_config("bad.yaml", text);
        struct error_detail e = { 0 };
        const char *err = e.message;
        struct reg_options o;

        reg_options_init(&o);
        cr_assert_eq(reg_options_load_file(&o, path, &e), -EINVAL, "%s", text);
        cr_assert_not_null(strstr(err, path), "no file name in: %s", err);
        cr_assert_not_null(strstr(err, a), "'%s' not in: %s", a, err);
        if (b)
                cr_assert_not_null(strstr(err, b), "'%s' not in: %s", b, err);
        if (c)
                cr_assert_not_null(strstr(err, c), "'%s' not in: %s", c, err);
        reg_options_release(&o);
}

Test(options, config_errors_name_file_line_and_key)
{
        config_error("hostname: a\nport: 80\nbogus: 1\n", ":3:", "unknown key 'bogus'", NULL);
        config_error("port: abc\n", ":1:", "key 'port'", "expected an integer");
        config_error("port: 70000\n", ":1:", "key 'port'", "0 to 65535");
        config_error("pool-size: 0\n", ":1:", "key 'pool-size'", "1 to 256");
        config_error("\n\nport:\n  - 1\n", ":4:", "key 'port'", "expected a single value");
        config_error("hostname: {a: b}\n", ":1:", "key 'hostname'", "mapping");
        config_error("embedmd-database-ssl-verify-server-cert: maybe\n",
                     ":1:", "expected a boolean", NULL);
        config_error("embedmd-database-ssl-mode: strict\n", ":1:", "invalid TLS mode 'strict'",
                     "verify-full");
        config_error("database: a.db\nembedmd-database-dsn: b.db\n", ":2:", "set twice", NULL);
        config_error("port: 1\nport: 2\n", ":2:", "set twice", NULL);
        config_error("wipe: true\n", ":1:", "unknown key 'wipe'", NULL); /* command line only */
        config_error("config: other.yaml\n", ":1:", "unknown key 'config'", NULL);
        config_error("- port\n- 8080\n", ":1:", "expected a mapping", NULL);
        config_error("port: 1\n  hostname: [\n", "invalid YAML", NULL, NULL);
        config_error("? [a, b]\n: 1\n", ":1:", "plain strings", NULL);
        /* one file, one document (the second was silently ignored before the one reader) */
        config_error("port: 1\n---\nport: 2\n", ":2:", "more than one YAML document", NULL);
}

Test(options, unreadable_config_file)
{
        struct error_detail e = { 0 };
        const char *err = e.message;
        char path[256];
        struct reg_options o;

        (void)snprintf(path, sizeof(path), "%s/missing.yaml", optdir);
        reg_options_init(&o);
        cr_assert_eq(reg_options_load_file(&o, path, &e), -ENOENT);
        cr_assert_not_null(strstr(err, path));
        cr_assert_not_null(strstr(err, "cannot read config file"));
        cr_assert_eq(reg_options_load_file(&o, optdir, &e), -EINVAL);
        cr_assert_not_null(strstr(err, "not a regular file"));
        reg_options_release(&o);
}

Test(options, environment_errors_name_the_variable)
{
        struct error_detail e = { 0 };
        const char *err = e.message;
        struct reg_options o;

        reg_options_init(&o);
        cr_assert_eq(reg_options_load_env(&o, no_env, &e), 0);
        cr_assert_eq(reg_options_set(&o, REG_OPT_BODY_MAX, "-1", REG_SRC_ENV,
                                     "environment variable MR_BODY_MAX", &e),
                     -EINVAL);
        cr_assert_not_null(strstr(err, "environment variable MR_BODY_MAX"), "%s", err);
        cr_assert_not_null(strstr(err, "'-1'"), "%s", err);
        reg_options_release(&o);
}

Test(options, command_line)
{
        struct error_detail e = { 0 };
        const char *err = e.message;
        struct reg_options o;

        {
                const char *argv[] = { "registry",
                                       "-n",
                                       "0.0.0.0",
                                       "-p",
                                       "0",
                                       "-d",
                                       "x.db",
                                       "--wipe",
                                       "--embedmd-database-ssl-verify-server-cert=false",
                                       "--embedmd-database-ssl-root-cert",
                                       "/ca.pem",
                                       "-c",
                                       "f.yaml",
                                       NULL };

                reg_options_init(&o);
                cr_assert_eq(reg_options_parse_args(&o, 13, (char **)argv, &e), 0, "%s", err);
                cr_assert_str_eq(reg_options_str(&o, REG_OPT_HOSTNAME), "0.0.0.0");
                cr_assert_eq(reg_options_uint(&o, REG_OPT_PORT), 0);
                cr_assert_str_eq(reg_options_str(&o, REG_OPT_DSN), "x.db");
                cr_assert(reg_options_bool(&o, REG_OPT_WIPE));
                cr_assert_not(reg_options_bool(&o, REG_OPT_SSL_VERIFY_SERVER_CERT));
                cr_assert_str_eq(reg_options_sslmode(&o), "require"); /* a root cert, as upstream */
                cr_assert_str_eq(reg_options_sslrootcert(&o), "/ca.pem");
                cr_assert_str_eq(o.config_file, "f.yaml");
                reg_options_release(&o);
        }
        {
                const char *argv[] = { "registry", "--help", NULL };

                reg_options_init(&o);
                cr_assert_eq(reg_options_parse_args(&o, 2, (char **)argv, &e), 1);
                reg_options_release(&o);
        }
        {
                const char *argv[] = { "registry", "--embedmd-database-ssl-mode", "verify-ca",
                                       "--embedmd-database-ssl-verify-server-cert", NULL };

                reg_options_init(&o);
                cr_assert_eq(reg_options_parse_args(&o, 4, (char **)argv, &e), 0, "%s", err);
                cr_assert_str_eq(reg_options_sslmode(&o), "verify-ca"); /* explicit mode wins */
                reg_options_release(&o);
        }
        {
                static const struct {
                        const char *args[3];
                        const char *msg;
                } bad[] = {
                        { { "--bogus" }, "unknown option '--bogus'" },
                        { { "-x" }, "unknown option '-x'" },
                        { { "--port" }, "'--port' requires an argument" },
                        { { "--port", "x" }, "--port: invalid value 'x'" },
                        { { "--pool-size", "300" }, "1 to 256" },
                        { { "--body-max", "0" }, "--body-max" },
                        { { "--wipe=perhaps" }, "expected a boolean" },
                        { { "--embedmd-database-ssl-mode", "on" }, "invalid TLS mode 'on'" },
                        { { "stray" }, "unexpected argument 'stray'" },
                };

                for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                        const char *argv[4] = { "registry" };
                        int argc = 1;

                        for (size_t j = 0; j < 3 && bad[i].args[j]; j++)
                                argv[argc++] = bad[i].args[j];
                        reg_options_init(&o);
                        e.message[0] = 0;
                        cr_assert_eq(reg_options_parse_args(&o, argc, (char **)argv, &e), -EINVAL,
                                     "%s", bad[i].args[0]);
                        cr_assert_not_null(strstr(err, bad[i].msg), "'%s' not in '%s'", bad[i].msg,
                                           err);
                        reg_options_release(&o);
                }
        }
}
