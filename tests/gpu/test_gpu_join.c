/* Tests the GPU radix partitioner and partitioned hash join kernels (kernels/partition,
 * kernels/join; issue 6) through their launchers on small random inputs against CPU
 * references: partitions must equal a stable sort by the partition bits (every method,
 * several passes), offsets must match a histogram; joins must produce exactly the
 * reference's rows (duplicates on both sides, probe keys without partner, a build
 * partition several shared-memory chunks large), honour the output capacity, and the
 * count+sum variant must match. Cases skip without a usable GPU.
 *
 * Plain cudaMalloc here (not the runtime's pools): the launchers are what is tested. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_int.h"
#include "gpu_test.h"
#include "sl_test.h"
#include "sluice_k/join.h"
#include "sluice_k/partition.h"

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

/* ---- partition: u32 keys/u32 values and u64 keys/u32 values ---- */

/* spread > 0: keys drawn from [0, spread) only (skew: few partitions hold every row). */
static void check_partition_u32(int64_t n, int b0, int bits, int bpp, int method, uint64_t seed,
                                uint32_t spread, cudaStream_t s)
{
    uint32_t *hk = malloc(n * 4 + 4), *hv = malloc(n * 4 + 4);
    for (int64_t i = 0; i < n; i++) {
        hk[i] = (i % 5 == 4) ? hk[i - 1] : (uint32_t)rng_next(&seed);
        if (spread)
            hk[i] %= spread;
        hv[i] = (uint32_t)i;
    }
    uint32_t *dk = dmalloc(n * 4), *dv = dmalloc(n * 4), *dko = dmalloc(n * 4), *dvo = dmalloc(n * 4);
    const int64_t P = (int64_t)1 << bits;
    int64_t *doff = dmalloc((P + 1) * 8);
    CU(cudaMemcpyAsync(dk, hk, n * 4, cudaMemcpyHostToDevice, s));
    CU(cudaMemcpyAsync(dv, hv, n * 4, cudaMemcpyHostToDevice, s));
    size_t tb = 0;
    CU(sl_k_partition_pairs_k32_v32(NULL, &tb, dk, dko, dv, dvo, n, b0, bits, bpp, method, s));
    void *dt = dmalloc(tb);
    CU(sl_k_partition_pairs_k32_v32(dt, &tb, dk, dko, dv, dvo, n, b0, bits, bpp, method, s));
    CU(sl_k_partition_offsets_k32(dko, n, b0, bits, doff, s));
    uint32_t *gk = down(dko, n * 4, s), *gv = down(dvo, n * 4, s);
    int64_t *go = down(doff, (P + 1) * 8, s);
    /* reference: counting sort by digit (stable) */
    int64_t *off = calloc(P + 1, 8);
    for (int64_t i = 0; i < n; i++)
        off[((hk[i] >> b0) & (P - 1)) + 1]++;
    for (int64_t p = 1; p <= P; p++)
        off[p] += off[p - 1];
    for (int64_t p = 0; p <= P; p++)
        assert_int_equal(go[p], off[p]);
    int64_t *pos = malloc((P + 1) * 8);
    memcpy(pos, off, (P + 1) * 8);
    for (int64_t i = 0; i < n; i++) {
        int64_t at = pos[(hk[i] >> b0) & (P - 1)]++;
        assert_int_equal(gk[at], hk[i]);
        assert_int_equal(gv[at], hv[i]);
    }
    free(hk); free(hv); free(gk); free(gv); free(go); free(off); free(pos);
    cudaFree(dk); cudaFree(dv); cudaFree(dko); cudaFree(dvo); cudaFree(doff); cudaFree(dt);
}

