/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The certificate source of a TLS server, for the engine's TLS sessions (tls-conn.c): the pair
 * being served, re-read from its files when they change, and the session-ticket key of each pair.
 */
#include "http/tls-source.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file-util.h"
#include "util/macro.h"

/* Limits for the certificate files of a rotating TLS source. */
#define TLS_FILE_MAX  ((size_t)1024 * 1024)
#define TLS_CHAIN_MAX 16U

/* Identity of a file's contents as far as stat(2) can tell. */
struct file_id {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        struct timespec ctime;
};

/*
 * A parsed certificate chain and key, shared by every session that selected it. Reference
 * counted under tls_source.lock: the source holds one reference for the pair it serves, and each
 * connection whose handshake picked the pair holds one until the connection closes. gnutls gets
 * the pair without ownership (no GNUTLS_CERT_RETR_DEINIT_ALL) and uses it read-only, from any
 * number of sessions at once, as it does with its own credentials.
 */
struct tls_pair {
        unsigned refs;
        gnutls_pcert_st *pcerts; /* owned; n entries, allocated with gnutls_malloc */
        unsigned n;
        gnutls_privkey_t key; /* owned */
        /* owned; encrypts the session tickets of handshakes that selected this pair, so a
         * ticket issued before a rotation is refused after it (a full handshake, the new pair) */
        gnutls_datum_t ticket_key;
};

/*
 * The certificate source of a TLS-from-files server: the pair being served and the identity of
 * the files it was last compared with. Consulted (under lock) by every new handshake.
 */
struct tls_source {
        pthread_mutex_t lock;
        char *cert_path;                /* owned */
        char *key_path;                 /* owned */
        struct file_id cert_id, key_id; /* files last looked at, loaded or rejected */
        struct tls_pair *current;       /* a reference; the pair new handshakes get */
        uint64_t generation;
};

static bool file_id_equal(const struct file_id *a, const struct file_id *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
               a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static void file_id_from_stat(const struct stat *st, struct file_id *ret)
{
        *ret = (struct file_id){
                .dev = st->st_dev,
                .ino = st->st_ino,
                .size = st->st_size,
                .mtime = st->st_mtim,
                .ctime = st->st_ctim,
        };
}

static int file_id_get(const char *path, struct file_id *ret)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return negative_errno();
        file_id_from_stat(&st, ret);
        return 0;
}

static void pcerts_free(gnutls_pcert_st *pcerts, unsigned n)
{
        if (!pcerts)
                return;
        for (unsigned i = 0; i < n; i++)
                gnutls_pcert_deinit(&pcerts[i]);
        gnutls_free(pcerts);
}

static void ticket_key_free(gnutls_datum_t *k)
{
        if (!k->data)
                return;
        gnutls_memset(k->data, 0, k->size);
        gnutls_free(k->data);
        *k = (gnutls_datum_t){ 0 };
}

static void tls_pair_unref_locked(struct tls_pair *pair)
{
        if (!pair || --pair->refs > 0)
                return;
        ticket_key_free(&pair->ticket_key);
        gnutls_privkey_deinit(pair->key);
        pcerts_free(pair->pcerts, pair->n);
        free(pair);
}

/*
 * Parses a PEM certificate chain and key into a new pair (one reference). Fails with -EINVAL
 * when either does not parse or the key does not belong to the first certificate.
 */
