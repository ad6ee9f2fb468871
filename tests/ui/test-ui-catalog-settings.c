/* SPDX-License-Identifier: Apache-2.0 */
/* The catalog's source configurations (ui/catalog-settings.h): the two ConfigMaps merged into
 * upstream's views, and each change as the user ConfigMap's next data, which the catalog's own
 * parser then reads (default file, then user file, as --catalogs-path does). */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "catalog/multipart.h"
#include "catalog/sources.h"
#include "json/json-util.h"
#include "ui/catalog-settings.h"

static const char DEFAULTS[] = "model_catalogs:\n"
                               "- id: dora_ai_models\n"
                               "  name: Dora AI\n"
                               "  type: yaml\n"
                               "  labels: [Red Hat]\n"
                               "  properties:\n"
                               "    yamlCatalogPath: dora.yaml\n"
                               "- id: hub\n"
                               "  name: Hugging Face\n"
                               "  type: hf\n"
                               "  enabled: false\n"
                               "  properties:\n"
                               "    allowedOrganization: ibm-granite\n"
                               "labels:\n"
                               "- name: Red Hat\n";

static const char USER[] = "catalogs:\n"
                           "- id: dora_ai_models\n"
                           "  enabled: false\n"
                           "- id: team_models\n"
                           "  name: Team models\n"
                           "  type: yaml\n"
                           "  includedModels: ['team/*']\n"
                           "  properties:\n"
                           "    yamlCatalogPath: team_models.yaml\n";

static const char CATALOG[] = "source: Team\nmodels:\n- name: team/m1\n";

struct fixture {
        json_t *defaults, *user;
        struct ui_catalog_cms cms;
};

static void setup(struct fixture *f, bool with_user)
{
        f->defaults = json_pack("{s:s,s:s}", UI_CATALOG_SOURCES_KEY, DEFAULTS, "dora.yaml",
                                "models: []\n");
        f->user = with_user ? json_pack("{s:s,s:s}", UI_CATALOG_SOURCES_KEY, USER,
                                        "team_models.yaml", CATALOG)
                            : NULL;
        cr_assert_not_null(f->defaults);
        f->cms = (struct ui_catalog_cms){ f->defaults, f->user };
}

static void teardown(struct fixture *f)
{
        json_decref(f->defaults);
        json_decref(f->user);
}

static const char *str(const json_t *v, const char *key)
{
        const char *s = json_string_value(json_object_get(v, key));

        return s ? s : "(none)";
}

/* The catalog's own parser over the default file, then the user data's sources.yaml (the
 * order of --catalogs-path): 0, or the parser's error. */
static int catalog_reads(const struct fixture *f, const json_t *user_data,
                         struct catalog_config *ret)
{
        const char *u = json_string_value(json_object_get(user_data, UI_CATALOG_SOURCES_KEY));
        struct catalog_config user = { 0 };
        struct error_detail err = { 0 };
        int r;

        cr_assert_not_null(u);
        *ret = (struct catalog_config){ 0 };
        r = catalog_config_parse("/catalog/default/sources.yaml", DEFAULTS, strlen(DEFAULTS), ret,
                                 &err);
        cr_assert_eq(r, 0, "%s", err.message);
        r = catalog_config_parse("/catalog/user/sources.yaml", u, strlen(u), &user, &err);
        cr_assert_eq(r, 0, "the catalog refused the written sources.yaml: %s\n%s", err.message, u);
        r = catalog_config_merge(ret, &user, &err);
        catalog_config_release(&user);
        return r;
}

