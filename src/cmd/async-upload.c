/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane async-upload: Kubeflow Model Registry's model transfer job (kubeflow/hub
 * jobs/async-upload) as a drop-in: the same MODEL_SYNC_* variables and flags, credential files
 * and metadata ConfigMap, the same termination message. Downloads a model (S3 or a URI) with the
 * agent's fetch code, pushes it as a ModelCar image and registers it (docs/transfer.md).
 *
 * Exit status: 0 done; 2 a usage error (an unknown flag, an invalid choice or boolean, as
 * upstream's argument parser); 1 any other failure, named in the log and, as upstream writes
 * it, "Unexpected error: <reason>" in $TERMINATION_MESSAGE_PATH (default /dev/termination-log).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "transfer/config.h"
#include "transfer/job.h"
#include "transfer/metadata.h"
#include "util/file-util.h"
#include "util/log.h"

#define DEFAULT_SA_TOKEN "/var/run/secrets/kubernetes.io/serviceaccount/token"

struct au_args {
        const char *v[TRANSFER_OPT__MAX];
};

static int au_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                  size_t err_size)
{
        struct au_args *a = userdata;

        (void)err;
        (void)err_size;
        a->v[opt->id] = arg;
        return 0;
}

static struct cli_option au_options[TRANSFER_OPT__MAX];

static const struct cli_command au_cli = {
        .name = "async-upload",
        .synopsis =
                "Kubeflow Model Registry's model transfer job: downloads a model (S3 or a URI),\n"
                "pushes it as a ModelCar OCI image and registers it in the Model Registry as\n"
                "MODEL_SYNC_MODEL_UPLOAD_INTENT asks. Every flag is also read from the variable\n"
                "MODEL_SYNC_<FLAG> (--source-type: MODEL_SYNC_SOURCE_TYPE); a flag wins.",
        .options = au_options,
        .n_options = TRANSFER_OPT__MAX,
        .set = au_set,
        .epilog =
                "Files: the *_CREDENTIALS_PATH folders and .dockerconfigjson, the metadata\n"
                "ConfigMap (MODEL_SYNC_METADATA_CONFIGMAP_PATH, default /etc/model-metadata when\n"
                "it exists); the result in $TERMINATION_MESSAGE_PATH (default\n"
                "/dev/termination-log). docs/transfer.md.\n",
};

static void options_init(void)
{
        for (size_t i = 0; i < TRANSFER_OPT__MAX; i++)
                au_options[i] = (struct cli_option){
                        .name = transfer_options[i].flag,
                        .arg = CLI_ARG_REQUIRED,
                        .metavar = "VALUE",
                        .help = transfer_options[i].help,
                        .id = (int)i,
                };
}

/* getenv() races only with setenv(), which nothing in this process calls. */
static const char *env_get(const char *name)
{
        return getenv(name); /* NOLINT(concurrency-mt-unsafe) */
}

static const char *env_lookup(void *userdata, const char *name)
{
        (void)userdata;
        return env_get(name);
}

/* A MODEL_SYNC_* variable that is none of upstream's: named, as it is most likely a typo. */
static void warn_unknown_env(void)
{
        for (char **ep = environ; ep && *ep; ep++) {
                size_t n = strcspn(*ep, "=");
                bool known = false;

                if (!strneq(*ep, "MODEL_SYNC_", 11))
                        continue;
                for (size_t i = 0; i < TRANSFER_OPT__MAX && !known; i++)
                        known = strlen(transfer_options[i].env) == n &&
                                strneq(*ep, transfer_options[i].env, n);
                if (!known)
                        log_warn("async-upload: %.*s is not a variable of the transfer job: "
                                 "ignored",
                                 (int)n, *ep);
        }
}

static void termination_message(const char *text)
{
        const char *path = env_get("TERMINATION_MESSAGE_PATH");
        FILE *f;

        if (!path || !*path)
                path = "/dev/termination-log";
        f = fopen(path, "we");
        if (!f || fputs(text, f) < 0) {
                log_warn("async-upload: cannot write the termination message to %s", path);
                if (f)
                        (void)fclose(f);
                return;
        }
        if (fclose(f) != 0)
                log_warn("async-upload: cannot write the termination message to %s", path);
}