SL_TEST(partition_u32_matches_stable_sort)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* SL_K_PART_CUB, SL_K_PART_OWN, SL_K_PART_CHAIN */
    for (int m = 0; m < 3; m++) {
        check_partition_u32(0, 0, 4, 4, m, 1, 0, s);
        check_partition_u32(1, 0, 4, 4, m, 2, 0, s);
        check_partition_u32(100003, 3, 10, 4, m, 3, 0, s); /* 3 passes (own), 2 (chain) */
        check_partition_u32(70000, 0, 15, 8, m, 4, 0, s);
        check_partition_u32(5000, 24, 8, 8, m, 5, 0, s);
        check_partition_u32(4096, 0, 15, 8, m, 6, 0, s);    /* one whole chain tile */
        check_partition_u32(300007, 0, 16, 8, m, 7, 0, s);  /* 74 tiles, 2 x 8 bits */
        check_partition_u32(300007, 0, 15, 8, m, 8, 3, s);  /* three keys: skew */
        check_partition_u32(200000, 16, 16, 8, m, 9, 0, s); /* the top bits */
        check_partition_u32(1000, 5, 1, 1, m, 10, 0, s);     /* 2 partitions */
    }
    CU(cudaStreamDestroy(s));
}

SL_TEST(partition_u64_keys)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int64_t n = 50001;
    const int b0 = 37, bits = 9;
    uint64_t seed = 9;
    uint64_t *hk = malloc(n * 8);
    uint32_t *hv = malloc(n * 4);
    for (int64_t i = 0; i < n; i++) {
        hk[i] = rng_next(&seed);
        hv[i] = (uint32_t)i;
    }
    for (int m = 0; m < 3; m++) {
        uint64_t *dk = dmalloc(n * 8), *dko = dmalloc(n * 8);
        uint32_t *dv = dmalloc(n * 4), *dvo = dmalloc(n * 4);
        int64_t *doff = dmalloc(((1 << bits) + 1) * 8);
        CU(cudaMemcpyAsync(dk, hk, n * 8, cudaMemcpyHostToDevice, s));
        CU(cudaMemcpyAsync(dv, hv, n * 4, cudaMemcpyHostToDevice, s));
        size_t tb = 0;
        CU(sl_k_partition_pairs_k64_v32(NULL, &tb, dk, dko, dv, dvo, n, b0, bits, 5, m, s));
        void *dt = dmalloc(tb);
        CU(sl_k_partition_pairs_k64_v32(dt, &tb, dk, dko, dv, dvo, n, b0, bits, 5, m, s));
        CU(sl_k_partition_offsets_k64(dko, n, b0, bits, doff, s));
        uint64_t *gk = down(dko, n * 8, s);
        uint32_t *gv = down(dvo, n * 4, s);
        int64_t *go = down(doff, ((1 << bits) + 1) * 8, s);
        int64_t pos[(1 << 9) + 1] = {0};
        for (int64_t i = 0; i < n; i++)
            pos[((hk[i] >> b0) & ((1 << bits) - 1)) + 1]++;
        for (int p = 1; p <= (1 << bits); p++)
            pos[p] += pos[p - 1];
        for (int p = 0; p <= (1 << bits); p++)
            assert_int_equal(go[p], pos[p]);
        for (int64_t i = 0; i < n; i++) {
            int64_t at = pos[(hk[i] >> b0) & ((1 << bits) - 1)]++;
            assert_true(gk[at] == hk[i]);
            assert_int_equal(gv[at], hv[i]);
        }
        free(gk); free(gv); free(go);
        cudaFree(dk); cudaFree(dko); cudaFree(dv); cudaFree(dvo); cudaFree(doff); cudaFree(dt);
    }
    free(hk); free(hv);
    CU(cudaStreamDestroy(s));
}

/* ---- join (u32 keys, u32 values) ---- */

struct row {
    uint32_t k, r, s;
};

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    if (x->r != y->r)
        return x->r < y->r ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