Test(catalog_settings, list_merges_both_configmaps_sorted_with_isdefault)
{
        struct fixture f;
        json_t *out = NULL, *cats, *c;
        struct error_detail e = { 0 };

        setup(&f, true);
        cr_assert_eq(ui_catalog_sources_list(&f.cms, &out, &e), 0, "%s", e.message);
        cats = json_object_get(out, "catalogs");
        cr_assert_eq(json_array_size(cats), 3);
        c = json_array_get(cats, 0);
        cr_assert_str_eq(str(c, "id"), "dora_ai_models");
        cr_assert_str_eq(str(c, "name"), "Dora AI");
        cr_assert(json_is_false(json_object_get(c, "enabled")), "the user's override applies");
        cr_assert(json_is_true(json_object_get(c, "isDefault")));
        c = json_array_get(cats, 1);
        cr_assert_str_eq(str(c, "id"), "hub");
        cr_assert_str_eq(str(c, "allowedOrganization"), "ibm-granite");
        cr_assert_null(json_object_get(c, "apiKey"));
        c = json_array_get(cats, 2);
        cr_assert_str_eq(str(c, "id"), "team_models");
        cr_assert(json_is_true(json_object_get(c, "enabled")), "enabled by default");
        cr_assert(json_is_false(json_object_get(c, "isDefault")));
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(c, "includedModels"), 0)),
                         "team/*");
        json_decref(out);

        /* no user ConfigMap yet: the defaults alone */
        teardown(&f);
        setup(&f, false);
        cr_assert_eq(ui_catalog_sources_list(&f.cms, &out, &e), 0, "%s", e.message);
        cr_assert_eq(json_array_size(json_object_get(out, "catalogs")), 2);
        json_decref(out);
        teardown(&f);
}

Test(catalog_settings, get_has_the_yaml_catalog_and_unknown_is_enoent)
{
        struct fixture f;
        json_t *out = NULL;
        struct error_detail e = { 0 };

        setup(&f, true);
        cr_assert_eq(ui_catalog_source_get(&f.cms, "team_models", &out, &e), 0);
        cr_assert_str_eq(str(out, "yaml"), CATALOG);
        cr_assert_str_eq(str(out, "yamlCatalogPath"), "team_models.yaml");
        json_decref(out);
        cr_assert_eq(ui_catalog_source_get(&f.cms, "dora_ai_models", &out, &e), 0);
        cr_assert_str_eq(str(out, "yaml"), "models: []\n", "the default ConfigMap's catalog");
        json_decref(out);
        cr_assert_eq(ui_catalog_source_get(&f.cms, "nope", &out, &e), -ENOENT);
        cr_assert_not_null(strstr(e.message, "nope"));
        teardown(&f);
}

Test(catalog_settings, a_broken_sources_yaml_names_its_configmap)
{
        struct fixture f;
        json_t *out = NULL;
        struct error_detail e = { 0 };

        setup(&f, true);
        json_object_set_new(f.user, UI_CATALOG_SOURCES_KEY, json_string("catalogs: [\n"));
        cr_assert_eq(ui_catalog_sources_list(&f.cms, &out, &e), -EINVAL);
        cr_assert_not_null(strstr(e.message, UI_CATALOG_SOURCES_CM), "%s", e.message);
        json_object_set_new(f.user, UI_CATALOG_SOURCES_KEY, json_string("catalogs: [{name: x}]"));
        cr_assert_eq(ui_catalog_sources_list(&f.cms, &out, &e), -EINVAL);
        cr_assert_not_null(strstr(e.message, "id"), "%s", e.message);
        teardown(&f);
}

Test(catalog_settings, create_yaml_source_writes_entry_and_catalog_the_catalog_reads)
{
        struct fixture f;
        struct ui_catalog_change c = { 0 };
        struct catalog_config cfg;
        const struct catalog_source_config *s;
        json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:[s],s:[s]}", "id", "my_src", "name", "My: source",
                              "type", "yaml", "yaml", CATALOG, "labels", "Team", "excludedModels",
                              "team/old*");
        struct error_detail e = { 0 };

        setup(&f, true);
        cr_assert_eq(ui_catalog_source_create(&f.cms, p, &c, &e), 0, "%s", e.message);
        cr_assert_eq(c.secret, UI_CATALOG_SECRET_NONE);
        cr_assert_str_eq(str(c.user_data, "my_src.yaml"), CATALOG);
        cr_assert_str_eq(str(c.user_data, "team_models.yaml"), CATALOG, "others kept");
        cr_assert_eq(catalog_reads(&f, c.user_data, &cfg), 0);
        s = catalog_config_find(&cfg, "my_src");
        cr_assert_not_null(s);
        cr_assert_str_eq(s->name, "My: source");
        cr_assert_str_eq(s->type, "yaml");
        cr_assert_eq(s->enabled, 1);
        cr_assert_str_eq(s->excluded[0], "team/old*");
        cr_assert_str_eq(json_string_value(json_object_get(s->properties, "yamlCatalogPath")),
                         "my_src.yaml");
        cr_assert_eq(catalog_config_find(&cfg, "dora_ai_models")->enabled, 0, "override kept");
        cr_assert_not_null(catalog_config_find(&cfg, "team_models"));
        catalog_config_release(&cfg);
        ui_catalog_change_done(&c);
        json_decref(p);

        /* into a user ConfigMap that does not exist yet */
        teardown(&f);
        setup(&f, false);
        p = json_pack("{s:s,s:s,s:s,s:s}", "id", "x1", "name", "X", "type", "yaml", "yaml",
                      CATALOG);
        cr_assert_eq(ui_catalog_source_create(&f.cms, p, &c, &e), 0, "%s", e.message);
        cr_assert_eq(catalog_reads(&f, c.user_data, &cfg), 0);
        cr_assert_not_null(catalog_config_find(&cfg, "x1"));
        catalog_config_release(&cfg);
        ui_catalog_change_done(&c);
        json_decref(p);
        teardown(&f);
}

