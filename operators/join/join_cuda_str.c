/* join on a GPU with string keys (issue 17): keys hashed to 64 bits, proven exact, then
 * joined by the 8-byte-key kernels; output strings gathered by row id.
 *
 * Keys: a utf8/large_utf8 key, a DICT key whose dictionaries differ between batches or
 * sides, or a composite key other than two int32 columns is "hashed": every component of
 * a row (strings read through views of their offsets and bytes; DICT codes remapped onto
 * one dictionary merged on the host from every batch's, which is small; integers as they
 * are) goes into one 64-bit hash. Before the join, the (hash, row) pairs of both sides
 * are sorted and every two neighbours with equal hashes have their keys compared (bytes
 * for strings): equal hashes then mean equal keys, so no collision can join rows whose
 * keys differ, whatever the join kind (semi and anti too). A collision (about 2^-64 per
 * pair of distinct keys; certain with debug_join_weak_hash) retries once with another
 * seed, then the CPU joins (GJ_HASH_COLLIDED).
 *
 * Output strings are carried as row ids and gathered after the join (lengths, a scan,
 * the bytes: common/str_cuda.c) rather than packed into the rows: a row holds at most 16
 * bytes, and only the output rows' bytes move, once. */
#include <string.h>

#include "common/str_cuda.h"
#include "join_cuda_int.h"
#include "sluice_k/columns.h"
#include "sluice_k/join_str.h"
#include "sluice_k/sort.h"

#define SEED0 0x5851F42D4C957F2Dull

static int is_utf8(enum sl_type t)
{
    return t == SL_TYPE_UTF8 || t == SL_TYPE_LARGE_UTF8;
}

int gj_str_type(enum sl_type t)
{
    return is_utf8(t);
}

static enum sl_type side_ktype(const struct join_data *d, int s, int k)
{
    return s == 0 ? d->ktype[k] : d->rktype[k];
}

int gj_keys_hashed(const struct join_data *d, const struct join_state *st)
{
    for (int k = 0; k < d->n_keys; k++)
        if (is_utf8(d->ktype[k]) || (d->ktype[k] == SL_TYPE_DICT && !gj_key_dicts_agree(d, st, k)))
            return 1;
    if (d->n_keys == 1)
        return 0;
    return d->n_keys > 2 || join_gpu_type(d->ktype[0]) != SL_TYPE_INT32 ||
           join_gpu_type(d->ktype[1]) != SL_TYPE_INT32;
}

/* Views of string column col of side s (every batch in device memory), in batch order. */
static int side_views(sl_task_t *t, const struct join_state *st, int s, const struct gj_side *g,
                      int col, sl_k_strview_t **out)
{
    const struct join_side *sd = &st->side[s];
    sl_k_strview_t *v = sl_task_device_alloc(t, (size_t)(sd->n_rows ? sd->n_rows : 1) * sizeof *v);
    *out = v;
    if (!v)
        return SL_ENOMEM;
    int64_t at = 0;
    for (int64_t i = 0; i < sd->n_batches; i++) {
        const sl_batch_t *b = sd->batches[g->order[i]];
        int rc = sl__str_views(t, b, col, v + at);
        if (rc < 0)
            return rc;
        at += b->n_rows;
    }
    return SL_OK;
}

/* The codes of DICT key k of side s remapped onto the dictionary *u merges from both
 * sides' (src index: side 0's batches, then side 1's), in batch order. */
static int side_remapped(sl_task_t *t, const struct join_state *st, int s, const struct gj *g,
                         int k, const struct sl__dict_union *u, const int32_t *d_remap,
                         uint32_t **out)
{
    const struct join_side *sd = &st->side[s];
    uint32_t *dst = sl_task_device_alloc(t, (size_t)(sd->n_rows ? sd->n_rows : 1) * 4);
    *out = dst;
    if (!dst)
        return SL_ENOMEM;
    int64_t at = 0, first = s == 0 ? 0 : st->side[0].n_batches;
    for (int64_t i = 0; i < sd->n_batches; i++) {
        int64_t bi = g->s[s].order[i];
        const sl_batch_t *b = sd->batches[bi];
        if (b->n_rows == 0)
            continue;
        SL_TASK_CUDA_TRY(t,
                         sl_k_gather_b32((const uint32_t *)d_remap + u->src[first + bi].base,
                                         sl__col_values(b, g->d->key[s][k]), dst + at, b->n_rows,
                                         sl_task_stream(t)),
                         "remapping dictionary codes");
        at += b->n_rows;
    }
    return SL_OK;
}