static int tls_pair_import(const char *cert_pem, size_t cert_len, const char *key_pem,
                           size_t key_len, struct tls_pair **ret)
{
        gnutls_datum_t cd = { .data = (unsigned char *)cert_pem, .size = (unsigned)cert_len };
        gnutls_datum_t kd = { .data = (unsigned char *)key_pem, .size = (unsigned)key_len };
        unsigned char id_cert[64], id_key[64];
        size_t id_cert_len = sizeof(id_cert), id_key_len = sizeof(id_key);
        struct tls_pair *pair;
        gnutls_pubkey_t pub = NULL;
        int r = -EINVAL;

        if (cert_len > TLS_FILE_MAX || key_len > TLS_FILE_MAX)
                return -EFBIG;
        pair = calloc(1, sizeof(*pair));
        if (!pair)
                return -ENOMEM;
        pair->refs = 1;
        pair->pcerts = gnutls_calloc(TLS_CHAIN_MAX, sizeof(*pair->pcerts));
        if (!pair->pcerts) {
                free(pair);
                return -ENOMEM;
        }
        pair->n = TLS_CHAIN_MAX;
        if (gnutls_pcert_list_import_x509_raw(pair->pcerts, &pair->n, &cd, GNUTLS_X509_FMT_PEM, 0) <
                    0 ||
            pair->n == 0) {
                gnutls_free(pair->pcerts);
                free(pair);
                return -EINVAL;
        }
        if (gnutls_privkey_init(&pair->key) < 0) {
                pair->key = NULL;
                r = -ENOMEM;
                goto fail;
        }
        if (gnutls_privkey_import_x509_raw(pair->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0) < 0)
                goto fail;
        if (gnutls_pubkey_init(&pub) < 0) {
                pub = NULL;
                r = -ENOMEM;
                goto fail;
        }
        if (gnutls_pubkey_import_privkey(pub, pair->key, 0, 0) < 0 ||
            gnutls_pubkey_get_key_id(pub, 0, id_key, &id_key_len) < 0 ||
            gnutls_pubkey_get_key_id(pair->pcerts[0].pubkey, 0, id_cert, &id_cert_len) < 0 ||
            id_key_len != id_cert_len || memcmp(id_key, id_cert, id_key_len) != 0)
                goto fail;
        if (gnutls_session_ticket_key_generate(&pair->ticket_key) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        gnutls_pubkey_deinit(pub);
        *ret = pair;
        return 0;
fail:
        ticket_key_free(&pair->ticket_key);
        if (pub)
                gnutls_pubkey_deinit(pub);
        if (pair->key)
                gnutls_privkey_deinit(pair->key);
        pcerts_free(pair->pcerts, pair->n);
        free(pair);
        return r;
}

struct tls_source *tls_source_free(struct tls_source *src)
{
        if (!src)
                return NULL;
        tls_pair_unref_locked(src->current);
        (void)pthread_mutex_destroy(&src->lock);
        free(src->cert_path);
        free(src->key_path);
        free(src);
        return NULL;
}

static void free_secret(char *p, size_t len)
{
        if (!p)
                return;
        explicit_bzero(p, len);
        free(p);
}

/*
 * Re-reads the pair when either file changed since it was last looked at. Called with the lock
 * held (or before the source is shared). Returns 1 when a new pair was taken, 0 when nothing
 * changed or the new files were rejected (the old pair stays), negative errno when there is no
 * pair at all yet and the files cannot be loaded.
 */
static int tls_source_refresh_locked(struct tls_source *src)
{
        struct file_id cid = { 0 }, kid = { 0 };
        struct stat cst, kst; /* of the files read: the identity of the bytes loaded */
        char *cert = NULL, *key = NULL;
        size_t cert_len = 0, key_len = 0;
        struct tls_pair *pair;
        int r;

        if (src->current && !src->cert_path)
                return 0; /* static PEM: nothing to compare */
        if (src->current) {
                if (file_id_get(src->cert_path, &cid) < 0 || file_id_get(src->key_path, &kid) < 0)
                        return 0; /* mid-swap or gone: keep serving what we have */
                if (file_id_equal(&cid, &src->cert_id) && file_id_equal(&kid, &src->key_id))
                        return 0;
        }
        r = read_file_bounded(src->cert_path, TLS_FILE_MAX, READ_FILE_REGULAR, &cert, &cert_len,
                              &cst);
        if (r < 0)
                return src->current ? 0 : r;
        r = read_file_bounded(src->key_path, TLS_FILE_MAX, READ_FILE_REGULAR | READ_FILE_SECRET,
                              &key, &key_len, &kst);
        if (r < 0) {
                free(cert);
                return src->current ? 0 : r;
        }
        /* Remember what was looked at, so a rejected pair is not re-read on every handshake. */
        file_id_from_stat(&cst, &src->cert_id);
        file_id_from_stat(&kst, &src->key_id);
        r = tls_pair_import(cert, cert_len, key, key_len, &pair);
        free(cert);
        free_secret(key, key_len);
        if (r < 0)
                return src->current ? 0 : r;
        tls_pair_unref_locked(src->current);
        src->current = pair;
        src->generation++;
        return 1;
}

/* A zeroed source with its lock; NULL with *ret_err (a negative errno) on failure. Callers test
 * the pointer: clang-tidy's analyzer cannot tell that -r is below 0 for a positive r, and
 * followed a failed pthread_mutex_init() as a success when they tested a returned status. */
static struct tls_source *source_alloc(int *ret_err)
{
        struct tls_source *src = calloc(1, sizeof(*src));
        int r;

        if (!src) {
                *ret_err = -ENOMEM;
                return NULL;
        }
        r = pthread_mutex_init(&src->lock, NULL);
        if (r != 0) {
                free(src);
                *ret_err = r > 0 ? -r : -EINVAL; /* a positive errno, as pthread functions return */
                return NULL;
        }
        return src;
}

int tls_source_new(const char *cert_path, const char *key_path, struct tls_source **ret)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        int r;

        src = source_alloc(&r);
        if (!src)
                return r;
        src->cert_path = strdup(cert_path);
        src->key_path = strdup(key_path);
        if (!src->cert_path || !src->key_path)
                return -ENOMEM;
        r = tls_source_refresh_locked(src);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(src);
        return 0;
}

int tls_source_new_pem(const char *cert_pem, const char *key_pem, struct tls_source **ret)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        int r;

        src = source_alloc(&r);
        if (!src)
                return r;
        r = tls_pair_import(cert_pem, strlen(cert_pem), key_pem, strlen(key_pem), &src->current);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(src);
        return 0;
}

void tls_source_begin(struct tls_source *src, gnutls_session_t ts)
{
        if (!src || pthread_mutex_lock(&src->lock) != 0)
                return;
        (void)tls_source_refresh_locked(src);
        (void)gnutls_session_ticket_enable_server(ts, &src->current->ticket_key);
        (void)pthread_mutex_unlock(&src->lock);
}

int tls_source_pick(struct tls_source *src, struct tls_pair **slot, gnutls_pcert_st **certs,
                    unsigned *n, gnutls_privkey_t *key)
{
        struct tls_pair *pair;

        if (!src || pthread_mutex_lock(&src->lock) != 0)
                return -EINVAL;
        pair = src->current; /* the files were compared when the connection started */
        pair->refs++;
        tls_pair_unref_locked(*slot); /* a renegotiation replaces the earlier choice */
        *slot = pair;
        (void)pthread_mutex_unlock(&src->lock);
        *certs = pair->pcerts;
        *n = pair->n;
        *key = pair->key;
        return 0;
}

void tls_source_release(struct tls_source *src, struct tls_pair *pair)
{
        if (!src || !pair || pthread_mutex_lock(&src->lock) != 0)
                return;
        tls_pair_unref_locked(pair);
        (void)pthread_mutex_unlock(&src->lock);
}

uint64_t tls_source_generation(struct tls_source *src)
{
        uint64_t g;

        if (!src || !src->cert_path || pthread_mutex_lock(&src->lock) != 0)
                return 0;
        g = src->generation;
        (void)pthread_mutex_unlock(&src->lock);
        return g;
}