static void expect_refused(struct fixture *f, const char *payload, int code, const char *words)
{
        struct ui_catalog_change c = { 0 };
        json_t *p = json_loads(payload, 0, NULL);
        struct error_detail e = { 0 };

        cr_assert_not_null(p, "%s", payload);
        cr_assert_eq(ui_catalog_source_create(&f->cms, p, &c, &e), code, "%s: %s", payload,
                     e.message);
        cr_assert_not_null(strstr(e.message, words), "%s: '%s' lacks '%s'", payload, e.message,
                           words);
        cr_assert_null(c.user_data);
        json_decref(p);
}

Test(catalog_settings, create_refuses_bad_payloads_by_name)
{
        struct fixture f;
        char long_id[300], payload[512];

        setup(&f, true);
        expect_refused(&f, "{\"name\":\"a\",\"type\":\"yaml\",\"yaml\":\"models: []\"}", -EINVAL,
                       "id is required");
        expect_refused(&f, "{\"id\":\"Bad-Id\",\"name\":\"a\",\"type\":\"yaml\",\"yaml\":\"a: 1\"}",
                       -EINVAL, "lowercase");
        expect_refused(&f, "{\"id\":\"___\",\"name\":\"a\",\"type\":\"yaml\",\"yaml\":\"a: 1\"}",
                       -EINVAL, "letter or a digit");
        memset(long_id, 'a', 239);
        long_id[239] = '\0';
        (void)snprintf(payload, sizeof(payload),
                       "{\"id\":\"%s\",\"name\":\"a\",\"type\":\"yaml\",\"yaml\":\"a: 1\"}",
                       long_id);
        expect_refused(&f, payload, -EINVAL, "238");
        expect_refused(&f, "{\"id\":\"a\",\"type\":\"yaml\",\"yaml\":\"a: 1\"}", -EINVAL,
                       "name is required");
        expect_refused(&f, "{\"id\":\"a\",\"name\":\"a\",\"yaml\":\"a: 1\"}", -EINVAL,
                       "type is required");
        expect_refused(&f, "{\"id\":\"a\",\"name\":\"a\",\"type\":\"invalid_type\"}", -EINVAL,
                       "unsupported");
        expect_refused(&f, "{\"id\":\"a\",\"name\":\"a\",\"type\":\"yaml\"}", -EINVAL,
                       "yaml is required");
        expect_refused(&f, "{\"id\":\"a\",\"name\":\"a\",\"type\":\"yaml\",\"yaml\":\"a: [\"}",
                       -EINVAL, "yaml line");
        expect_refused(&f, "{\"id\":\"a\",\"name\":\"a\",\"type\":\"yaml\",\"yaml\":\"- 1\"}",
                       -EINVAL, "mapping");
        expect_refused(&f, "{\"id\":\"a\",\"name\":\"a\",\"type\":\"hf\"}", -EINVAL,
                       "allowedOrganization");
        expect_refused(&f, "{\"id\":\"a\",\"name\":1,\"type\":\"yaml\"}", -EINVAL,
                       "name must be a string");
        expect_refused(&f,
                       "{\"id\":\"a\",\"name\":\"a\",\"type\":\"yaml\",\"yaml\":\"a: 1\","
                       "\"labels\":\"x\"}",
                       -EINVAL, "labels must be a list");
        expect_refused(&f,
                       "{\"id\":\"dora_ai_models\",\"name\":\"a\",\"type\":\"yaml\","
                       "\"yaml\":\"a: 1\"}",
                       -EINVAL, "already exists (a default source)");
        expect_refused(&f,
                       "{\"id\":\"team_models\",\"name\":\"a\",\"type\":\"yaml\","
                       "\"yaml\":\"a: 1\"}",
                       -EINVAL, "already exists");
        expect_refused(&f, "[1]", -EINVAL, "object");
        teardown(&f);
}