static void check_join_u32(const uint32_t *rk, const uint32_t *rv, int64_t nr, const uint32_t *sk,
                           const uint32_t *sv, int64_t ns, int bits, int method, cudaStream_t s)
{
    /* CPU reference, nested by partition would be simpler but slow: sort R by key. */
    struct row *rs = malloc((nr + 1) * sizeof *rs);
    for (int64_t i = 0; i < nr; i++)
        rs[i] = (struct row){rk[i], rv[i], 0};
    qsort(rs, nr, sizeof *rs, row_cmp);
    int64_t cap_ref = 1024, n_ref = 0;
    struct row *ref = malloc(cap_ref * sizeof *ref);
    unsigned long long sums[4] = {0, 0, 0, 0};
    for (int64_t j = 0; j < ns; j++) {
        int64_t lo = 0, hi = nr;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (rs[mid].k < sk[j])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int64_t i = lo; i < nr && rs[i].k == sk[j]; i++) {
            if (n_ref == cap_ref)
                ref = realloc(ref, (cap_ref *= 2) * sizeof *ref);
            ref[n_ref++] = (struct row){sk[j], rs[i].r, sv[j]};
            sums[1] += sk[j];
            sums[2] += rs[i].r;
            sums[3] += sv[j];
        }
    }
    sums[0] = n_ref;
    qsort(ref, n_ref, sizeof *ref, row_cmp);

    const int64_t P = (int64_t)1 << bits;
    uint32_t *drk = dmalloc(nr * 4), *drv = dmalloc(nr * 4), *dsk = dmalloc(ns * 4), *dsv = dmalloc(ns * 4);
    uint32_t *drk2 = dmalloc(nr * 4), *drv2 = dmalloc(nr * 4), *dsk2 = dmalloc(ns * 4), *dsv2 = dmalloc(ns * 4);
    int64_t *dro = dmalloc((P + 1) * 8), *dso = dmalloc((P + 1) * 8);
    if (nr)
        CU(cudaMemcpyAsync(drk, rk, nr * 4, cudaMemcpyHostToDevice, s));
    if (nr)
        CU(cudaMemcpyAsync(drv, rv, nr * 4, cudaMemcpyHostToDevice, s));
    if (ns)
        CU(cudaMemcpyAsync(dsk, sk, ns * 4, cudaMemcpyHostToDevice, s));
    if (ns)
        CU(cudaMemcpyAsync(dsv, sv, ns * 4, cudaMemcpyHostToDevice, s));
    size_t t1 = 0, t2 = 0, t3 = 0;
    CU(sl_k_partition_pairs_k32_v32(NULL, &t1, drk, drk2, drv, drv2, nr, 0, bits, 8, method, s));
    CU(sl_k_partition_pairs_k32_v32(NULL, &t2, dsk, dsk2, dsv, dsv2, ns, 0, bits, 8, method, s));
    CU(sl_k_phj_materialize_k32_v32(NULL, &t3, NULL, NULL, NULL, NULL, NULL, NULL, bits, bits,
                                    NULL, NULL, NULL, 0, NULL, s));
    size_t tb = t1 > t2 ? t1 : t2;
    tb = tb > t3 ? tb : t3;
    void *dt = dmalloc(tb);
    CU(sl_k_partition_pairs_k32_v32(dt, &tb, drk, drk2, drv, drv2, nr, 0, bits, 8, method, s));
    CU(sl_k_partition_offsets_k32(drk2, nr, 0, bits, dro, s));
    CU(sl_k_partition_pairs_k32_v32(dt, &tb, dsk, dsk2, dsv, dsv2, ns, 0, bits, 8, method, s));
    CU(sl_k_partition_offsets_k32(dsk2, ns, 0, bits, dso, s));
    unsigned long long *dcnt = dmalloc(4 * sizeof *dcnt);

    /* capacity 0: only the count */
    CU(sl_k_phj_materialize_k32_v32(dt, &tb, drk2, drv2, dro, dsk2, dsv2, dso, bits, bits, NULL,
                                    NULL, NULL, 0, dcnt, s));
    unsigned long long *cnt = down(dcnt, sizeof *cnt, s);
    assert_int_equal(*cnt, n_ref);
    free(cnt);
    /* exact capacity, poisoned output */
    uint32_t *ok = dmalloc(n_ref * 4 + 4), *orv = dmalloc(n_ref * 4 + 4), *osv = dmalloc(n_ref * 4 + 4);
    CU(cudaMemsetAsync(ok, 0xAB, n_ref * 4 + 4, s));
    CU(cudaMemsetAsync(orv, 0xAB, n_ref * 4, s));
    CU(cudaMemsetAsync(osv, 0xAB, n_ref * 4, s));
    CU(sl_k_phj_materialize_k32_v32(dt, &tb, drk2, drv2, dro, dsk2, dsv2, dso, bits, bits, ok,
                                    orv, osv, n_ref, dcnt, s));
    cnt = down(dcnt, sizeof *cnt, s);
    assert_int_equal(*cnt, n_ref);
    free(cnt);
    uint32_t *gk = down(ok, n_ref * 4 + 4, s), *gr = down(orv, n_ref * 4, s), *gs = down(osv, n_ref * 4, s);
    assert_int_equal(gk[n_ref], 0xABABABABu); /* nothing past the capacity */
    struct row *got = malloc((n_ref + 1) * sizeof *got);
    for (int64_t i = 0; i < n_ref; i++)
        got[i] = (struct row){gk[i], gr[i], gs[i]};
    qsort(got, n_ref, sizeof *got, row_cmp);
    for (int64_t i = 0; i < n_ref; i++)
        assert_int_equal(row_cmp(&got[i], &ref[i]), 0);
    /* count + sums */
    CU(sl_k_phj_count_sum_k32_v32(dt, &tb, drk2, drv2, dro, dsk2, dsv2, dso, bits, bits, dcnt, s));
    unsigned long long *agg = down(dcnt, 4 * sizeof *agg, s);
    for (int i = 0; i < 4; i++)
        assert_true(agg[i] == sums[i]);
    free(agg); free(gk); free(gr); free(gs); free(got); free(ref); free(rs);
    cudaFree(drk); cudaFree(drv); cudaFree(dsk); cudaFree(dsv); cudaFree(drk2); cudaFree(drv2);
    cudaFree(dsk2); cudaFree(dsv2); cudaFree(dro); cudaFree(dso); cudaFree(dt); cudaFree(dcnt);
    cudaFree(ok); cudaFree(orv); cudaFree(osv);
}

