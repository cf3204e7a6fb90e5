/* Tests the join launchers beyond the narrow PHJ (issue 6): the GFTR/packed-row PHJ
 * (sluice_k/join_gftr.h), the sort-merge join (join_smj.h) and the no-partitioning join
 * (join_npj.h), each for INNER, SEMI, ANTI and LEFT, on small random inputs with
 * duplicates on both sides, unmatched probe keys and a build key repeated past one
 * shared-memory chunk, against a CPU nested-loop reference (rows compared as sorted
 * multisets). Also a two-column pack + GFTR gather round trip, the key bitmap filter
 * (sl_k_key_bitmap_*, sl_k_select_in_range_* with a bitmap, sl_k_select_pack_*) and
 * argument errors.
 * Cases that need a GPU skip without one. Plain cudaMalloc: the launchers are tested. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_int.h"
#include "gpu_test.h"
#include "sl_test.h"
#include "sluice_k/join_filter.h"
#include "sluice_k/join_gftr.h"
#include "sluice_k/join_npj.h"
#include "sluice_k/join_smj.h"
#include "sluice_k/partition.h"

enum { ALGO_PHJ, ALGO_SMJ, ALGO_NPJ };
static const char *algo_name[] = {"phj", "smj", "npj"};

typedef struct {
    uint64_t v[4]; /* key, R payload, S payload, R valid */
} row4;