Test(catalog_settings, hf_key_goes_into_upstreams_secret)
{
        struct fixture f;
        struct ui_catalog_change c = { 0 };
        json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", "my_hf_src", "name", "HF", "type",
                              "hf", "allowedOrganization", "ibm", "apiKey", "hf_secret123");
        json_t *out = NULL;
        struct error_detail e = { 0 };

        setup(&f, true);
        cr_assert_eq(ui_catalog_source_create(&f.cms, p, &c, &e), 0, "%s", e.message);
        cr_assert_eq(c.secret, UI_CATALOG_SECRET_PUT);
        cr_assert_str_eq(c.secret_name, "catalog-my-hf-src-apikey");
        cr_assert_str_eq(c.source_label, "MY_HF_SRC");
        cr_assert_str_eq(c.api_key, "hf_secret123");
        cr_assert_null(strstr(json_string_value(json_object_get(c.user_data, "sources.yaml")),
                              "hf_secret123"),
                       "the token never goes into the ConfigMap");
        /* the view never shows a key */
        json_decref(f.user);
        f.user = json_incref(c.user_data);
        f.cms.user = f.user;
        cr_assert_eq(ui_catalog_source_get(&f.cms, "my_hf_src", &out, &e), 0);
        cr_assert_null(json_object_get(out, "apiKey"));
        cr_assert_str_eq(str(out, "allowedOrganization"), "ibm");
        json_decref(out);
        ui_catalog_change_done(&c);
        json_decref(p);

        /* "" removes the key: the Secret goes */
        p = json_pack("{s:s}", "apiKey", "");
        cr_assert_eq(ui_catalog_source_update(&f.cms, "my_hf_src", p, &c, &e), 0, "%s", e.message);
        cr_assert_eq(c.secret, UI_CATALOG_SECRET_DELETE);
        cr_assert_str_eq(c.secret_name, "catalog-my-hf-src-apikey");
        cr_assert_null(
                strstr(json_string_value(json_object_get(c.user_data, "sources.yaml")), "apiKey"));
        ui_catalog_change_done(&c);
        json_decref(p);
        teardown(&f);
}

Test(catalog_settings, update_overrides_a_default_only_where_upstream_allows)
{
        struct fixture f;
        struct ui_catalog_change c = { 0 };
        struct catalog_config cfg;
        json_t *p;
        struct error_detail e = { 0 };

        setup(&f, false);
        p = json_pack("{s:b,s:[s]}", "enabled", false, "excludedModels", "x/*");
        cr_assert_eq(ui_catalog_source_update(&f.cms, "dora_ai_models", p, &c, &e), 0, "%s",
                     e.message);
        cr_assert_eq(catalog_reads(&f, c.user_data, &cfg), 0);
        cr_assert_eq(catalog_config_find(&cfg, "dora_ai_models")->enabled, 0);
        cr_assert_str_eq(catalog_config_find(&cfg, "dora_ai_models")->name, "Dora AI",
                         "the default's other fields stay");
        cr_assert_str_eq(catalog_config_find(&cfg, "dora_ai_models")->excluded[0], "x/*");
        catalog_config_release(&cfg);
        ui_catalog_change_done(&c);
        json_decref(p);

        p = json_pack("{s:s}", "name", "Changed Name");
        cr_assert_eq(ui_catalog_source_update(&f.cms, "dora_ai_models", p, &c, &e), -EPERM);
        cr_assert_not_null(strstr(e.message, "'name'"), "%s", e.message);
        json_decref(p);
        p = json_pack("{s:s}", "type", "hf");
        cr_assert_eq(ui_catalog_source_update(&f.cms, "dora_ai_models", p, &c, &e), -EPERM);
        cr_assert_not_null(strstr(e.message, "from type 'yaml' to 'hf'"), "%s", e.message);
        cr_assert_eq(ui_catalog_source_update(&f.cms, "nope", p, &c, &e), -ENOENT);
        json_decref(p);
        teardown(&f);
}