SL_TEST(join_duplicates_and_nonmatching)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int64_t n = 60000;
    uint64_t seed = 17;
    uint32_t *rk = malloc(n * 4), *rv = malloc(n * 4), *sk = malloc(n * 4), *sv = malloc(n * 4);
    for (int64_t i = 0; i < n; i++) {
        rk[i] = (uint32_t)(rng_next(&seed) % (n / 2)); /* ~2 build rows per key */
        rv[i] = (uint32_t)rng_next(&seed);
        sk[i] = (uint32_t)(rng_next(&seed) % n); /* half without partner */
        sv[i] = (uint32_t)rng_next(&seed);
    }
    for (int m = 0; m < 2; m++) {
        check_join_u32(rk, rv, n, sk, sv, n, 4, m, s);
        check_join_u32(rk, rv, n, sk, sv, n, 8, m, s);
    }
    check_join_u32(rk, rv, 0, sk, sv, n, 4, 0, s); /* empty build */
    check_join_u32(rk, rv, n, sk, sv, 0, 4, 0, s); /* empty probe */
    free(rk); free(rv); free(sk); free(sv);
    CU(cudaStreamDestroy(s));
}

/* One build key repeated past a shared-memory chunk (SL_K_JOIN_BUILD_CHUNK rows) and a
 * partition several chunks large: joined chunk by chunk, no capacity limit. */