static int row_cmp(const void *a, const void *b)
{
    const row4 *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x->v[i] != y->v[i])
            return x->v[i] < y->v[i] ? -1 : 1;
    return 0;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static void *dmalloc(size_t bytes)
{
    void *p = NULL;
    CU(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

static void *down(const void *d, size_t bytes, cudaStream_t s)
{
    void *h = malloc(bytes ? bytes : 1);
    assert_non_null(h);
    if (bytes)
        CU(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    return h;
}

static void *up(const void *h, size_t bytes, cudaStream_t s)
{
    void *d = dmalloc(bytes);
    if (bytes)
        CU(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
    return d;
}

/* CPU reference rows (nested loop). */
static row4 *reference(const uint32_t *rk, const uint32_t *rv, int64_t nr, const uint32_t *sk,
                       const uint32_t *sv, int64_t ns, int kind, int64_t *n_out)
{
    int64_t cap = 1024, n = 0;
    row4 *out = malloc(cap * sizeof *out);
    for (int64_t j = 0; j < ns; j++) {
        int64_t c = 0;
        for (int64_t i = 0; i < nr; i++) {
            if (rk[i] != sk[j])
                continue;
            c++;
            if (kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT) {
                if (n == cap)
                    out = realloc(out, (cap *= 2) * sizeof *out);
                out[n++] = (row4){{sk[j], rv[i], sv[j], 1}};
            }
        }
        const int emit1 = (kind == SL_K_JOIN_SEMI && c > 0) || (kind == SL_K_JOIN_ANTI && c == 0) ||
                          (kind == SL_K_JOIN_LEFT && c == 0);
        if (emit1) {
            if (n == cap)
                out = realloc(out, (cap *= 2) * sizeof *out);
            out[n++] = (row4){{sk[j], 0, sv[j], 0}};
        }
    }
    qsort(out, n, sizeof *out, row_cmp);
    *n_out = n;
    return out;
}

static sl_k_cols_t one_col(void *p)
{
    sl_k_cols_t c;
    memset(&c, 0, sizeof c);
    c.n = 1;
    c.width[0] = 4;
    c.ptr[0] = p;
    return c;
}

/* Runs one algorithm and kind on the device: count with capacity 0, allocate, write;
 * returns the sorted rows. */
static row4 *run_join(int algo, int kind, const uint32_t *rk, const uint32_t *rv, int64_t nr,
                      const uint32_t *sk, const uint32_t *sv, int64_t ns, int64_t *n_out,
                      cudaStream_t s)
{
    const int bits = 4;
    const int with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    uint32_t *drk = up(rk, nr * 4, s), *drv = up(rv, nr * 4, s);
    uint32_t *dsk = up(sk, ns * 4, s), *dsv = up(sv, ns * 4, s);
    uint32_t *rk2 = dmalloc(nr * 4), *rv2 = dmalloc(nr * 4), *sk2 = dmalloc(ns * 4),
             *sv2 = dmalloc(ns * 4);
    int64_t *ro = dmalloc(((1 << bits) + 1) * 8), *so = dmalloc(((1 << bits) + 1) * 8);
    unsigned long long *dcnt = dmalloc(16);
    void *temp = NULL;
    size_t tb = 0, t1 = 0, t2 = 0, t3 = 0;
    sl_k_join_out_t o;
    memset(&o, 0, sizeof o);
    const int end_bit = algo == ALGO_PHJ ? bits : 32;
    if (algo != ALGO_NPJ) {
        CU(sl_k_radix_rows_k32(NULL, &t1, drk, rk2, drv, rv2, 4, nr, 0, end_bit, s));
        CU(sl_k_radix_rows_k32(NULL, &t2, dsk, sk2, dsv, sv2, 4, ns, 0, end_bit, s));
        if (algo == ALGO_PHJ)
            CU(sl_k_phj_join_k32(NULL, &t3, NULL, NULL, NULL, NULL, NULL, NULL, ns, 4, bits, bits,
                                 kind, NULL, NULL, s));
        else
            CU(sl_k_smj_count_k32(NULL, &t3, NULL, nr, NULL, ns, kind, NULL, s));
        tb = t1 > t2 ? t1 : t2;
        tb = tb > t3 ? tb : t3;
        temp = dmalloc(tb);
        size_t t = tb;
        CU(sl_k_radix_rows_k32(temp, &t, drk, rk2, drv, rv2, 4, nr, 0, end_bit, s));
        CU(sl_k_radix_rows_k32(temp, &t, dsk, sk2, dsv, sv2, 4, ns, 0, end_bit, s));
        if (algo == ALGO_PHJ) {
            CU(sl_k_partition_offsets_k32(rk2, nr, 0, bits, ro, s));
            CU(sl_k_partition_offsets_k32(sk2, ns, 0, bits, so, s));
        }
    } else {
        CU(sl_k_npj_build_k32(NULL, &tb, drk, nr, s));
        temp = dmalloc(tb);
        CU(sl_k_npj_build_k32(temp, &tb, drk, nr, s));
    }
    sl_k_cols_t rin = one_col(drv), sin = one_col(dsv);
    unsigned long long cnt[2] = {0, 0};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            o.capacity = (int64_t)cnt[0];
            o.keys = dmalloc(cnt[0] * 4);
            o.r_pos = dmalloc(cnt[0] * 4);
            o.s = one_col(dmalloc(cnt[0] * 4));
            o.r = with_r ? one_col(dmalloc(cnt[0] * 4)) : one_col(NULL);
            if (!with_r)
                o.r.n = 0;
        }
        if (algo == ALGO_PHJ) {
            CU(sl_k_phj_join_k32(temp, &tb, rk2, rv2, ro, sk2, sv2, so, ns, 4, bits, bits, kind, &o,
                                 dcnt, s));
        } else if (algo == ALGO_SMJ) {
            CU(sl_k_smj_count_k32(temp, &tb, rk2, nr, sk2, ns, kind, dcnt, s));
            CU(sl_k_smj_write_k32(temp, tb, rk2, rv2, nr, sk2, sv2, ns, 4, kind, &o, s));
        } else {
            CU(sl_k_npj_probe_k32(temp, tb, nr, &rin, dsk, ns, &sin, kind, &o, dcnt, s));
        }
        unsigned long long *h = down(dcnt, 16, s);
        if (pass == 1)
            assert_int_equal(h[0], cnt[0]); /* the same count again */
        cnt[0] = h[0];
        cnt[1] = h[1];
        free(h);
    }
    const int64_t n = (int64_t)cnt[0];
    uint32_t *gk = down(o.keys, n * 4, s), *gs = down(o.s.ptr[0], n * 4, s);
    uint32_t *gr = with_r ? down(o.r.ptr[0], n * 4, s) : NULL;
    uint32_t *gp = with_r ? down(o.r_pos, n * 4, s) : NULL;
    row4 *rows = malloc((n ? n : 1) * sizeof *rows);
    int64_t partner = 0;
    for (int64_t i = 0; i < n; i++) {
        const int valid = with_r && gp[i] != SL_K_NULL_POS;
        partner += valid;
        rows[i] = (row4){{gk[i], with_r ? gr[i] : 0, gs[i], (uint64_t)valid}};
    }
    assert_int_equal((int64_t)cnt[1], partner); /* d_count[1] = rows with an R partner */
    qsort(rows, n, sizeof *rows, row_cmp);
    *n_out = n;
    free(gk); free(gs); free(gr); free(gp);
    cudaFree(drk); cudaFree(drv); cudaFree(dsk); cudaFree(dsv); cudaFree(rk2); cudaFree(rv2);
    cudaFree(sk2); cudaFree(sv2); cudaFree(ro); cudaFree(so); cudaFree(dcnt); cudaFree(temp);
    cudaFree(o.keys); cudaFree(o.r_pos); cudaFree(o.s.ptr[0]);
    if (with_r)
        cudaFree(o.r.ptr[0]);
    return rows;
}

static void check_all_kinds(int algo)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int64_t nr = 11000, ns = 7000;
    uint32_t *rk = malloc(nr * 4), *rv = malloc(nr * 4), *sk = malloc(ns * 4), *sv = malloc(ns * 4);
    uint64_t seed = 99;
    for (int64_t i = 0; i < nr; i++) {
        /* 6000 copies of one key: more than one shared-memory build chunk (4608) */
        rk[i] = i < 6000 ? 4242u : (uint32_t)(rng_next(&seed) % 3000);
        rv[i] = (uint32_t)i;
    }
    for (int64_t j = 0; j < ns; j++) {
        sk[j] = j < 3 ? 4242u : (uint32_t)(rng_next(&seed) % 6000); /* half unmatched */
        sv[j] = (uint32_t)(j + 1000000);
    }
    for (int kind = 0; kind < 4; kind++) {
        int64_t n_ref = 0, n_got = 0;
        row4 *ref = reference(rk, rv, nr, sk, sv, ns, kind, &n_ref);
        row4 *got = run_join(algo, kind, rk, rv, nr, sk, sv, ns, &n_got, s);
        if (n_got != n_ref || (n_ref && memcmp(ref, got, n_ref * sizeof *ref)))
            fail_msg("%s kind %d: %lld rows (want %lld) or rows differ", algo_name[algo], kind,
                     (long long)n_got, (long long)n_ref);
        free(ref);
        free(got);
    }
    free(rk); free(rv); free(sk); free(sv);
    CU(cudaStreamDestroy(s));
}

SL_TEST(phj_all_kinds_match_reference) { check_all_kinds(ALGO_PHJ); }
SL_TEST(smj_all_kinds_match_reference) { check_all_kinds(ALGO_SMJ); }
SL_TEST(npj_all_kinds_match_reference) { check_all_kinds(ALGO_NPJ); }

/* pack two columns (4 + 8 bytes) into 12-byte rows, partition them with the keys, and
 * gather them back by positions: must give column j of the row at each position. */
SL_TEST(pack_partition_gather_round_trip)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int64_t n = 5000;
    uint32_t *k = malloc(n * 4), *a = malloc(n * 4), *idx = malloc(n * 4);
    uint64_t *b = malloc(n * 8), seed = 5;
    for (int64_t i = 0; i < n; i++) {
        k[i] = (uint32_t)rng_next(&seed);
        a[i] = (uint32_t)i;
        b[i] = rng_next(&seed);
        idx[i] = (uint32_t)((i * 7919) % n);
    }
    idx[3] = SL_K_NULL_POS;
    uint32_t *dk = up(k, n * 4, s), *dk2 = dmalloc(n * 4), *didx = up(idx, n * 4, s);
    void *da = up(a, n * 4, s), *db = up(b, n * 8, s), *rows = dmalloc(n * 12),
         *rows2 = dmalloc(n * 12), *oa = dmalloc(n * 4), *ob = dmalloc(n * 8);
    sl_k_cols_t in;
    memset(&in, 0, sizeof in);
    in.n = 2;
    in.width[0] = 4;
    in.width[1] = 8;
    in.ptr[0] = da;
    in.ptr[1] = db;
    CU(sl_k_pack_rows(&in, n, 12, rows, s));
    size_t tb = 0;
    CU(sl_k_radix_rows_k32(NULL, &tb, dk, dk2, rows, rows2, 12, n, 0, 6, s));
    void *temp = dmalloc(tb);
    CU(sl_k_radix_rows_k32(temp, &tb, dk, dk2, rows, rows2, 12, n, 0, 6, s));
    sl_k_cols_t out = in;
    out.ptr[0] = oa;
    out.ptr[1] = ob;
    CU(sl_k_gather_rows(rows2, 12, didx, n, &out, s));
    uint32_t *hk2 = down(dk2, n * 4, s), *ha = down(oa, n * 4, s);
    uint64_t *hb = down(ob, n * 8, s);
    /* the partitioned row at position p came from the input row a-value says */
    uint32_t *pa = malloc(n * 4);
    for (int64_t i = 0; i < n; i++)
        pa[i] = 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (idx[i] == SL_K_NULL_POS) {
            bad += ha[i] != 0 || hb[i] != 0;
            continue;
        }
        const uint32_t src = ha[i];
        bad += src >= n || hb[i] != b[src] || (hk2[idx[i]] != k[src]);
    }
    /* stability: within a partition, source rows ascend */
    uint32_t *all = malloc(n * 4);
    for (int64_t i = 0; i < n; i++)
        all[i] = (uint32_t)i;
    uint32_t *didx2 = up(all, n * 4, s);
    CU(sl_k_gather_rows(rows2, 12, didx2, n, &out, s));
    free(ha);
    ha = down(oa, n * 4, s);
    for (int64_t i = 1; i < n; i++)
        if ((hk2[i] & 63) == (hk2[i - 1] & 63))
            bad += ha[i] <= ha[i - 1];
    assert_int_equal(bad, 0);
    free(k); free(a); free(idx); free(b); free(hk2); free(ha); free(hb); free(pa); free(all);
    cudaFree(dk); cudaFree(dk2); cudaFree(didx); cudaFree(didx2); cudaFree(da); cudaFree(db);
    cudaFree(rows); cudaFree(rows2); cudaFree(oa); cudaFree(ob); cudaFree(temp);
    CU(cudaStreamDestroy(s));
}