Test(catalog_settings, update_a_users_source_name_and_catalog)
{
        struct fixture f;
        struct ui_catalog_change c = { 0 };
        json_t *p = json_pack("{s:s,s:s}", "name", "Renamed", "yaml", "models: []\n"), *out = NULL;
        struct error_detail e = { 0 };

        setup(&f, true);
        cr_assert_eq(ui_catalog_source_update(&f.cms, "team_models", p, &c, &e), 0, "%s",
                     e.message);
        cr_assert_str_eq(str(c.user_data, "team_models.yaml"), "models: []\n");
        json_decref(f.user);
        f.user = json_incref(c.user_data);
        f.cms.user = f.user;
        cr_assert_eq(ui_catalog_source_get(&f.cms, "team_models", &out, &e), 0);
        cr_assert_str_eq(str(out, "name"), "Renamed");
        cr_assert_str_eq(json_string_value(
                                 json_array_get(json_object_get(out, "includedModels"), 0)),
                         "team/*", "what the PATCH did not set stays");
        json_decref(out);
        ui_catalog_change_done(&c);
        json_decref(p);
        teardown(&f);
}

Test(catalog_settings, delete_removes_entry_and_catalog_never_a_default)
{
        struct fixture f;
        struct ui_catalog_change c = { 0 };
        struct catalog_config cfg;
        json_t *view = NULL;
        struct error_detail e = { 0 };

        setup(&f, true);
        cr_assert_eq(ui_catalog_source_delete(&f.cms, "dora_ai_models", &c, NULL, &e), -EPERM);
        cr_assert_not_null(strstr(e.message, "default source"), "%s", e.message);
        cr_assert_eq(ui_catalog_source_delete(&f.cms, "nope", &c, NULL, &e), -ENOENT);
        cr_assert_eq(ui_catalog_source_delete(&f.cms, "team_models", &c, &view, &e), 0, "%s",
                     e.message);
        cr_assert_str_eq(str(view, "name"), "Team models");
        cr_assert_null(json_object_get(c.user_data, "team_models.yaml"));
        cr_assert_eq(catalog_reads(&f, c.user_data, &cfg), 0);
        cr_assert_null(catalog_config_find(&cfg, "team_models"));
        cr_assert_eq(catalog_config_find(&cfg, "dora_ai_models")->enabled, 0, "override kept");
        catalog_config_release(&cfg);
        ui_catalog_change_done(&c);
        json_decref(view);
        teardown(&f);
}

/* The preview request as the catalog's multipart body, read back with the catalog's own
 * multipart and config parsers. */