/* The merged dictionary of DICT key k over both sides, and its remap table on the GPU. */
static int key_union(sl_task_t *t, const struct join_state *st, int k, struct sl__dict_union *u,
                     int32_t **d_remap)
{
    int64_t n = st->side[0].n_batches + st->side[1].n_batches;
    sl_batch_t **bs = sl_task_alloc(t, (size_t)(n ? n : 1) * sizeof *bs);
    int *cols = sl_task_alloc(t, (size_t)(n ? n : 1) * sizeof *cols);
    int rc = bs && cols ? SL_OK : SL_ENOMEM;
    for (int64_t i = 0, j = 0; rc == SL_OK && i < 2; i++)
        for (int64_t b = 0; b < st->side[i].n_batches; b++, j++) {
            bs[j] = st->side[i].batches[b];
            cols[j] = st->d->key[i][k];
        }
    if (rc == SL_OK)
        rc = sl__dict_union_init_cols(u, bs, n, 0, cols);
    sl_task_free(t, bs);
    sl_task_free(t, cols);
    if (rc < 0)
        return sl_task_fail(t, rc, "merging the dictionaries of join key %d", k);
    int64_t entries = 0;
    for (int64_t i = 0; i < n; i++)
        if (u->src[i].base + u->src[i].n > entries)
            entries = u->src[i].base + u->src[i].n;
    if (!(*d_remap = sl_task_device_alloc(t, (size_t)(entries ? entries : 1) * 4)))
        return SL_ENOMEM;
    if (entries > 0)
        SL_TASK_CUDA_TRY(t, cudaMemcpyAsync(*d_remap, u->remap, (size_t)entries * 4,
                                            cudaMemcpyHostToDevice, sl_task_stream(t)),
                         "uploading a dictionary remap");
    /* the pageable source is staged before the call returns; u may go after this */
    return SL_OK;
}

/* Every key component of both sides as one array over the side's rows (kc), the arrays
 * this allocated in own[] (2 * JOIN_MAX_KEYS + JOIN_MAX_KEYS remap tables). */
static int key_columns(sl_task_t *t, const struct join_state *st, const struct gj *g,
                       sl_k_keycols_t *kc, void **own)
{
    const struct join_data *d = g->d;
    memset(kc, 0, sizeof *kc);
    kc->n = d->n_keys;
    for (int k = 0; k < d->n_keys; k++) {
        enum sl_type kt = d->ktype[k];
        int remap = kt == SL_TYPE_DICT && !gj_key_dicts_agree(d, st, k);
        struct sl__dict_union u;
        memset(&u, 0, sizeof u);
        int32_t *d_remap = NULL;
        int rc = remap ? key_union(t, st, k, &u, &d_remap) : SL_OK;
        own[2 * JOIN_MAX_KEYS + k] = d_remap;
        for (int s = 0; s < 2 && rc >= 0; s++) {
            void **o = &own[s * JOIN_MAX_KEYS + k];
            if (st->side[s].n_rows == 0) {
                kc->d[s][k] = NULL;
            } else if (is_utf8(side_ktype(d, s, k))) {
                kc->kind[k] = SL_K_KEY_STR;
                rc = side_views(t, st, s, &g->s[s], d->key[s][k], (sl_k_strview_t **)o);
                kc->d[s][k] = *o;
            } else if (remap) {
                kc->kind[k] = SL_K_KEY_B32;
                rc = side_remapped(t, st, s, g, k, &u, d_remap, (uint32_t **)o);
                kc->d[s][k] = *o;
            } else {
                kc->kind[k] = join_gpu_type(kt) == SL_TYPE_INT64 ? SL_K_KEY_B64 : SL_K_KEY_B32;
                rc = gj_side_column(t, st, s, &g->s[s], d->key[s][k], &kc->d[s][k], o);
            }
        }
        sl__dict_union_fini(&u);
        if (rc < 0)
            return rc;
    }
    return SL_OK;
}

static void free_all(sl_task_t *t, void **p, int n)
{
    for (int i = 0; i < n; i++) {
        sl_task_device_free(t, p[i]);
        p[i] = NULL;
    }
}