/* Packing selected rows (sl_k_pack_rows_sel): row i takes source row sel[i] of a 4- and
 * an 8-byte column, and the id column (no pointer) is sel[i] itself; 16-byte rows. The
 * same columns without a selection (sl_k_pack_rows): the id column is i. */
SL_TEST(pack_selected_rows_with_row_ids)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int64_t n = 7000, m = 2500;
    uint32_t *a = malloc(n * 4), *sel = malloc(m * 4);
    uint64_t *b = malloc(n * 8), seed = 9;
    for (int64_t i = 0; i < n; i++) {
        a[i] = (uint32_t)rng_next(&seed);
        b[i] = rng_next(&seed);
    }
    for (int64_t i = 0; i < m; i++)
        sel[i] = (uint32_t)(i * 2 + (i % 3 == 0)); /* increasing, gaps */
    void *da = up(a, n * 4, s), *db = up(b, n * 8, s), *dsel = up(sel, m * 4, s),
         *rows = dmalloc(m * 16);
    sl_k_cols_t in;
    memset(&in, 0, sizeof in);
    in.n = 3;
    in.width[0] = 4;
    in.width[1] = 8;
    in.width[2] = 4;
    in.ptr[0] = da;
    in.ptr[1] = db;
    in.ptr[2] = NULL; /* the row id */
    CU(sl_k_pack_rows_sel(&in, dsel, m, 16, rows, s));
    uint32_t *h = down(rows, m * 16, s);
    int bad = 0;
    for (int64_t i = 0; i < m; i++) {
        uint32_t src = sel[i];
        bad += h[4 * i] != a[src] || h[4 * i + 1] != (uint32_t)b[src] ||
               h[4 * i + 2] != (uint32_t)(b[src] >> 32) || h[4 * i + 3] != src;
    }
    assert_int_equal(bad, 0);
    /* without a selection the id column is the row's own number i (sl_k_pack_rows takes
     * the NULL pointer as sl_k_pack_rows_sel does); rows filled with 0xAB first */
    CU(cudaMemsetAsync(rows, 0xAB, m * 16, s));
    CU(sl_k_pack_rows(&in, m, 16, rows, s));
    uint32_t *h2 = down(rows, m * 16, s);
    for (int64_t i = 0; i < m; i++)
        bad += h2[4 * i] != a[i] || h2[4 * i + 1] != (uint32_t)b[i] ||
               h2[4 * i + 2] != (uint32_t)(b[i] >> 32) || h2[4 * i + 3] != (uint32_t)i;
    assert_int_equal(bad, 0);
    /* an 8-byte column needs its pointer in both; the selection needs its array */
    in.ptr[1] = NULL;
    assert_int_equal(sl_k_pack_rows(&in, m, 16, rows, s), cudaErrorInvalidValue);
    assert_int_equal(sl_k_pack_rows_sel(&in, dsel, m, 16, rows, s), cudaErrorInvalidValue);
    in.ptr[1] = db;
    assert_int_equal(sl_k_pack_rows_sel(&in, NULL, m, 16, rows, s), cudaErrorInvalidValue);
    free(a); free(sel); free(b); free(h); free(h2);
    cudaFree(da); cudaFree(db); cudaFree(dsel); cudaFree(rows);
    CU(cudaStreamDestroy(s));
}