Test(catalog_settings, preview_body_is_what_the_catalog_reads)
{
        static const char CT[] = "multipart/form-data; boundary=BND";
        json_t *d = json_pack("{s:s,s:[s],s:{s:s}}", "type", "yaml", "excludedModels", "team/old*",
                              "properties", "yaml", CATALOG);
        struct catalog_source_config src = { 0 };
        struct error_detail err = { 0 };
        const char *part;
        size_t len, plen;
        char *body = NULL;
        struct error_detail e = { 0 };

        cr_assert_eq(ui_catalog_preview_body(d, NULL, "BND", &body, &len, &e), 0, "%s", e.message);
        cr_assert_eq(catalog_multipart_find(CT, body, len, "catalogData", &part, &plen), 0);
        cr_assert_eq(plen, strlen(CATALOG));
        cr_assert_eq(memcmp(part, CATALOG, plen), 0);
        cr_assert_eq(catalog_multipart_find(CT, body, len, "config", &part, &plen), 0);
        cr_assert_eq(catalog_source_parse_preview("config", part, plen, &src, &err), 0, "%s",
                     err.message);
        cr_assert_str_eq(src.type, "yaml");
        cr_assert_str_eq(src.excluded[0], "team/old*");
        catalog_source_config_release(&src);
        free(body);
        json_decref(d);

        /* a yaml source by path; an hf source's organization and key */
        d = json_pack("{s:s,s:{s:s}}", "type", "yaml", "properties", "yamlCatalogPath", "a.yaml");
        cr_assert_eq(ui_catalog_preview_body(d, NULL, "BND", &body, &len, &e), 0);
        cr_assert_eq(catalog_multipart_find(CT, body, len, "catalogData", &part, &plen), -ENOENT);
        cr_assert_not_null(strstr(body, "\"yamlCatalogPath\":\"a.yaml\""), "%s", body);
        free(body);
        json_decref(d);
        d = json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "hf", "properties", "allowedOrganization",
                      "ibm", "apiKey", "hf_x", "yaml", "ignored");
        cr_assert_eq(ui_catalog_preview_body(d, NULL, "BND", &body, &len, &e), 0);
        cr_assert_not_null(strstr(body, "\"allowedOrganization\":\"ibm\""), "%s", body);
        cr_assert_null(strstr(body, "ignored"), "%s", body);
        free(body);
        json_decref(d);

        /* refusals in words; a boundary inside the content */
        d = json_pack("{s:s}", "type", "yaml");
        cr_assert_eq(ui_catalog_preview_body(d, NULL, "BND", &body, &len, &e), -EINVAL);
        cr_assert_not_null(strstr(e.message, "properties.yaml"), "%s", e.message);
        json_decref(d);
        d = json_pack("{s:s}", "type", "git");
        cr_assert_eq(ui_catalog_preview_body(d, NULL, "BND", &body, &len, &e), -EINVAL);
        cr_assert_not_null(strstr(e.message, "yaml or hf"), "%s", e.message);
        json_decref(d);
        d = json_pack("{s:s,s:{s:s}}", "type", "yaml", "properties", "yaml", "models: [] # BND");
        cr_assert_eq(ui_catalog_preview_body(d, NULL, "BND", &body, &len, &e), -EEXIST);
        json_decref(d);
}

/* A preview naming a configured hf source without a key: the Secret its properties.apiKey names
 * (the user entry's, else the default's); nothing for any other request. */
Test(catalog_settings, preview_of_a_configured_hf_source_reads_its_secret)
{
        static const char USER_HF[] = "catalogs:\n"
                                      "- id: hub\n"
                                      "  properties:\n"
                                      "    apiKey: catalog-hub-apikey\n"
                                      "- id: mine\n"
                                      "  name: Mine\n"
                                      "  type: hf\n"
                                      "  properties:\n"
                                      "    allowedOrganization: acme\n"
                                      "- id: odd\n"
                                      "  name: Odd\n"
                                      "  type: hf\n"
                                      "  properties:\n"
                                      "    apiKey: 'Not A Secret/Name'\n";
        json_t *defaults = json_pack("{s:s}", UI_CATALOG_SOURCES_KEY, DEFAULTS),
               *user = json_pack("{s:s}", UI_CATALOG_SOURCES_KEY, USER_HF), *d;
        struct ui_catalog_cms cms = { defaults, user };
        struct error_detail e = { 0 };
        char name[UI_CATALOG_SECRET_NAME_MAX + 1];

        /* the default hf source with the user's override naming its Secret */
        d = json_pack("{s:s,s:s,s:{s:s}}", "id", "hub", "type", "hf", "properties",
                      "allowedOrganization", "ibm-granite");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), 1, "%s", e.message);
        cr_assert_str_eq(name, "catalog-hub-apikey");
        json_decref(d);
        /* a key in the request wins; an empty one does not count as a key */
        d = json_pack("{s:s,s:s,s:{s:s}}", "id", "hub", "type", "hf", "properties", "apiKey",
                      "hf_typed");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), 0);
        json_decref(d);
        d = json_pack("{s:s,s:s,s:{s:s}}", "id", "hub", "type", "hf", "properties", "apiKey", "");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), 1);
        json_decref(d);
        /* no id, a yaml request, a source without a key: nothing to read */
        d = json_pack("{s:s}", "type", "hf");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), 0);
        json_decref(d);
        d = json_pack("{s:s,s:s}", "id", "hub", "type", "yaml");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), 0);
        json_decref(d);
        d = json_pack("{s:s,s:s}", "id", "mine", "type", "hf");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), 0);
        json_decref(d);
        /* refusals in words */
        d = json_pack("{s:s,s:s}", "id", "nope", "type", "hf");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), -ENOENT);
        cr_assert_str_eq(e.message, "no catalog source 'nope'");
        json_decref(d);
        d = json_pack("{s:s,s:s}", "id", "dora_ai_models", "type", "hf");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), -EINVAL);
        cr_assert_str_eq(e.message, "catalog source 'dora_ai_models' is not a Hugging Face source");
        json_decref(d);
        d = json_pack("{s:s,s:s}", "id", "odd", "type", "hf");
        cr_assert_eq(ui_catalog_preview_secret(&cms, d, name, &e), -EINVAL);
        cr_assert_str_eq(e.message, "catalog source 'odd': its apiKey names no Secret");
        json_decref(d);
        json_decref(defaults);
        json_decref(user);
}