static int fail(const struct error_detail *e)
{
        char line[1200], msg[1300];

        error_detail_format(e, line, sizeof(line));
        log_error("async-upload: %s", line);
        (void)snprintf(msg, sizeof(msg), "Unexpected error: %s", line);
        termination_message(msg);
        return 1;
}

/* A small file (a credential) with trailing whitespace dropped; -ENOENT when absent. */
static int read_small(const char *path, char **ret)
{
        size_t len = 0;
        char *s = NULL;
        int r = read_file_bounded(path, TRANSFER_CREDENTIAL_FILE_MAX,
                                  READ_FILE_REFUSE_NUL | READ_FILE_SECRET, &s, &len, NULL);

        if (r < 0)
                return r;
        while (len > 0 && strchr(" \t\r\n", s[len - 1]))
                s[--len] = '\0';
        *ret = s;
        return 0;
}

static bool is_dir(const char *p)
{
        struct stat st;

        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The S3 credentials folder's files over @s. */
static int s3_files(const char *dir, const char *name, struct transfer_s3 *s,
                    struct error_detail *e)
{
        char *files[TRANSFER_S3_FILE__MAX] = { 0 };
        int r = 0;

        if (!is_dir(dir))
                return error_detail_set_field(e, ERROR_INVALID, -ENOENT, name,
                                              "credentials folder not found: %s", dir);
        for (size_t i = 0; i < TRANSFER_S3_FILE__MAX && r >= 0; i++) {
                AUTOFREE char *path = NULL;

                if (asprintf(&path, "%s/%s", dir, transfer_s3_file_names[i]) < 0) {
                        r = -ENOMEM;
                        break;
                }
                r = read_small(path, &files[i]);
                if (r == -ENOENT)
                        r = 0;
                if (r < 0)
                        error_detail_set_field(e, ERROR_INVALID, r, name, "cannot read %s: %s",
                                               path, errno_to_string(r));
        }
        if (r >= 0 && transfer_s3_apply_files(s, (const char *const *)files) < 0)
                r = error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        for (size_t i = 0; i < TRANSFER_S3_FILE__MAX; i++) {
                if (files[i])
                        explicit_bzero(files[i], strlen(files[i]));
                free(files[i]);
        }
        return r;
}

static int uri_file(const char *dir, char **uri, struct error_detail *e)
{
        AUTOFREE char *path = NULL;
        char *s = NULL;
        int r;

        if (!is_dir(dir))
                return error_detail_set_field(e, ERROR_INVALID, -ENOENT,
                                              "MODEL_SYNC_SOURCE_URI_CREDENTIALS_PATH",
                                              "credentials folder not found: %s", dir);
        if (asprintf(&path, "%s/URI", dir) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = read_small(path, &s);
        if (r < 0)
                return error_detail_set_field(e, ERROR_INVALID, r,
                                              "MODEL_SYNC_SOURCE_URI_CREDENTIALS_PATH",
                                              "URI credential file not found: %s (%s)", path,
                                              errno_to_string(r));
        free(*uri);
        *uri = s;
        return 0;
}

/* The credential files the configuration names. */
static int read_credentials(struct transfer_config *c, char **ret_docker, size_t *ret_len,
                            struct error_detail *e)
{
        const char *dpath = c->credentials[TRANSFER_OPT_DESTINATION_OCI_CREDENTIALS_PATH -
                                           TRANSFER_OPT_SOURCE_S3_CREDENTIALS_PATH];
        const char *s3path = c->credentials[0];
        const char *uripath = c->credentials[TRANSFER_OPT_SOURCE_URI_CREDENTIALS_PATH -
                                             TRANSFER_OPT_SOURCE_S3_CREDENTIALS_PATH];
        int r;

        if (c->source_type == TRANSFER_SOURCE_S3 && s3path) {
                log_info("async-upload: loading S3 credentials from %s", s3path);
                r = s3_files(s3path, "MODEL_SYNC_SOURCE_S3_CREDENTIALS_PATH", &c->source_s3, e);
                if (r < 0)
                        return r;
        }
        if (c->source_type == TRANSFER_SOURCE_URI && uripath) {
                r = uri_file(uripath, &c->source_uri, e);
                if (r < 0)
                        return r;
        }
        if (c->dest_type == TRANSFER_DEST_OCI && dpath) {
                log_info("async-upload: loading OCI credentials from %s", dpath);
                r = read_file_bounded(dpath, TRANSFER_DOCKERCONFIG_MAX,
                                      READ_FILE_REGULAR | READ_FILE_SECRET, ret_docker, ret_len,
                                      NULL);
                if (r < 0)
                        return error_detail_set_field(e, ERROR_INVALID, r,
                                                      "MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH",
                                                      "credentials file not found or unreadable: "
                                                      "%s (%s)",
                                                      dpath, errno_to_string(r));
        }
        return 0;
}

static int metadata_entry(struct transfer_metadata *m, const char *dir, const char *name,
                          struct error_detail *e)
{
        AUTOFREE char *path = NULL, *value = NULL;
        struct stat st;
        bool skipped = false;
        int r;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                return 0; /* ConfigMap volumes hold ..data and its timestamped folder */
        r = read_file_bounded(path, TRANSFER_METADATA_VALUE_MAX, READ_FILE_REFUSE_NUL, &value, NULL,
                              NULL);
        if (r < 0)
                return error_detail_set_field(e, ERROR_INVALID, r, name, "cannot read %s: %s", path,
                                              errno_to_string(r));
        r = transfer_metadata_add(m, name, value, &skipped, e);
        if (r >= 0 && skipped)
                log_warn("async-upload: metadata key %s ignored (an unknown field, or custom "
                         "properties that are not JSON)",
                         name);
        return r;
}

static int read_metadata(const char *given, struct transfer_metadata *m, bool *ret_present,
                         struct error_detail *e)
{
        const char *dir = given ? given : TRANSFER_DEFAULT_METADATA_PATH;
        struct dirent **list = NULL;
        int n, r = 0;

        *ret_present = false;
        if (!given && !is_dir(dir))
                return 0;
        log_info("async-upload: loading ConfigMap metadata from %s", dir);
        n = scandir(dir, &list, NULL, alphasort);
        if (n < 0)
                return error_detail_set_field(e, ERROR_INVALID, -errno,
                                              "MODEL_SYNC_METADATA_CONFIGMAP_PATH",
                                              "cannot read the metadata folder %s: %s", dir,
                                              errno_to_string(-errno));
        if (n > TRANSFER_METADATA_KEYS_MAX + 2)
                r = error_detail_set_field(e, ERROR_INVALID, -EFBIG,
                                           "MODEL_SYNC_METADATA_CONFIGMAP_PATH",
                                           "the metadata folder %s has more than 256 keys", dir);
        for (int i = 0; i < n; i++) {
                if (r >= 0 && list[i]->d_name[0] != '.')
                        r = metadata_entry(m, dir, list[i]->d_name, e);
                free(list[i]);
        }
        free(list);
        *ret_present = r >= 0;
        return r;
}

/* The token as upstream's client finds it. NULL with no error: none (allowed when insecure). */
static int registry_token(const struct transfer_config *c, char **ret, struct error_detail *e)
{
        const char *path = NULL;
        bool user_provided = true;
        int r;

        *ret = NULL;
        if (c->registry_token && *c->registry_token) {
                *ret = strdup(c->registry_token);
                return *ret ? 0 : error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        }
        if (c->registry_token_envvar && *c->registry_token_envvar) {
                path = env_get(c->registry_token_envvar);
                if (!path)
                        return error_detail_set_field(e, ERROR_INVALID, -EINVAL,
                                                      "MODEL_SYNC_REGISTRY_USER_TOKEN_ENVVAR",
                                                      "user_token_envvar is '%s' but no such env "
                                                      "var is set",
                                                      c->registry_token_envvar);
        } else if (env_get("KF_PIPELINES_SA_TOKEN_PATH")) {
                path = env_get("KF_PIPELINES_SA_TOKEN_PATH");
        } else {
                path = DEFAULT_SA_TOKEN;
                user_provided = false;
        }
        r = read_small(path, ret);
        if (r < 0 && user_provided)
                return error_detail_set(e, ERROR_INVALID, r, "Unable read user token from '%s': %s",
                                        path, errno_to_string(r));
        if (r < 0)
                *ret = NULL;
        return 0;
}

/* Signing is upstream's sigstore step, which this job does not have: refused when asked for
 * (MODEL_SYNC_SIGN=true, or every SIGSTORE_* variable set), rather than pushing unsigned. */
static int check_signing(const struct transfer_config *c, struct error_detail *e)
{
        bool all = env_get("SIGSTORE_TUF_URL") && env_get("SIGSTORE_FULCIO_URL") &&
                   env_get("SIGSTORE_REKOR_URL");

        if (c->sign == 1 || (c->sign < 0 && all))
                return error_detail_set_field(e, ERROR_INVALID, -EOPNOTSUPP, "MODEL_SYNC_SIGN",
                                              "sigstore signing is not supported by modelplane "
                                              "async-upload (MODEL_SYNC_SIGN=false to push "
                                              "without it)");
        return 0;
}

static const char *platform_arch(void)
{
        static struct utsname u;

        if (uname(&u) < 0)
                return "amd64";
        if (streq(u.machine, "x86_64"))
                return "amd64";
        if (streq(u.machine, "aarch64"))
                return "arm64";
        return u.machine;
}

static int au_prepare(struct transfer_values *v, struct transfer_config *c,
                      struct transfer_metadata *m, bool *ret_present, struct error_detail *e)
{
        int r;

        r = transfer_config_validate(c, v, e);
        if (r < 0)
                return r;
        r = read_metadata(c->metadata_path, m, ret_present, e);
        if (r < 0)
                return r;
        r = transfer_metadata_validate(m, *ret_present, c->intent, e);
        if (r < 0)
                return r;
        return check_signing(c, e);
}

static int au_run(struct transfer_values *v, struct transfer_config *c)
{
        struct error_detail e = { 0 };
        struct transfer_metadata m = { 0 };
        AUTOFREE char *docker = NULL, *token = NULL, *text = NULL;
        json_auto_t *result = NULL;
        size_t docker_len = 0;
        bool present = false;
        const char *ca;
        int r;

        r = read_credentials(c, &docker, &docker_len, &e);
        if (r >= 0)
                r = au_prepare(v, c, &m, &present, &e);
        if (r >= 0)
                r = registry_token(c, &token, &e);
        if (r < 0) {
                transfer_metadata_release(&m);
                return fail(&e);
        }
        ca = c->registry_custom_ca;
        if (!ca && c->registry_custom_ca_envvar)
                ca = env_get(c->registry_custom_ca_envvar);
        r = transfer_job_run(&(struct transfer_job_inputs){ .config = c,
                                                            .metadata = present ? &m : NULL,
                                                            .dockerconfig = docker,
                                                            .dockerconfig_len = docker_len,
                                                            .registry_token = token,
                                                            .registry_ca_file = ca,
                                                            .platform_arch = platform_arch() },
                             &result, &e);
        transfer_metadata_release(&m);
        if (docker)
                explicit_bzero(docker, docker_len);
        if (r < 0)
                return fail(&e);
        text = json_dumps(result, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (text)
                termination_message(text);
        log_info("async-upload: done: %s", text ? text : "");
        return 0;
}

int cmd_async_upload(int argc, char **argv)
{
        struct au_args a = { 0 };
        struct transfer_values v;
        struct transfer_config c;
        struct error_detail e = { 0 };
        char line[1200];
        int r;

        options_init();
        r = cli_parse(&au_cli, argc, argv, &a);
        if (r != 0)
                return cli_exit_status(r);
        warn_unknown_env();
        transfer_values_resolve(&v, a.v, env_lookup, NULL);
        r = transfer_config_read(&v, &c, &e);
        if (r < 0) {
                /* as upstream's argument parser: a usage error */
                char msg[1300];

                error_detail_format(&e, line, sizeof(line));
                (void)cli_usage_error(&au_cli, "%s", line);
                (void)snprintf(msg, sizeof(msg), "Unexpected error: %s", line);
                termination_message(msg);
                return 2;
        }
        r = au_run(&v, &c);
        transfer_config_release(&c);
        return r;
}