/* Wrong values among n selected outputs (keys hk, rows hr of rb bytes: the payload hv and
 * the row number; outputs filled with 0xAB first): output j must be row sel[j], nothing
 * past the n outputs written, no rows written when rb is 0. */
static int64_t selected_bad(int k8, const unsigned char *hk, const uint32_t *hr,
                            const uint64_t *pk, const uint32_t *hv, const uint32_t *sel,
                            int64_t n, int rb)
{
    size_t kw = k8 ? 8 : 4;
    int64_t bad = 0;
    for (int64_t j = 0; j < n; j++) {
        uint64_t key = 0;
        memcpy(&key, hk + j * kw, kw);
        bad += key != (k8 ? pk[sel[j]] : (uint32_t)pk[sel[j]]);
        if (rb)
            bad += hr[2 * j] != hv[sel[j]] || hr[2 * j + 1] != sel[j];
    }
    for (size_t b = 0; b < kw; b++) /* past the outputs: untouched */
        bad += hk[n * kw + b] != 0xAB;
    bad += hr[2 * n] != 0xABABABABu || hr[2 * n + 1] != 0xABABABABu;
    if (!rb && n > 0)
        bad += hr[0] != 0xABABABABu; /* keys alone: no rows written */
    return bad;
}

/* What both selects below pack and write: a payload column (value i: i * 2654435761 +
 * add) and the row number (kc.ptr[1] NULL), as 8-byte rows; the count's word. */