Test(catalog_settings, secret_key_is_its_decoded_apikey_and_goes_into_the_preview)
{
        static const char CT[] = "multipart/form-data; boundary=BND";
        json_t *s = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "catalog-hub-apikey", "data",
                              "apiKey", "aGZfZ29vZA==" /* hf_good */),
               *d;
        struct catalog_source_config src = { 0 };
        struct error_detail e = { 0 };
        const char *part;
        char *key = NULL, *body = NULL;
        size_t len, plen;

        cr_assert_eq(ui_catalog_secret_key(s, &key, &e), 0, "%s", e.message);
        cr_assert_str_eq(key, "hf_good");
        /* the Secret's key in the config the catalog reads, in place of the request's */
        d = json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", "hub", "type", "hf", "properties",
                      "allowedOrganization", "acme", "apiKey", "");
        cr_assert_eq(ui_catalog_preview_body(d, key, "BND", &body, &len, &e), 0, "%s", e.message);
        cr_assert_eq(catalog_multipart_find(CT, body, len, "config", &part, &plen), 0);
        cr_assert_eq(catalog_source_parse_preview("config", part, plen, &src, &e), 0, "%s",
                     e.message);
        cr_assert_str_eq(json_string_value(json_object_get(src.properties, "apiKey")), "hf_good");
        cr_assert_str_eq(json_string_value(json_object_get(src.properties, "allowedOrganization")),
                         "acme");
        catalog_source_config_release(&src);
        free(body);
        free(key);
        json_decref(d);
        json_decref(s);

        /* no apiKey, not base64, a NUL inside, too long: in words */
        s = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "x", "data", "token", "aGZfeA==");
        cr_assert_eq(ui_catalog_secret_key(s, &key, &e), -EINVAL);
        cr_assert_str_eq(e.message, "Secret x has no apiKey: the source's key is not there");
        json_decref(s);
        s = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "x", "data", "apiKey",
                      "not base64!");
        cr_assert_eq(ui_catalog_secret_key(s, &key, &e), -EINVAL);
        cr_assert_str_eq(e.message, "Secret x: apiKey is not a key (base64 text)");
        json_decref(s);
        s = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "x", "data", "apiKey",
                      "aGYAeA==" /* "hf\0x" */);
        cr_assert_eq(ui_catalog_secret_key(s, &key, &e), -EINVAL);
        json_decref(s);
        {
                char big[(UI_CATALOG_KEY_MAX + 2) / 3 * 4 + 5];

                memset(big, 'A', sizeof(big) - 1);
                big[sizeof(big) - 1] = '\0';
                s = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "x", "data", "apiKey", big);
                cr_assert_eq(ui_catalog_secret_key(s, &key, &e), -EINVAL);
                cr_assert_str_eq(e.message, "Secret x: apiKey is longer than 4096 bytes");
                json_decref(s);
        }
}