/* 1 in *collided when two different keys of kc share a hash in g's sides' keys. */
static int check_hashes(sl_task_t *t, struct gj *g, const sl_k_keycols_t *kc, int *collided)
{
    cudaStream_t s = sl_task_stream(t);
    const struct gj_side *A = &g->s[0], *B = &g->s[1];
    int64_t n = A->n + B->n;
    size_t need = 0;
    SL_TASK_CUDA_TRY(t, sl_k_sort_pairs(NULL, &need, 8, 0, NULL, NULL, NULL, NULL, 4, n, s),
                     "sort size");
    void *p[6] = {sl_task_device_alloc(t, (size_t)n * 8), sl_task_device_alloc(t, (size_t)n * 8),
                  sl_task_device_alloc(t, (size_t)n * 4), sl_task_device_alloc(t, (size_t)n * 4),
                  sl_task_device_alloc(t, need ? need : 8), sl_task_device_alloc(t, 8)};
    int rc = SL_OK;
    for (int i = 0; i < 6; i++)
        if (!p[i])
            rc = SL_ENOMEM;
    unsigned flag = 0;
    cudaError_t e = cudaSuccess;
    if (rc == SL_OK) {
        e = SL_TASK_CUDA_CALL(
            cudaMemcpyAsync(p[0], A->keys, (size_t)A->n * 8, cudaMemcpyDeviceToDevice, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaMemcpyAsync((char *)p[0] + A->n * 8, B->keys,
                                                  (size_t)B->n * 8, cudaMemcpyDeviceToDevice, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(sl_k_iota_u32(p[2], n, 0, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaMemsetAsync(p[5], 0, 8, s));
        size_t tb = need;
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(
                sl_k_sort_pairs(p[4], &tb, 8, 0, p[0], p[1], p[2], p[3], 4, n, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(sl_k_key_collisions(kc, p[1], p[3], n, (uint32_t)A->n, p[5], s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(
                cudaMemcpyAsync(&flag, p[5], sizeof flag, cudaMemcpyDeviceToHost, s));
        if (e == cudaSuccess)
            e = SL_TASK_CUDA_CALL(cudaStreamSynchronize(s));
        if (e != cudaSuccess)
            rc = SL_TASK_CUDA_FAIL(t, e, "checking key hashes");
    }
    free_all(t, p, 6);
    *collided = flag != 0;
    return rc;
}

int gj_hash_keys(sl_task_t *t, struct join_state *st, struct gj *g)
{
    void *own[3 * JOIN_MAX_KEYS] = {0};
    sl_k_keycols_t kc;
    int64_t weak = 0;
    sl_task_option_int(t, "debug_join_weak_hash", &weak);
    int rc = key_columns(t, st, g, &kc, own);
    for (int s = 0; s < 2 && rc >= 0; s++) {
        struct gj_side *sd = &g->s[s];
        if (sd->n == 0)
            continue;
        if (!(sd->keys_own = sl_task_device_alloc(t, (size_t)sd->n * 8)))
            rc = SL_ENOMEM;
        sd->keys = sd->keys_own;
    }
    int collided = 1;
    for (int attempt = 0; rc >= 0 && collided && attempt < 2; attempt++) {
        uint64_t seed = SEED0 + 0x9E3779B97F4A7C15ull * (uint64_t)attempt;
        for (int s = 0; s < 2 && rc >= 0; s++) {
            cudaError_t e = SL_TASK_CUDA_CALL(sl_k_key_hash(&kc, s, g->s[s].n, seed, weak != 0,
                                                            g->s[s].keys_own, sl_task_stream(t)));
            if (e != cudaSuccess)
                rc = SL_TASK_CUDA_FAIL(t, e, "hashing join keys");
        }
        collided = 0;
        if (rc >= 0 && g->s[0].n > 0 && g->s[1].n > 0)
            rc = check_hashes(t, g, &kc, &collided);
        g->hash_attempts = attempt + 1;
    }
    free_all(t, own, 3 * JOIN_MAX_KEYS);
    if (rc >= 0 && collided)
        return GJ_HASH_COLLIDED;
    return rc;
}

/* One output string column (output column oc of g's output batch b, from column col of
 * side s): the strings of rows ids[0..n), rows from `valid` on empty (left join rows
 * without a partner; their validity says null). */
int gj_gather_strings(sl_task_t *t, const struct join_state *st, const struct gj *g, int s,
                      int col, const uint32_t *ids, int64_t n, int64_t valid, sl_batch_t *b,
                      int oc)
{
    sl_k_strview_t *views = NULL;
    int rc = side_views(t, st, s, &g->s[s], col, &views);
    struct sl__str_gather one = {views, oc};
    if (rc >= 0)
        rc = sl__str_gather_columns(t, &one, 1, ids, n, valid, b, "join output");
    sl_task_device_free(t, views);
    return rc;
}