struct select_in {
    uint32_t *hv;
    void *dv;
    sl_k_cols_t kc;
    int64_t *dcount;
};

static void select_in_init(struct select_in *in, int64_t np, uint32_t add, cudaStream_t s)
{
    in->hv = malloc((size_t)(np + 1) * 4);
    for (int64_t i = 0; i < np; i++)
        in->hv[i] = (uint32_t)i * 2654435761u + add;
    in->dv = up(in->hv, (size_t)np * 4, s);
    memset(&in->kc, 0, sizeof in->kc);
    in->kc.n = 2;
    in->kc.width[0] = in->kc.width[1] = 4;
    in->kc.ptr[0] = in->dv; /* kc.ptr[1] NULL: the row's number */
    in->dcount = dmalloc(8);
}

static void select_in_fini(struct select_in *in)
{
    free(in->hv);
    cudaFree(in->dv);
    cudaFree(in->dcount);
}

/* Outputs of cap rows and one past them (keys of kw bytes, 8-byte rows), filled with 0xAB. */
struct select_out {
    void *ko, *ro;
    int64_t cap;
    size_t kw;
};

static void select_out_init(struct select_out *o, int64_t cap, size_t kw, cudaStream_t s)
{
    o->cap = cap;
    o->kw = kw;
    o->ko = dmalloc((size_t)(cap + 1) * kw);
    o->ro = dmalloc((size_t)(cap + 1) * 8);
    CU(cudaMemsetAsync(o->ko, 0xAB, (size_t)(cap + 1) * kw, s));
    CU(cudaMemsetAsync(o->ro, 0xAB, (size_t)(cap + 1) * 8, s));
}

/* Checks the outputs against the selection (selected_bad) and frees them. */
static void select_out_check(struct select_out *o, int k8, const uint64_t *pk,
                             const struct select_in *in, const uint32_t *sel, int rb,
                             cudaStream_t s)
{
    unsigned char *hk = down(o->ko, (size_t)(o->cap + 1) * o->kw, s);
    uint32_t *hr = down(o->ro, (size_t)(o->cap + 1) * 8, s);
    assert_int_equal(selected_bad(k8, hk, hr, pk, in->hv, sel, o->cap, rb), 0);
    free(hk);
    free(hr);
    cudaFree(o->ko);
    cudaFree(o->ro);
}

/* The fused select (sl_k_select_pack_*) against the selection sel[0 .. m) that
 * sl_k_select_in_range_* made: keys, and rows of a payload column and the row number; all
 * rows, outputs of half of them (the count still m, nothing written past them), keys
 * alone. */
static void select_pack_check(int k8, const void *dpk, const uint64_t *pk, int64_t np,
                              uint64_t kmin, uint64_t range, const uint32_t *bm,
                              const uint32_t *sel, int64_t m, cudaStream_t s)
{
    struct select_in in;
    select_in_init(&in, np, 1, s);
    for (int v = 0; v < 3; v++) {
        int64_t cap = v == 1 ? m / 2 : m;
        int rb = v == 2 ? 0 : 8;
        struct select_out o;
        select_out_init(&o, cap, k8 ? 8 : 4, s);
        size_t tb = 0;
        CU(k8 ? sl_k_select_pack_k64(NULL, &tb, dpk, np, kmin, range, bm, &in.kc, rb, NULL, NULL,
                                     cap, NULL, s)
              : sl_k_select_pack_k32(NULL, &tb, dpk, np, (uint32_t)kmin, range, bm, &in.kc, rb,
                                     NULL, NULL, cap, NULL, s));
        void *temp = dmalloc(tb);
        CU(k8 ? sl_k_select_pack_k64(temp, &tb, dpk, np, kmin, range, bm, &in.kc, rb, o.ko, o.ro,
                                     cap, in.dcount, s)
              : sl_k_select_pack_k32(temp, &tb, dpk, np, (uint32_t)kmin, range, bm, &in.kc, rb,
                                     o.ko, o.ro, cap, in.dcount, s));
        int64_t *hc = down(in.dcount, 8, s);
        assert_int_equal(*hc, m);
        select_out_check(&o, k8, pk, &in, sel, rb, s);
        free(hc);
        cudaFree(temp);
    }
    select_in_fini(&in);
}

/* The two-pass select (sl_k_select_mask_*, then _write) of the rows sel[0..m) that
 * sl_k_select_in_range_* selected: the count, each kept row's key and packed row (a
 * payload column and the row number), keys alone, nothing written past the m rows, and
 * the bitmap _write sets of the kept keys against one set from them on the host. */
