/* SPDX-License-Identifier: Apache-2.0 */
#include "agent-world.h"

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void agent_world_setup(struct agent_world *w)
{
        *w = (struct agent_world){ 0 };
        (void)snprintf(w->dir, sizeof(w->dir), "/tmp/agent-shell-XXXXXX");
        cr_assert_not_null(mkdtemp(w->dir));
        fake_fetch_init(&w->f);
        fake_repo_init(&w->r);
        fake_clock_init(&w->clk, 1000 * USEC_PER_SEC);
}

void agent_world_teardown(struct agent_world *w)
{
        pthread_mutex_lock(&w->f.lock);
        for (size_t i = 0; i < w->f.n_rules; i++)
                w->f.rules[i].released = true;
        pthread_cond_broadcast(&w->f.cond);
        pthread_mutex_unlock(&w->f.lock);
        fake_repo_release_loads(&w->r);
        w->a = agent_free(w->a);
        fake_fetch_release_all(&w->f);
        fake_repo_release_all(&w->r);
        (void)nftw(w->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void agent_world_start(struct agent_world *w, unsigned workers)
{
        int r = agent_new(
                &(struct agent_options){
                        .model_dir = w->dir,
                        .server_url = "fake://",
                        .download_workers = workers,
                        .retry_base = USEC_PER_SEC,
                        .retry_max = USEC_PER_SEC,
                        .stop_timeout = 5 * USEC_PER_SEC,
                        .fetch_port = &w->f.port,
                        .repo_port = &w->r.port,
                        .clock = &w->clk.clock,
                },
                &w->a);
        cr_assert_eq(r, 0, "agent_new: %d", r);
        cr_assert_eq(agent_start(w->a), 0);
}

void agent_world_want(struct agent_world *w, const char *models_json)
{
        agent_set_desired(w->a, AGENT_SOURCE_FILE, models_json, ++w->generation);
}

void agent_world_on_disk(struct agent_world *w, const char *name, const char *uri)
{
        char path[256];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/%s", w->dir, name);
        cr_assert_eq(mkdir(path, 0755), 0);
        (void)snprintf(path, sizeof(path), "%s/%s/.modelplane-source", w->dir, name);
        f = fopen(path, "we");
        cr_assert_not_null(f);
        (void)fprintf(f, "%s\n", uri);
        (void)fclose(f);
}

bool agent_world_dir_exists(struct agent_world *w, const char *name)
{
        char path[256];
        struct stat st;

        (void)snprintf(path, sizeof(path), "%s/%s", w->dir, name);
        return stat(path, &st) == 0;
}

void agent_world_sleep_ms(long ms)
{
        struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };
        (void)nanosleep(&ts, NULL);
}

json_t *agent_world_entry(struct agent_world *w, const char *name)
{
        json_auto_t *st = agent_status(w->a);
        size_t i;
        json_t *e;

        cr_assert_not_null(st);
        json_array_foreach(st, i, e) {
                json_t *n = json_object_get(e, "name");
                if (json_string_length(n) == strlen(name) && streq(json_string_value(n), name))
                        return json_incref(e);
        }
        return NULL;
}

const char *agent_world_state(struct agent_world *w, const char *name, char *buf, size_t len)
{
        json_auto_t *e = agent_world_entry(w, name);

        (void)snprintf(buf, len, "%s",
                       e ? json_string_value(json_object_get(e, "state")) : "absent");
        return buf;
}

void agent_world_wait_state(struct agent_world *w, const char *name, const char *state)
{
        char buf[64] = "";

        for (int i = 0; i < 5000; i++) {
                if (streq(agent_world_state(w, name, buf, sizeof(buf)), state))
                        return;
                agent_world_sleep_ms(1);
        }
        cr_assert_fail("model %s: state %s, expected %s", name, buf, state);
}

void agent_world_wait_pass(struct agent_world *w, unsigned long passes)
{
        for (int i = 0; i < 5000 && agent_passes(w->a) <= passes; i++)
                agent_world_sleep_ms(1);
        cr_assert_gt(agent_passes(w->a), passes, "no pass after pass %lu", passes);
}
