/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The console's catalog source configurations (ui/catalog-settings.h) over outside input: the
 * input is split at its first two lines "%%" into the default ConfigMap's sources.yaml, the user
 * ConfigMap's sources.yaml and a JSON payload (a text format, so the corpus is text). Each goes through the list, a get, a create, an
 * update and a delete; whatever a change writes must read back: its sources.yaml parses again
 * and lists the created source (the writer's output is the reader's input). The payload also
 * goes through the preview's Secret lookup (as a preview request) and the Secret's key reader (as
 * a Secret object): a name and a key within their limits, or a refusal.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui/catalog-settings.h"

static void read_back(const struct ui_catalog_cms *cms, struct ui_catalog_change *c, const char *id)
{
        struct ui_catalog_cms next = { cms->defaults, c->user_data };
        json_t *view = NULL;
        struct error_detail e = { 0 };

        if (ui_catalog_sources_list(&next, &view, &e) == -EINVAL)
                abort(); /* what was written does not parse */
        json_decref(view);
        view = NULL;
        if (id && ui_catalog_source_get(&next, id, &view, &e) == -ENOENT)
                abort(); /* the created source is not there */
        json_decref(view);
        ui_catalog_change_done(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char none[] = "";
        char *copy = malloc(size + 1), *f[3] = { none, none, none }, *p;
        json_t *defaults, *user, *payload, *view = NULL;
        struct ui_catalog_change c = { 0 };
        struct ui_catalog_cms cms;
        struct error_detail e = { 0 };
        size_t n = 0;

        if (!copy)
                return 0;
        memcpy(copy, data, size);
        copy[size] = '\0';
        /* "%%\n" at the start of a line ends a field */
        for (p = copy; n < 3; n++) {
                char *sep = strstr(p, "\n%%\n");

                f[n] = p;
                if (!sep)
                        break;
                sep[1] = '\0';
                p = sep + 4;
        }
        defaults = json_pack("{s:s}", UI_CATALOG_SOURCES_KEY, f[0]);
        user = json_pack("{s:s}", UI_CATALOG_SOURCES_KEY, f[1]);
        payload = json_loads(f[2], JSON_DECODE_ANY, NULL);
        cms = (struct ui_catalog_cms){ defaults, user };
        if (ui_catalog_sources_list(&cms, &view, &e) == 0) {
                json_decref(view);
                view = NULL;
        }
        if (payload && ui_catalog_source_create(&cms, payload, &c, &e) == 0)
                read_back(&cms, &c, json_string_value(json_object_get(payload, "id")));
        if (payload && ui_catalog_source_update(&cms, "a", payload, &c, &e) == 0)
                read_back(&cms, &c, "a");
        if (ui_catalog_source_delete(&cms, "a", &c, &view, &e) == 0) {
                read_back(&cms, &c, NULL);
                json_decref(view);
                view = NULL;
        }
        if (ui_catalog_source_get(&cms, "a", &view, &e) == 0)
                json_decref(view);
        if (payload) {
                char name[UI_CATALOG_SECRET_NAME_MAX + 1];
                char *key = NULL;

                if (ui_catalog_preview_secret(&cms, payload, name, &e) == 1 &&
                    (name[0] == '\0' || strlen(name) > UI_CATALOG_SECRET_NAME_MAX))
                        abort();
                if (ui_catalog_secret_key(payload, &key, &e) == 0) {
                        if (strlen(key) > UI_CATALOG_KEY_MAX)
                                abort();
                        free(key);
                }
        }
        json_decref(payload);
        json_decref(defaults);
        json_decref(user);
        free(copy);
        return 0;
}