static void select_two_pass_check(int k8, const void *dpk, const uint64_t *pk, int64_t np,
                                  uint64_t kmin, uint64_t range, const uint32_t *bm,
                                  const uint32_t *sel, int64_t m, cudaStream_t s)
{
    size_t words = (size_t)((range + 31) / 32);
    uint32_t *ref = calloc(words + 1, 4);
    for (int64_t j = 0; j < m; j++) {
        uint64_t d = k8 ? pk[sel[j]] - kmin : (uint32_t)((uint32_t)pk[sel[j]] - (uint32_t)kmin);
        ref[d >> 5] |= 1u << (d & 31);
    }
    struct select_in in;
    select_in_init(&in, np, 7, s);
    uint32_t *bout = dmalloc(words * 4 + 4);
    size_t tb = 0;
    CU(k8 ? sl_k_select_mask_k64(NULL, &tb, dpk, np, kmin, range, bm, NULL, s)
          : sl_k_select_mask_k32(NULL, &tb, dpk, np, (uint32_t)kmin, range, bm, NULL, s));
    void *temp = dmalloc(tb);
    CU(k8 ? sl_k_select_mask_k64(temp, &tb, dpk, np, kmin, range, bm, in.dcount, s)
          : sl_k_select_mask_k32(temp, &tb, dpk, np, (uint32_t)kmin, range, bm, in.dcount, s));
    int64_t *hc = down(in.dcount, 8, s);
    assert_int_equal(*hc, m);
    for (int v = 0; v < 2; v++) { /* rows of 8 bytes with the bitmap, then keys alone */
        int rb = v == 0 ? 8 : 0;
        struct select_out o;
        select_out_init(&o, m, k8 ? 8 : 4, s);
        CU(cudaMemsetAsync(bout, 0, words * 4 + 4, s));
        uint32_t *bo = v == 0 ? bout : NULL;
        CU(k8 ? sl_k_select_write_k64(temp, tb, dpk, np, &in.kc, rb, o.ko, o.ro, bo, kmin, range,
                                      s)
              : sl_k_select_write_k32(temp, tb, dpk, np, &in.kc, rb, o.ko, o.ro, bo,
                                      (uint32_t)kmin, range, s));
        select_out_check(&o, k8, pk, &in, sel, rb, s);
        uint32_t *hb = down(bout, words * 4 + 4, s);
        if (v == 0)
            assert_memory_equal(hb, ref, words * 4 + 4);
        else
            for (size_t w = 0; w <= words; w++) /* no bitmap asked: none set */
                assert_int_equal(hb[w], 0);
        free(hb);
    }
    free(hc);
    free(ref);
    select_in_fini(&in);
    cudaFree(temp);
    cudaFree(bout);
}

/* The key bitmap filter (join_filter.h) against a host reference: a bitmap of "build"
 * keys over [kmin, kmin + range) (duplicates, a hot key, keys outside the range on both
 * ends), then the "probe" rows in range whose bit is set, and those in range alone (CUB's
 * select, the fused select and the two-pass select); 4- and 8-byte keys (the 8-byte ones
 * past 2^32); no rows, one row, no matches, rows past whole tiles of the two-pass select. */