SL_TEST(join_skewed_build_partition)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const int64_t heavy = 3 * SL_K_JOIN_BUILD_CHUNK + 17, other = 20000;
    const int64_t nr = heavy + other, ns = 3000 + SL_K_JOIN_PROBE_CHUNK + 100;
    uint64_t seed = 23;
    uint32_t *rk = malloc(nr * 4), *rv = malloc(nr * 4), *sk = malloc(ns * 4), *sv = malloc(ns * 4);
    for (int64_t i = 0; i < nr; i++) {
        rk[i] = i < heavy ? 4242u : (uint32_t)(rng_next(&seed) % 50000) * 16u + 2u; /* all in partition 2 */
        rv[i] = (uint32_t)i;
    }
    for (int64_t j = 0; j < ns; j++) {
        sk[j] = j < 40 ? 4242u : (uint32_t)(rng_next(&seed) % 50000) * 16u + 2u;
        sv[j] = (uint32_t)(j + 1000000);
    }
    for (int m = 0; m < 3; m++)
        check_join_u32(rk, rv, nr, sk, sv, ns, 4, m, s);
    free(rk); free(rv); free(sk); free(sv);
    CU(cudaStreamDestroy(s));
}

/* sl_k_partition_rows_*: SL_K_PART_CHAIN gives exactly CUB's arrays (both stable) for
 * every row width, 4- and 8-byte keys, one and two passes, skewed keys, keys at the
 * type's extremes. */
static void check_rows(int k8, int rb, int64_t n, int b0, int bits, uint64_t spread,
                       uint64_t seed, cudaStream_t s)
{
    const size_t kw = k8 ? 8 : 4;
    unsigned char *hk = malloc(n * kw + 8), *hr = malloc(n * (size_t)rb + 16);
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = rng_next(&seed);
        if (spread)
            x %= spread;
        if (i % 7 == 3)
            x = k8 ? UINT64_MAX : UINT32_MAX; /* the largest key */
        if (i % 11 == 5)
            x = 0;
        memcpy(hk + i * kw, &x, kw); /* little endian: the low word for 4-byte keys */
        for (int b = 0; b < rb; b += 4) {
            uint32_t w = (uint32_t)(i * 4 + b / 4);
            memcpy(hr + i * (size_t)rb + b, &w, 4);
        }
    }
    void *dk = dmalloc(n * kw), *dr = dmalloc(n * (size_t)rb);
    void *ko[2] = {dmalloc(n * kw), dmalloc(n * kw)};
    void *ro[2] = {dmalloc(n * (size_t)rb), dmalloc(n * (size_t)rb)};
    if (n) {
        CU(cudaMemcpyAsync(dk, hk, n * kw, cudaMemcpyHostToDevice, s));
        if (rb)
            CU(cudaMemcpyAsync(dr, hr, n * (size_t)rb, cudaMemcpyHostToDevice, s));
    }
    const int methods[2] = {SL_K_PART_CUB, SL_K_PART_CHAIN};
    for (int m = 0; m < 2; m++) {
        size_t tb = 0;
        if (k8)
            CU(sl_k_partition_rows_k64(NULL, &tb, dk, ko[m], dr, ro[m], rb, n, b0, bits,
                                       methods[m], s));
        else
            CU(sl_k_partition_rows_k32(NULL, &tb, dk, ko[m], dr, ro[m], rb, n, b0, bits,
                                       methods[m], s));
        void *dt = dmalloc(tb);
        if (k8)
            CU(sl_k_partition_rows_k64(dt, &tb, dk, ko[m], dr, ro[m], rb, n, b0, bits,
                                       methods[m], s));
        else
            CU(sl_k_partition_rows_k32(dt, &tb, dk, ko[m], dr, ro[m], rb, n, b0, bits,
                                       methods[m], s));
        CU(cudaStreamSynchronize(s));
        cudaFree(dt);
    }
    unsigned char *k0 = down(ko[0], n * kw, s), *k1 = down(ko[1], n * kw, s);
    unsigned char *r0 = down(ro[0], n * (size_t)rb, s), *r1 = down(ro[1], n * (size_t)rb, s);
    assert_int_equal(memcmp(k0, k1, n * kw), 0);
    assert_int_equal(memcmp(r0, r1, n * (size_t)rb), 0);
    free(k0); free(k1); free(r0); free(r1); free(hk); free(hr);
    cudaFree(dk); cudaFree(dr);
    for (int m = 0; m < 2; m++) {
        cudaFree(ko[m]);
        cudaFree(ro[m]);
    }
}