static void bitmap_case(int k8, int64_t nb, int64_t np, uint64_t kmin, uint64_t range,
                        uint64_t span, uint64_t seed)
{
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t kw = k8 ? 8 : 4, words = (size_t)((range + 31) / 32);
    uint64_t *bk = malloc((size_t)(nb + 1) * 8), *pk = malloc((size_t)(np + 1) * 8);
    unsigned char *hb = malloc((size_t)(nb + 1) * kw), *hp = malloc((size_t)(np + 1) * kw);
    uint32_t *ref = calloc(words + 1, 4);
    for (int64_t i = 0; i < nb; i++) { /* a quarter of the rows one hot key */
        bk[i] = kmin - span / 4 + rng_next(&seed) % span;
        if (i % 4 == 1)
            bk[i] = kmin + range / 2;
        if (!k8)
            bk[i] = (uint32_t)bk[i];
    }
    for (int64_t i = 0; i < np; i++)
        pk[i] = k8 ? kmin - span / 4 + rng_next(&seed) % span
                   : (uint32_t)(kmin - span / 4 + rng_next(&seed) % span);
    for (int64_t i = 0; i < nb; i++) {
        uint64_t d = k8 ? bk[i] - kmin : (uint32_t)((uint32_t)bk[i] - (uint32_t)kmin);
        if (d < range)
            ref[d >> 5] |= 1u << (d & 31);
        if (k8)
            memcpy(hb + i * 8, &bk[i], 8);
        else {
            uint32_t x = (uint32_t)bk[i];
            memcpy(hb + i * 4, &x, 4);
        }
    }
    for (int64_t i = 0; i < np; i++) {
        if (k8)
            memcpy(hp + i * 8, &pk[i], 8);
        else {
            uint32_t x = (uint32_t)pk[i];
            memcpy(hp + i * 4, &x, 4);
        }
    }
    void *dbk = up(hb, (size_t)nb * kw, s), *dpk = up(hp, (size_t)np * kw, s);
    uint32_t *bm = dmalloc(words * 4), *idx = dmalloc((size_t)np * 4);
    int64_t *dcount = dmalloc(8);
    CU(cudaMemsetAsync(bm, 0, words * 4, s));
    CU(k8 ? sl_k_key_bitmap_k64(dbk, nb, kmin, range, bm, s)
          : sl_k_key_bitmap_k32(dbk, nb, (uint32_t)kmin, range, bm, s));
    uint32_t *got = down(bm, words * 4, s);
    assert_memory_equal(got, ref, words * 4);
    for (int with_bm = 0; with_bm < 2; with_bm++) {
        size_t tb = 0;
        const uint32_t *b = with_bm ? bm : NULL;
        CU(k8 ? sl_k_select_in_range_k64(NULL, &tb, dpk, np, kmin, range, b, NULL, NULL, s)
              : sl_k_select_in_range_k32(NULL, &tb, dpk, np, (uint32_t)kmin, range, b, NULL, NULL,
                                         s));
        void *temp = dmalloc(tb);
        CU(k8 ? sl_k_select_in_range_k64(temp, &tb, dpk, np, kmin, range, b, idx, dcount, s)
              : sl_k_select_in_range_k32(temp, &tb, dpk, np, (uint32_t)kmin, range, b, idx, dcount,
                                         s));
        int64_t *hc = down(dcount, 8, s);
        uint32_t *hi = down(idx, (size_t)np * 4, s);
        int64_t m = 0, bad = 0;
        for (int64_t i = 0; i < np; i++) {
            uint64_t d = k8 ? pk[i] - kmin : (uint32_t)((uint32_t)pk[i] - (uint32_t)kmin);
            if (d < range && (!with_bm || (ref[d >> 5] >> (d & 31) & 1))) {
                bad += m >= *hc || hi[m] != (uint32_t)i;
                m++;
            }
        }
        assert_int_equal(bad, 0);
        assert_int_equal(*hc, m);
        select_pack_check(k8, dpk, pk, np, kmin, range, b, hi, m, s);
        select_two_pass_check(k8, dpk, pk, np, kmin, range, b, hi, m, s);
        free(hc);
        free(hi);
        cudaFree(temp);
    }
    free(bk); free(pk); free(hb); free(hp); free(ref); free(got);
    cudaFree(dbk); cudaFree(dpk); cudaFree(bm); cudaFree(idx); cudaFree(dcount);
    CU(cudaStreamDestroy(s));
}

SL_TEST(key_bitmap_filter_matches_reference)
{
    REQUIRE_GPU();
    bitmap_case(0, 20000, 50000, 1000, 70001, 140000, 11);       /* int32 */
    bitmap_case(1, 30000, 40000, (1ull << 33) + 5, 100000, 400000, 12); /* int64 past 2^32 */
    bitmap_case(0, 1, 1000, 7, 1, 8, 13);                         /* one build key */
    bitmap_case(0, 0, 1000, 0, 64, 128, 14);                      /* no build keys: none kept */
    bitmap_case(1, 1000, 0, 0, 4096, 8192, 15);                   /* no probe rows */
    bitmap_case(0, 5000, 1, 100, 5000, 10000, 16);                /* one probe row */
    bitmap_case(0, 30000, 3 * 4096 + 33, 500, 40000, 50000, 17);  /* past 3 tiles of 4,096 */
    bitmap_case(1, 20000, 2 * 4096, 1u << 31, 30000, 31000, 18);  /* 2 tiles, most kept */
}

SL_TEST(ext_launchers_reject_bad_arguments)
{
    size_t tb = 0;
    sl_k_join_out_t o;
    memset(&o, 0, sizeof o);
    /* argument checks happen before any CUDA call: no GPU needed */
    assert_int_equal(sl_k_phj_join_k32(NULL, &tb, NULL, NULL, NULL, NULL, NULL, NULL, 10, 6, 8, 8,
                                       SL_K_JOIN_INNER, &o, NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_phj_join_k32(NULL, &tb, NULL, NULL, NULL, NULL, NULL, NULL, 10, 4, 8, 8, 9,
                                       &o, NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_radix_rows_k32(NULL, &tb, NULL, NULL, NULL, NULL, 20, 10, 0, 8, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_radix_rows_k64(NULL, &tb, NULL, NULL, NULL, NULL, 8, 10, 0, 65, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_smj_count_k32(NULL, &tb, NULL, 10, NULL, 10, 7, NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_smj_write_k32(NULL, 0, NULL, NULL, 10, NULL, NULL, 10, 4, 0, &o, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_npj_build_k32(NULL, NULL, NULL, 10, 0), cudaErrorInvalidValue);
    assert_int_equal(sl_k_key_bitmap_k32(NULL, 10, 0, 64, NULL, 0), cudaErrorInvalidValue);
    assert_int_equal(sl_k_key_bitmap_k64((uint64_t *)16, 10, 0, 0, (uint32_t *)16, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_npj_probe_k32(NULL, 0, 10, NULL, NULL, 10, NULL, 0, &o, NULL, 0),
                     cudaErrorInvalidValue);
    sl_k_cols_t c;
    memset(&c, 0, sizeof c);
    c.n = 1;
    c.width[0] = 8;
    c.ptr[0] = (void *)16;
    assert_int_equal(sl_k_pack_rows(&c, 10, 4, (void *)16, 0), cudaErrorInvalidValue);
    c.width[0] = 6;
    assert_int_equal(sl_k_gather_rows((void *)16, 8, (uint32_t *)16, 10, &c, 0),
                     cudaErrorInvalidValue);
    /* the direct table with values: a packed row of more than 16 bytes, or of an odd
     * width, is refused; sizes: values, bitmap, duplicate word */
    c.width[0] = 8;
    c.n = 3;
    c.width[1] = c.width[2] = 4;
    c.ptr[1] = c.ptr[2] = (void *)16;
    size_t need = 0;
    assert_int_equal(sl_k_npj_dval_build_k32(NULL, &need, NULL, SL_K_NPJ_DVAL_PACKED, &c, 10, 0,
                                             1024, 0),
                     cudaSuccess);
    assert_int_equal(need, 1024 * 16 + 128 + 16);
    c.width[2] = 8;
    assert_int_equal(sl_k_npj_dval_build_k32(NULL, &need, NULL, SL_K_NPJ_DVAL_PACKED, &c, 10, 0,
                                             1024, 0),
                     cudaErrorInvalidValue);
    c.n = 1;
    c.width[0] = 6;
    assert_int_equal(sl_k_npj_dval_build_k64(NULL, &need, NULL, SL_K_NPJ_DVAL_PACKED, &c, 10, 0,
                                             1024, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_npj_dval_build_k64(NULL, &need, NULL, SL_K_NPJ_DVAL_NONE, NULL, 10, 0,
                                             1000, 0),
                     cudaSuccess);
    assert_int_equal(need, 128 + 16);
    assert_int_equal(sl_k_npj_dval_probe_k32((void *)16, 0, 10, 0, 1024, SL_K_NPJ_DVAL_NONE, &c,
                                             NULL, 10, &c, 0, &o, NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_npj_dval_build_k32(NULL, &need, NULL, 1, &c, 10, 0, 1024, 0),
                     cudaErrorInvalidValue); /* values: none (0) or packed (2) */
    /* the fused select: a 6-byte column, rows past 16 bytes, a negative cap, no outputs */
    assert_int_equal(sl_k_select_pack_k32(NULL, &tb, NULL, 10, 0, 64, NULL, &c, 8, NULL, NULL, 10,
                                          NULL, 0),
                     cudaErrorInvalidValue);
    c.width[0] = 4;
    assert_int_equal(sl_k_select_pack_k64(NULL, &tb, NULL, 10, 0, 64, NULL, &c, 20, NULL, NULL, 10,
                                          NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_select_pack_k32(NULL, &tb, NULL, 10, 0, 64, NULL, &c, 4, NULL, NULL, -1,
                                          NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_select_pack_k32((void *)16, &tb, (uint32_t *)16, 10, 0, 64, NULL, &c, 4,
                                          NULL, NULL, 10, (int64_t *)16, 0),
                     cudaErrorInvalidValue);
    /* the two-pass select: no size, no count, no keys; a 6-byte column, a bitmap of no
     * bits, no outputs */
    assert_int_equal(sl_k_select_mask_k32(NULL, NULL, (uint32_t *)16, 10, 0, 64, NULL, NULL, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_select_mask_k64((void *)16, &tb, (uint64_t *)16, 10, 0, 64, NULL, NULL,
                                          0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_select_mask_k32((void *)16, &tb, NULL, 10, 0, 64, NULL, (int64_t *)16,
                                          0),
                     cudaErrorInvalidValue);
    c.width[0] = 6;
    assert_int_equal(sl_k_select_write_k32((void *)16, 1 << 20, (uint32_t *)16, 10, &c, 8,
                                           (uint32_t *)16, (void *)16, NULL, 0, 64, 0),
                     cudaErrorInvalidValue);
    c.width[0] = 4;
    assert_int_equal(sl_k_select_write_k64((void *)16, 1 << 20, (uint64_t *)16, 10, &c, 4,
                                           (uint64_t *)16, (void *)16, (uint32_t *)16, 0, 0, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_select_write_k32((void *)16, 1 << 20, (uint32_t *)16, 10, &c, 4, NULL,
                                           NULL, NULL, 0, 64, 0),
                     cudaErrorInvalidValue);
}