SL_TEST(partition_rows_chain_equals_cub)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int k8 = 0; k8 < 2; k8++) {
        for (int rb = 0; rb <= 16; rb += 4) {
            check_rows(k8, rb, 0, 0, 15, 0, 1, s);
            check_rows(k8, rb, 1, 0, 15, 0, 2, s);
            check_rows(k8, rb, 123457, 0, 15, 0, 3, s);
            check_rows(k8, rb, 65536, 3, 8, 0, 4, s);
            check_rows(k8, rb, 100001, 0, 15, 5, 5, s); /* five keys (and 0, the max) */
        }
        check_rows(k8, 8, 1 << 20, k8 ? 48 : 17, 15, 0, 6, s); /* top bits */
    }
    CU(cudaStreamDestroy(s));
}

/* Shapes of a GPU string join of 2^20 rows a side (64-bit key hashes, one pass of 8
 * bits, more tiles than blocks resident at once, rows of 8 and 12 bytes): the chained
 * partitioner's result equals CUB's. */
SL_TEST(partition_chain_many_tiles_one_pass)
{
    REQUIRE_GPU();
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int64_t n = 1 << 20; n <= (1 << 21) + 5; n = 2 * n + 5) {
        check_rows(1, 8, n, 0, 8, 0, 11, s);
        check_rows(1, 12, n, 56, 8, 0, 12, s);
        check_rows(0, 8, n, 0, 8, 0, 13, s);
    }
    CU(cudaStreamDestroy(s));
}

SL_TEST(launchers_reject_bad_arguments)
{
    size_t tb = 0;
    assert_int_equal(sl_k_partition_rows_k32(NULL, &tb, NULL, NULL, NULL, NULL, 8, 10, 0, 17,
                                             SL_K_PART_CHAIN, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_partition_rows_k32(NULL, &tb, NULL, NULL, NULL, NULL, 8, 10, 20, 15,
                                             SL_K_PART_CHAIN, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_partition_rows_k64(NULL, &tb, NULL, NULL, NULL, NULL, 6, 10, 0, 15,
                                             SL_K_PART_CHAIN, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_partition_rows_k64(NULL, &tb, NULL, NULL, NULL, NULL, 8, 10, 0, 15, 7,
                                             0),
                     cudaErrorInvalidValue);
    /* argument checks happen before any CUDA call: no GPU needed */
    assert_int_equal(sl_k_partition_pairs_k32_v32(NULL, &tb, NULL, NULL, NULL, NULL, 10, 0, 0, 8,
                                                  SL_K_PART_OWN, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_partition_pairs_k32_v32(NULL, &tb, NULL, NULL, NULL, NULL, 10, 30, 8, 8,
                                                  SL_K_PART_OWN, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_partition_pairs_k32_v32(NULL, &tb, NULL, NULL, NULL, NULL, -1, 0, 8, 8,
                                                  SL_K_PART_CUB, 0),
                     cudaErrorInvalidValue);
    assert_int_equal(sl_k_phj_materialize_k32_v32(NULL, &tb, NULL, NULL, NULL, NULL, NULL, NULL, 17,
                                                  17, NULL, NULL, NULL, 0, NULL, 0),
                     cudaErrorInvalidValue);
}
