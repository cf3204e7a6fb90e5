/* Standalone check and benchmark of the GPU join kernels beyond the narrow PHJ (issue 6):
 * GFTR/packed-row PHJ with any number of payload columns, join kinds (semi, anti, left
 * outer), sort-merge join, no-partitioning join. Built by bench/meson.build with CUDA.
 *
 *   gpu_join_ext_bench check [log2n]   every launcher vs a CPU reference (default 2^14)
 *   gpu_join_ext_bench tiny            small inputs for racecheck
 *   gpu_join_ext_bench bench [log2n] [filter]   TARGETS.md workloads (default 2^27)
 *
 * Reference (check): CPU join by sorting R; outputs compared as sorted row multisets
 * (key, R payloads, S payloads, R-valid flag). Bench: R keys 0..nr-1 shuffled, S keys
 * uniform in [0, nr / match_ratio); full-size results checked by row count and checksum
 * (sum of all output values mod 2^64) against a CPU sum over the copied-back inputs.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "sluice_k/join.h"
#include "sluice_k/join_gftr.h"
#include "sluice_k/join_npj.h"
#include "sluice_k/join_smj.h"
#include "sluice_k/partition.h"

#define CK(...)                                                                           \
    do {                                                                                  \
        cudaError_t e_ = (__VA_ARGS__);                                                   \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #__VA_ARGS__,   \
                    cudaGetErrorName(e_), cudaGetErrorString(e_));                        \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

static int g_fail = 0;
#define EXPECT(c, ...)                                                                    \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            g_fail++;                                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            printf(__VA_ARGS__);                                                          \
            printf("\n");                                                                 \
        }                                                                                 \
    } while (0)

typedef unsigned long long u64;
static const char *kind_name[] = {"inner", "semi", "anti", "left"};

static __host__ __device__ inline u64 mix64(u64 x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
static __host__ __device__ inline u64 pay(u64 row, int col, int side, int width)
{
    u64 v = mix64(row * 31 + col * 7 + side * 1000003 + 17);
    return width == 4 ? (v & 0xFFFFFFFFull) : v;
}

/* ---- launchers by key type ---- */
template <typename K> struct L;
#define L_SPEC(KT, SUF)                                                                   \
    template <> struct L<KT> {                                                            \
        static cudaError_t radix(void *t, size_t *tb, const KT *ki, KT *ko, const void *ri, void *ro, \
                                 int rb, int64_t n, int b0, int b1, cudaStream_t s)       \
        { return sl_k_radix_rows_##SUF(t, tb, ki, ko, ri, ro, rb, n, b0, b1, s); }        \
        static cudaError_t offsets(const KT *k, int64_t n, int b0, int bits, int64_t *o, cudaStream_t s) \
        { return sl_k_partition_offsets_##SUF(k, n, b0, bits, o, s); }                    \
        static cudaError_t phj(void *t, size_t *tb, const KT *rk, const void *rr, const int64_t *ro, \
                               const KT *sk, const void *sr, const int64_t *so, int64_t ns, int rb, \
                               int bits, int sh, int kind, const sl_k_join_out_t *o, u64 *c, cudaStream_t s) \
        { return sl_k_phj_join_##SUF(t, tb, rk, rr, ro, sk, sr, so, ns, rb, bits, sh, kind, o, c, s); } \
        static cudaError_t smj_count(void *t, size_t *tb, const KT *rk, int64_t nr, const KT *sk, \
                                     int64_t ns, int kind, u64 *c, cudaStream_t s)       \
        { return sl_k_smj_count_##SUF(t, tb, rk, nr, sk, ns, kind, c, s); }              \
        static cudaError_t smj_write(void *t, size_t tb, const KT *rk, const void *rr, int64_t nr, \
                                     const KT *sk, const void *sr, int64_t ns, int rb, int kind, \
                                     const sl_k_join_out_t *o, cudaStream_t s)            \
        { return sl_k_smj_write_##SUF(t, tb, rk, rr, nr, sk, sr, ns, rb, kind, o, s); }   \
        static cudaError_t npj_build(void *t, size_t *tb, const KT *rk, int64_t nr, cudaStream_t s) \
        { return sl_k_npj_build_##SUF(t, tb, rk, nr, s); }                                \
        static cudaError_t npj_probe(void *t, size_t tb, int64_t nr, const sl_k_cols_t *rc, \
                                     const KT *sk, int64_t ns, const sl_k_cols_t *sc, int kind, \
                                     const sl_k_join_out_t *o, u64 *c, cudaStream_t s)    \
        { return sl_k_npj_probe_##SUF(t, tb, nr, rc, sk, ns, sc, kind, o, c, s); }        \
    };
L_SPEC(uint32_t, k32)
L_SPEC(uint64_t, k64)

template <typename T> static T *dalloc(size_t n)
{
    T *p = NULL;
    CK(cudaMalloc(&p, (n ? n : 1) * sizeof(T)));
    return p;
}
template <typename T> static std::vector<T> down(const T *d, size_t n, cudaStream_t s)
{
    std::vector<T> h(n);
    if (n)
        CK(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    return h;
}
static std::vector<u64> down_col(const void *d, int w, size_t n, cudaStream_t s)
{
    std::vector<u64> r(n);
    if (w == 4) {
        auto h = down((const uint32_t *)d, n, s);
        for (size_t i = 0; i < n; i++) r[i] = h[i];
    } else {
        auto h = down((const u64 *)d, n, s);
        for (size_t i = 0; i < n; i++) r[i] = h[i];
    }
    return r;
}

/* ------------------------------------------------------------------ check ---- */

template <typename K> struct HRel {
    std::vector<K> k;
    std::vector<int> w;                /* payload widths */
    std::vector<std::vector<u64>> c;   /* payload values */
    int64_t n() const { return (int64_t)k.size(); }
};
template <typename K> struct DRel {
    K *k = NULL;
    sl_k_cols_t cols;
    int64_t n = 0;
};
template <typename K> static DRel<K> upload(const HRel<K> &h, cudaStream_t s)
{
    DRel<K> d;
    d.n = h.n();
    d.k = dalloc<K>(d.n);
    if (d.n) CK(cudaMemcpyAsync(d.k, h.k.data(), d.n * sizeof(K), cudaMemcpyHostToDevice, s));
    memset(&d.cols, 0, sizeof d.cols);
    d.cols.n = (int)h.w.size();
    for (int j = 0; j < d.cols.n; j++) {
        d.cols.width[j] = h.w[j];
        d.cols.ptr[j] = dalloc<char>(d.n * h.w[j]);
        if (h.w[j] == 4) {
            std::vector<uint32_t> t(h.c[j].begin(), h.c[j].end());
            if (d.n) CK(cudaMemcpyAsync(d.cols.ptr[j], t.data(), d.n * 4, cudaMemcpyHostToDevice, s));
            CK(cudaStreamSynchronize(s));
        } else if (d.n) {
            CK(cudaMemcpyAsync(d.cols.ptr[j], h.c[j].data(), d.n * 8, cudaMemcpyHostToDevice, s));
        }
    }
    CK(cudaStreamSynchronize(s));
    return d;
}
template <typename K> static void release(DRel<K> &d)
{
    cudaFree(d.k);
    for (int j = 0; j < d.cols.n; j++) cudaFree(d.cols.ptr[j]);
}

typedef std::vector<u64> Row;

/* CPU reference: rows (key, R payloads or nothing, S payloads, r_valid). */
template <typename K>
static std::vector<Row> reference(const HRel<K> &R, const HRel<K> &S, int kind)
{
    std::vector<std::pair<K, int64_t>> idx(R.n());
    for (int64_t i = 0; i < R.n(); i++) idx[i] = {R.k[i], i};
    std::sort(idx.begin(), idx.end());
    std::vector<Row> out;
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    for (int64_t j = 0; j < S.n(); j++) {
        auto lo = std::lower_bound(idx.begin(), idx.end(), std::make_pair(S.k[j], (int64_t)-1));
        int64_t c = 0;
        for (auto it = lo; it != idx.end() && it->first == S.k[j]; ++it) c++;
        auto srow = [&](Row &r) { for (size_t q = 0; q < S.w.size(); q++) r.push_back(S.c[q][j]); };
        if (kind == SL_K_JOIN_SEMI || kind == SL_K_JOIN_ANTI) {
            if ((c > 0) == (kind == SL_K_JOIN_SEMI)) {
                Row r{(u64)S.k[j]};
                srow(r);
                r.push_back(0);
                out.push_back(r);
            }
            continue;
        }
        for (auto it = lo; it != idx.end() && it->first == S.k[j]; ++it) {
            Row r{(u64)S.k[j]};
            for (size_t q = 0; q < R.w.size(); q++) r.push_back(R.c[q][it->second]);
            srow(r);
            r.push_back(1);
            out.push_back(r);
        }
        if (c == 0 && kind == SL_K_JOIN_LEFT) {
            Row r{(u64)S.k[j]};
            for (size_t q = 0; q < R.w.size(); q++) r.push_back(0);
            srow(r);
            r.push_back(0);
            out.push_back(r);
        }
    }
    (void)with_r;
    std::sort(out.begin(), out.end());
    return out;
}

/* Device output buffers of `cap` rows for the columns of R and S. */
template <typename K> struct DOut {
    sl_k_join_out_t o;
    int64_t cap;
    void alloc(const HRel<K> &R, const HRel<K> &S, int64_t c, bool with_r)
    {
        cap = c;
        memset(&o, 0, sizeof o);
        o.capacity = c;
        o.keys = dalloc<K>(c + 1);
        o.r_pos = dalloc<uint32_t>(c + 1);
        o.s_pos = dalloc<uint32_t>(c + 1);
        if (with_r) {
            o.r.n = (int)R.w.size();
            for (int j = 0; j < o.r.n; j++) { o.r.width[j] = R.w[j]; o.r.ptr[j] = dalloc<char>((c + 1) * 8); }
        }
        o.s.n = (int)S.w.size();
        for (int j = 0; j < o.s.n; j++) { o.s.width[j] = S.w[j]; o.s.ptr[j] = dalloc<char>((c + 1) * 8); }
    }
    void poison(cudaStream_t s)
    {
        CK(cudaMemsetAsync(o.keys, 0xAB, (cap + 1) * sizeof(K), s));
        CK(cudaMemsetAsync(o.r_pos, 0xAB, (cap + 1) * 4, s));
        CK(cudaMemsetAsync(o.s_pos, 0xAB, (cap + 1) * 4, s));
        for (int j = 0; j < o.r.n; j++) CK(cudaMemsetAsync(o.r.ptr[j], 0xAB, (cap + 1) * 8, s));
        for (int j = 0; j < o.s.n; j++) CK(cudaMemsetAsync(o.s.ptr[j], 0xAB, (cap + 1) * 8, s));
    }
    bool guard_intact(cudaStream_t s)
    {
        auto g = down_col((const char *)o.keys + cap * sizeof(K), sizeof(K), 1, s);
        return g[0] == (sizeof(K) == 4 ? 0xABABABABull : 0xABABABABABABABABull);
    }
    std::vector<Row> rows(int64_t n, int kind, cudaStream_t s)
    {
        std::vector<std::vector<u64>> cols;
        cols.push_back(down_col(o.keys, sizeof(K), n, s));
        for (int j = 0; j < o.r.n; j++) cols.push_back(down_col(o.r.ptr[j], o.r.width[j], n, s));
        for (int j = 0; j < o.s.n; j++) cols.push_back(down_col(o.s.ptr[j], o.s.width[j], n, s));
        auto rp = down(o.r_pos, n, s);
        std::vector<Row> out(n);
        for (int64_t i = 0; i < n; i++) {
            for (auto &c : cols) out[i].push_back(c[i]);
            out[i].push_back(kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT ? (rp[i] != SL_K_NULL_POS) : 0);
        }
        std::sort(out.begin(), out.end());
        return out;
    }
    void release()
    {
        cudaFree(o.keys); cudaFree(o.r_pos); cudaFree(o.s_pos);
        for (int j = 0; j < o.r.n; j++) cudaFree(o.r.ptr[j]);
        for (int j = 0; j < o.s.n; j++) cudaFree(o.s.ptr[j]);
    }
};

static int row_bytes_of(const std::vector<int> &w, size_t upto)
{
    int b = 0;
    for (size_t j = 0; j < upto && j < w.size(); j++) b += w[j];
    return (b + 3) & ~3;
}

/* Packs the first `ncols` columns of a side into rows of rb bytes (or none). */
template <typename K> static void *pack(const DRel<K> &d, int ncols, int rb, cudaStream_t s)
{
    if (rb == 0) return NULL;
    void *rows = dalloc<char>((size_t)d.n * rb + 16);
    sl_k_cols_t c = d.cols;
    c.n = ncols;
    CK(sl_k_pack_rows(&c, d.n, rb, rows, s));
    return rows;
}

/* Algorithms under test: 0 = PHJ (first columns packed, the rest GFTR-gathered),
 * 1 = SMJ (same), 2 = NPJ (columns directly). `packed` = columns carried in the join
 * (the rest are gathered by positions after re-partitioning/re-sorting with the key). */
template <typename K>
static void check_algo(const char *name, const HRel<K> &R, const HRel<K> &S, int algo, int kind,
                       int bits, int packed, cudaStream_t s)
{
    const int64_t nr = R.n(), ns = S.n();
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    std::vector<Row> ref = reference(R, S, kind);
    DRel<K> dr = upload(R, s), ds = upload(S, s);
    const int P = (int)R.w.size();
    const int rb = std::max(row_bytes_of(R.w, packed), row_bytes_of(S.w, packed));
    u64 *dcnt = dalloc<u64>(2);
    u64 cnt[2] = {0, 0};
    DOut<K> out;
    const int64_t half = (int64_t)ref.size() / 2;
    /* state kept for the GFTR gathers */
    K *rk2 = dalloc<K>(nr), *sk2 = dalloc<K>(ns), *kscratch = dalloc<K>(std::max(nr, ns));
    void *rrows = NULL, *srows = NULL, *rrows2 = NULL, *srows2 = NULL, *temp = NULL;
    size_t tb = 0;
    int64_t *ro = NULL, *so = NULL;
    const int b0 = 0, b1 = algo == 0 ? bits : 8 * (int)sizeof(K);
    bool pass_ok = true;
    auto run = [&](int64_t cap) {
        out.o.capacity = cap;
        sl_k_join_out_t oj = out.o; /* the join writes the packed columns only */
        oj.r.n = std::min(oj.r.n, packed);
        oj.s.n = std::min(oj.s.n, packed);
        if (algo == 0) {
            CK(L<K>::phj(temp, &tb, rk2, rrows2, ro, sk2, srows2, so, ns, rb, bits, bits, kind, &oj, dcnt, s));
        } else if (algo == 1) {
            CK(L<K>::smj_count(temp, &tb, rk2, nr, sk2, ns, kind, dcnt, s));
            CK(L<K>::smj_write(temp, tb, rk2, rrows2, nr, sk2, srows2, ns, rb, kind, &oj, s));
        } else {
            CK(L<K>::npj_probe(temp, tb, nr, &dr.cols, ds.k, ns, &ds.cols, kind, &out.o, dcnt, s));
        }
        auto h = down(dcnt, 2, s);
        cnt[0] = h[0];
        cnt[1] = h[1];
    };
    if (algo <= 1) {
        rrows = pack(dr, packed, rb, s);
        srows = pack(ds, packed, rb, s);
        if (rb) { rrows2 = dalloc<char>(nr * rb + 16); srows2 = dalloc<char>(ns * rb + 16); }
        size_t t1 = 0, t2 = 0, t3 = 0;
        CK(L<K>::radix(NULL, &t1, dr.k, rk2, rrows, rrows2, rb, nr, b0, b1, s));
        CK(L<K>::radix(NULL, &t2, ds.k, sk2, srows, srows2, rb, ns, b0, b1, s));
        if (algo == 0)
            CK(L<K>::phj(NULL, &t3, NULL, NULL, NULL, NULL, NULL, NULL, ns, rb, bits, bits, kind, NULL, NULL, s));
        else
            CK(L<K>::smj_count(NULL, &t3, NULL, nr, NULL, ns, kind, NULL, s));
        for (int j = packed; j < P; j++) { /* re-transform temp of the gathered columns */
            size_t t = 0;
            CK(L<K>::radix(NULL, &t, dr.k, kscratch, NULL, NULL, R.w[j], nr, b0, b1, s));
            t1 = std::max(t1, t);
            CK(L<K>::radix(NULL, &t, ds.k, kscratch, NULL, NULL, S.w[j], ns, b0, b1, s));
            t1 = std::max(t1, t);
        }
        tb = std::max(t1, std::max(t2, t3));
        temp = dalloc<char>(tb);
        size_t tt = tb;
        CK(L<K>::radix(temp, &tt, dr.k, rk2, rrows, rrows2, rb, nr, b0, b1, s));
        tt = tb;
        CK(L<K>::radix(temp, &tt, ds.k, sk2, srows, srows2, rb, ns, b0, b1, s));
        if (algo == 0) {
            ro = dalloc<int64_t>(((size_t)1 << bits) + 1);
            so = dalloc<int64_t>(((size_t)1 << bits) + 1);
            CK(L<K>::offsets(rk2, nr, 0, bits, ro, s));
            CK(L<K>::offsets(sk2, ns, 0, bits, so, s));
        }
    } else {
        CK(L<K>::npj_build(NULL, &tb, dr.k, nr, s));
        temp = dalloc<char>(tb);
        CK(L<K>::npj_build(temp, &tb, dr.k, nr, s));
        packed = P;
    }
    /* 1: count with capacity 0 (nothing written) */
    out.alloc(R, S, 0, with_r);
    out.poison(s);
    run(0);
    EXPECT(cnt[0] == ref.size() && out.guard_intact(s), "%s: count-only %llu want %zu", name, cnt[0], ref.size());
    out.release();
    /* 2: half capacity: exact count, guard intact */
    out.alloc(R, S, half, with_r);
    out.poison(s);
    run(half);
    EXPECT(cnt[0] == ref.size() && out.guard_intact(s), "%s: half capacity: count %llu want %zu, guard %s", name,
           cnt[0], ref.size(), out.guard_intact(s) ? "ok" : "OVERWRITTEN");
    out.release();
    /* 3: exact capacity; gathered columns by positions (GFTR) */
    const int64_t n_out = ref.size();
    out.alloc(R, S, n_out, with_r);
    out.poison(s);
    run(n_out);
    for (int j = packed; j < P; j++) {
        for (int side = 0; side < 2; side++) {
            if (side == 0 && !with_r) continue;
            const DRel<K> &d = side ? ds : dr;
            const int w = side ? S.w[j] : R.w[j];
            void *col2 = dalloc<char>(d.n * w + 8);
            size_t tt = tb;
            CK(L<K>::radix(temp, &tt, d.k, kscratch, d.cols.ptr[j], col2, w, d.n, b0, b1, s));
            sl_k_cols_t src, dst;
            memset(&src, 0, sizeof src);
            memset(&dst, 0, sizeof dst);
            src.n = dst.n = 1;
            src.width[0] = dst.width[0] = w;
            src.ptr[0] = col2;
            dst.ptr[0] = side ? out.o.s.ptr[j] : out.o.r.ptr[j];
            CK(sl_k_gather_cols(&src, side ? out.o.s_pos : out.o.r_pos, (int64_t)cnt[0], &dst, s));
            CK(cudaStreamSynchronize(s));
            cudaFree(col2);
        }
    }
    std::vector<Row> got = out.rows(n_out, kind, s);
    const bool rows_ok = cnt[0] == ref.size() && got == ref;
    u64 ref_inner = 0;
    for (auto &r : ref) ref_inner += r.back();
    bool inner_ok = cnt[1] == (with_r ? ref_inner : 0);
    if (algo == 0 && kind == SL_K_JOIN_LEFT) { /* PHJ: rows with an R partner first */
        auto rp = down(out.o.r_pos, n_out, s);
        for (int64_t i = 0; i < n_out; i++)
            if ((rp[i] != SL_K_NULL_POS) != (i < (int64_t)cnt[1])) { inner_ok = false; break; }
    }
    pass_ok = rows_ok && inner_ok;
    EXPECT(pass_ok, "%s: rows %s (count %llu want %zu), partner count %llu (want %llu)", name,
           rows_ok ? "ok" : "DIFFER", cnt[0], ref.size(), cnt[1], with_r ? ref_inner : 0ull);
    printf("check %-4s %-5s %-26s K%zu |R|=%lld |S|=%lld cols=%d packed=%d rb=%d: %zu rows, %s\n",
           algo == 0 ? "phj" : algo == 1 ? "smj" : "npj", kind_name[kind], name, sizeof(K), (long long)nr,
           (long long)ns, P, packed, rb, ref.size(), pass_ok ? "ok" : "FAIL");
    out.release();
    release(dr);
    release(ds);
    cudaFree(rk2); cudaFree(sk2); cudaFree(kscratch); cudaFree(rrows); cudaFree(srows); cudaFree(rrows2);
    cudaFree(srows2); cudaFree(temp); cudaFree(ro); cudaFree(so); cudaFree(dcnt);
}

template <typename K>
static HRel<K> make_rel(int64_t n, std::vector<int> w, int side, u64 key_mod, u64 hi, u64 seed)
{
    HRel<K> h;
    h.w = w;
    h.c.resize(w.size());
    for (int64_t i = 0; i < n; i++) {
        h.k.push_back((K)(hi | (mix64(seed + i) % key_mod)));
        for (size_t j = 0; j < w.size(); j++) h.c[j].push_back(pay(i, (int)j, side, w[j]));
    }
    return h;
}
template <typename K> static void add_row(HRel<K> &h, u64 key, int side)
{
    const int64_t i = h.n();
    h.k.push_back((K)key);
    for (size_t j = 0; j < h.w.size(); j++) h.c[j].push_back(pay(i, (int)j, side, h.w[j]));
}

template <typename K>
static void check_all(int64_t n, cudaStream_t s)
{
    const int bits = std::max(1, (int)std::lround(std::log2((double)n / 4096.0)));
    const u64 hi = sizeof(K) == 8 ? (0x5ull << 40) : 0;
    std::vector<int> w2 = {4, 8}, w3 = {4, 4, 4}, w1 = {sizeof(K) == 8 ? 8 : 4};
    /* duplicates on both sides, half of S unmatched */
    HRel<K> R = make_rel<K>(n, w2, 0, n / 2, hi, 1), S = make_rel<K>(n, w2, 1, n, hi, 77777);
    /* skew: one build key repeated past a chunk, a partition of 3 chunks of distinct keys */
    HRel<K> Rk = R, Sk = S;
    for (int64_t i = 0; i < std::min<int64_t>(20000, 4 * n); i++) add_row(Rk, hi | 12345, 0);
    for (int64_t i = 0; i < 3 * SL_K_JOIN_BUILD_CHUNK; i++) add_row(Rk, hi | (7 + ((u64)(i + 1) << bits) + ((u64)n << 2)), 0);
    for (int64_t j = 0; j < 8; j++) add_row(Sk, hi | 12345, 1);
    for (int64_t j = 0; j < 2 * SL_K_JOIN_PROBE_CHUNK + 5; j++)
        add_row(Sk, hi | (7 + ((u64)(j % (3 * SL_K_JOIN_BUILD_CHUNK) + 1) << bits) + ((u64)n << 2)), 1);
    /* PK-FK with 3 payloads */
    HRel<K> Rp = make_rel<K>(n, w3, 0, 1, hi, 5), Sp = make_rel<K>(n, w3, 1, 2 * n, hi, 999);
    for (int64_t i = 0; i < n; i++) Rp.k[i] = (K)(hi | (u64)i);
    HRel<K> E = make_rel<K>(0, w2, 0, 1, hi, 1), One = make_rel<K>(1, w2, 1, 1, hi, 3);
    One.k[0] = R.k[0];

    for (int kind = 0; kind < 4; kind++) {
        for (int algo = 0; algo < 3; algo++) {
            check_algo<K>("dup+nonmatching 2 cols", R, S, algo, kind, bits, 2, s);
            check_algo<K>("dup, col 2 GFTR-gathered", R, S, algo, kind, bits, 1, s);
            check_algo<K>("skewed multi-chunk", Rk, Sk, algo, kind, bits, 2, s);
            check_algo<K>("pk-fk 3 cols (2 packed)", Rp, Sp, algo, kind, bits, 2, s);
            check_algo<K>("pk-fk 3 cols packed", Rp, Sp, algo, kind, bits, 3, s);
            check_algo<K>("positions only", Rp, Sp, algo, kind, bits, 0, s);
            check_algo<K>("empty build", E, S, algo, kind, bits, 2, s);
            check_algo<K>("empty probe", R, E, algo, kind, bits, 2, s);
            check_algo<K>("one probe row", R, One, algo, kind, bits, 2, s);
        }
    }
    (void)w1;
}

/* Launchers must reject bad arguments without launching. */
static void check_errors(cudaStream_t s)
{
    size_t tb = 0;
    sl_k_join_out_t o;
    memset(&o, 0, sizeof o);
    EXPECT(sl_k_phj_join_k32(NULL, &tb, NULL, NULL, NULL, NULL, NULL, NULL, 10, 6, 8, 8, 0, &o, NULL, s) == cudaErrorInvalidValue, "row_bytes 6");
    EXPECT(sl_k_phj_join_k32(NULL, &tb, NULL, NULL, NULL, NULL, NULL, NULL, 10, 4, 17, 17, 0, &o, NULL, s) == cudaErrorInvalidValue, "bits 17");
    EXPECT(sl_k_phj_join_k32(NULL, &tb, NULL, NULL, NULL, NULL, NULL, NULL, 10, 4, 8, 8, 9, &o, NULL, s) == cudaErrorInvalidValue, "kind 9");
    EXPECT(sl_k_radix_rows_k32(NULL, &tb, NULL, NULL, NULL, NULL, 20, 10, 0, 8, s) == cudaErrorInvalidValue, "rb 20");
    EXPECT(sl_k_radix_rows_k32(NULL, &tb, NULL, NULL, NULL, NULL, 4, 10, 0, 33, s) == cudaErrorInvalidValue, "end bit 33");
    EXPECT(sl_k_smj_count_k32(NULL, &tb, NULL, 10, NULL, 10, 7, NULL, s) == cudaErrorInvalidValue, "smj kind");
    EXPECT(sl_k_npj_build_k32(NULL, NULL, NULL, 10, s) == cudaErrorInvalidValue, "npj temp_bytes NULL");
    sl_k_cols_t c;
    memset(&c, 0, sizeof c);
    c.n = 1; c.width[0] = 6; c.ptr[0] = (void *)16;
    EXPECT(sl_k_pack_rows(&c, 10, 8, (void *)16, s) == cudaErrorInvalidValue, "width 6");
    c.width[0] = 8;
    EXPECT(sl_k_pack_rows(&c, 10, 4, (void *)16, s) == cudaErrorInvalidValue, "row too narrow");
    printf("check launcher argument errors: %s\n", g_fail ? "see FAIL lines" : "ok");
}

/* --------------------------------------------------------------- benchmark ---- */

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
static size_t free_mem()
{
    size_t f, t;
    CK(cudaMemGetInfo(&f, &t));
    return f;
}
static double g_d2d_gbs = 0;
static std::string g_dev;

template <typename K>
__global__ void gen_r_keys(uint32_t *rnd, uint32_t *iota, int64_t n, u64 seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        rnd[i] = (uint32_t)mix64(seed ^ (u64)i);
        iota[i] = (uint32_t)i;
    }
}
template <typename K> __global__ void widen(const uint32_t *in, K *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (K)in[i];
}
/* Zipf(1) over the ranking given by the shuffled R keys: rank r has weight 1/(r+1);
 * exact harmonic table for r < 1024, ln(m) + gamma above (as gpu_join_bench.cu). */
template <typename K>
__global__ void gen_s_zipf(K *sk, int64_t ns, const K *rkeys, int64_t nr, const double *htab, double hn, u64 seed)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < ns; j += (int64_t)gridDim.x * blockDim.x) {
        const u64 r = mix64(seed ^ (u64)j);
        const double t = ((r >> 11) * (1.0 / 9007199254740992.0)) * hn;
        int64_t m;
        if (t <= htab[1023]) {
            int lo = 0, hi = 1023;
            while (lo < hi) { int mid = (lo + hi) / 2; if (htab[mid] >= t) hi = mid; else lo = mid + 1; }
            m = lo + 1;
        } else {
            const double e = exp(t - 0.5772156649015329);
            m = (int64_t)ceil(exp(t - 0.5772156649015329 - 0.5 / e));
        }
        if (m > nr) m = nr;
        if (m < 1) m = 1;
        sk[j] = rkeys[m - 1];
    }
}
template <typename K> __global__ void gen_s_keys(K *sk, int64_t ns, u64 range, u64 seed)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < ns; j += (int64_t)gridDim.x * blockDim.x)
        sk[j] = (K)(mix64(seed ^ (u64)j) % range);
}
__global__ void gen_col(void *c, int w, int64_t n, int col, int side)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        u64 v = pay(i, col, side, w);
        if (w == 4) ((uint32_t *)c)[i] = (uint32_t)v; else ((u64 *)c)[i] = v;
    }
}
__global__ void col_sum(const void *c, int w, int64_t n, u64 *sum)
{
    u64 acc = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        acc += w == 4 ? (u64)((const uint32_t *)c)[i] : ((const u64 *)c)[i];
    for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(0xffffffff, acc, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}

__global__ void iota_kernel(uint32_t *a, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        a[i] = (uint32_t)i;
}
template <typename K> __global__ void inverse_perm(const K *rk, int64_t nr, uint32_t *row_of_key)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nr; i += (int64_t)gridDim.x * blockDim.x)
        row_of_key[(u64)rk[i]] = (uint32_t)i;
}
/* out[0] += rows the join must emit, out[1] += sum of their values (key, S payloads, R
 * payloads of matched rows; NULL R columns are 0). */
template <typename K>
__global__ void ref_sum(const K *sk, int64_t ns, int64_t nr, const uint32_t *row_of_key, int P, int w, int kind,
                        u64 *out)
{
    u64 n = 0, acc = 0;
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < ns; j += (int64_t)gridDim.x * blockDim.x) {
        const u64 k = (u64)sk[j];
        const bool m = k < (u64)nr;
        const bool emit = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_SEMI ? m : kind == SL_K_JOIN_ANTI ? !m : true;
        if (!emit) continue;
        n++;
        acc += k;
        for (int q = 0; q < P; q++) {
            acc += pay(j, q, 1, w);
            if (with_r && m) acc += pay(row_of_key[k], q, 0, w);
        }
    }
    for (int o = 16; o; o >>= 1) {
        n += __shfl_down_sync(0xffffffff, n, o);
        acc += __shfl_down_sync(0xffffffff, acc, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out[0], n);
        atomicAdd(&out[1], acc);
    }
}

struct BenchCfg {
    const char *name;
    int64_t nr, ns;
    int P;          /* payload columns per side */
    int w;          /* payload width */
    double ratio;   /* match ratio */
    int algo;       /* 0 PHJ, 1 SMJ, 2 NPJ */
    int packed;     /* columns carried through partition/join; rest GFTR-gathered */
    int pad_rb;     /* row bytes to pad to (0: exact) */
    int kind;
    int sort_bits;  /* SMJ: key bits sorted (0: all) */
    int zipf;       /* S keys Zipf 1.0 over a random ranking of the R keys */
};

/* One timed workload: (pack) + transform R + transform S + join (+ GFTR re-transform and
 * gather per further column). Returns median ms; prints one JSON line. */
template <typename K>
static void bench(const BenchCfg &c, cudaStream_t s)
{
    const int64_t nr = c.nr, ns = c.ns;
    const size_t f0 = free_mem();
    const bool with_r = c.kind == SL_K_JOIN_INNER || c.kind == SL_K_JOIN_LEFT;
    DRel<K> R, S;
    R.n = nr; S.n = ns;
    R.k = dalloc<K>(nr); S.k = dalloc<K>(ns);
    {
        uint32_t *rnd = dalloc<uint32_t>(nr), *rnd2 = dalloc<uint32_t>(nr), *iota = dalloc<uint32_t>(nr),
                 *perm = dalloc<uint32_t>(nr);
        gen_r_keys<K><<<4096, 256, 0, s>>>(rnd, iota, nr, 42);
        size_t tb = 0;
        CK(cub::DeviceRadixSort::SortPairs(NULL, tb, rnd, rnd2, iota, perm, nr, 0, 32, s));
        void *t = dalloc<char>(tb);
        CK(cub::DeviceRadixSort::SortPairs(t, tb, rnd, rnd2, iota, perm, nr, 0, 32, s));
        widen<K><<<4096, 256, 0, s>>>(perm, R.k, nr);
        CK(cudaStreamSynchronize(s));
        cudaFree(rnd); cudaFree(rnd2); cudaFree(iota); cudaFree(perm); cudaFree(t);
    }
    const u64 range = (u64)std::llround((double)nr / c.ratio);
    if (c.zipf) {
        std::vector<double> h(1024);
        double acc = 0, hn = 0;
        for (int i = 0; i < 1024; i++) h[i] = (acc += 1.0 / (i + 1));
        for (int64_t i = nr; i >= 1; i--) hn += 1.0 / (double)i;
        double *dh = dalloc<double>(1024);
        CK(cudaMemcpyAsync(dh, h.data(), 1024 * sizeof(double), cudaMemcpyHostToDevice, s));
        gen_s_zipf<K><<<4096, 256, 0, s>>>(S.k, ns, R.k, nr, dh, hn, 4242);
        CK(cudaStreamSynchronize(s));
        cudaFree(dh);
    } else {
        gen_s_keys<K><<<4096, 256, 0, s>>>(S.k, ns, range, 4242);
    }
    for (auto *d : {&R, &S}) {
        memset(&d->cols, 0, sizeof d->cols);
        d->cols.n = c.P;
        for (int j = 0; j < c.P; j++) {
            d->cols.width[j] = c.w;
            d->cols.ptr[j] = dalloc<char>((size_t)d->n * c.w);
            gen_col<<<4096, 256, 0, s>>>(d->cols.ptr[j], c.w, d->n, j, d == &S);
        }
    }
    CK(cudaStreamSynchronize(s));
    const size_t f_in = free_mem();

    const int bits = std::max(1, (int)std::lround(std::log2((double)nr / 4096.0)));
    /* gfur (packed < 0): partition (key, row id), join, gather payloads from the
     * untransformed columns by the matched row ids (GFUR, for low match ratios). */
    const bool gfur = c.algo != 2 && c.packed < 0;
    const int packed = c.algo == 2 ? c.P : gfur ? 0 : c.packed;
    int rb = packed * c.w;
    if (c.pad_rb) rb = c.pad_rb;
    if (gfur) rb = 4;
    const int b1 = c.algo == 0 ? bits : (c.sort_bits ? c.sort_bits : 8 * (int)sizeof(K));
    const int P_out = c.P;
    /* output columns (capacity = ns, the PK-FK bound; LEFT/ANTI/SEMI also <= ns) */
    const int64_t cap = ns;
    sl_k_join_out_t o;
    memset(&o, 0, sizeof o);
    o.capacity = cap;
    o.keys = dalloc<K>(cap);
    const bool need_pos = packed < c.P && !gfur;
    if (need_pos) { o.r_pos = with_r ? dalloc<uint32_t>(cap) : NULL; o.s_pos = dalloc<uint32_t>(cap); }
    if (c.kind == SL_K_JOIN_LEFT && !o.r_pos) o.r_pos = dalloc<uint32_t>(cap);
    o.r.n = with_r ? P_out : 0;
    o.s.n = P_out;
    for (int j = 0; j < P_out; j++) {
        o.s.width[j] = c.w; o.s.ptr[j] = dalloc<char>((size_t)cap * c.w);
        if (with_r) { o.r.width[j] = c.w; o.r.ptr[j] = dalloc<char>((size_t)cap * c.w); }
    }
    sl_k_join_out_t o_join = o; /* the join writes the packed columns only */
    o_join.r.n = with_r ? std::min(packed, P_out) : 0;
    o_join.s.n = std::min(packed, P_out);
    uint32_t *iota_r = NULL, *iota_s = NULL, *rrow = NULL, *srow = NULL;
    if (gfur) {
        iota_r = dalloc<uint32_t>(nr); iota_s = dalloc<uint32_t>(ns);
        rrow = dalloc<uint32_t>(cap); srow = dalloc<uint32_t>(cap);
        o_join.r.n = o_join.s.n = 1;
        o_join.r.width[0] = o_join.s.width[0] = 4;
        o_join.r.ptr[0] = rrow;
        o_join.s.ptr[0] = srow;
    }
    /* state */
    K *rk2 = NULL, *sk2 = NULL, *kscr = NULL;
    void *rrows = NULL, *srows = NULL, *rrows2 = NULL, *srows2 = NULL, *col2 = NULL;
    int64_t *ro = NULL, *so = NULL;
    size_t tb = 0;
    void *temp = NULL;
    const bool do_pack = c.algo != 2 && (packed > 1 || (c.pad_rb && packed > 0));
    if (c.algo != 2) {
        rk2 = dalloc<K>(nr); sk2 = dalloc<K>(ns);
        if (need_pos) kscr = dalloc<K>(std::max(nr, ns));
        if (do_pack) { rrows = dalloc<char>((size_t)nr * rb); srows = dalloc<char>((size_t)ns * rb); }
        if (rb) { rrows2 = dalloc<char>((size_t)nr * rb); srows2 = dalloc<char>((size_t)ns * rb); }
        if (need_pos) col2 = dalloc<char>((size_t)std::max(nr, ns) * c.w);
        size_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
        CK(L<K>::radix(NULL, &t1, R.k, rk2, rrows, rrows2, rb, nr, 0, b1, s));
        CK(L<K>::radix(NULL, &t2, S.k, sk2, srows, srows2, rb, ns, 0, b1, s));
        CK(L<K>::radix(NULL, &t4, S.k, sk2, NULL, NULL, c.w, std::max(nr, ns), 0, b1, s));
        if (c.algo == 0) {
            CK(L<K>::phj(NULL, &t3, NULL, NULL, NULL, NULL, NULL, NULL, ns, rb, bits, bits, c.kind, NULL, NULL, s));
            ro = dalloc<int64_t>(((size_t)1 << bits) + 1);
            so = dalloc<int64_t>(((size_t)1 << bits) + 1);
        } else {
            CK(L<K>::smj_count(NULL, &t3, NULL, nr, NULL, ns, c.kind, NULL, s));
        }
        tb = std::max(std::max(t1, t2), std::max(t3, t4));
    } else {
        CK(L<K>::npj_build(NULL, &tb, R.k, nr, s));
    }
    temp = dalloc<char>(tb);
    u64 *dcnt = dalloc<u64>(4);
    const size_t f_all = free_mem();

    cudaEvent_t ev[5];
    for (auto &e : ev) CK(cudaEventCreate(&e));
    std::vector<double> tt, t_r, t_s, t_j, t_g;
    u64 count = 0;
    for (int rep = -1; rep < 5; rep++) {
        CK(cudaEventRecord(ev[0], s));
        if (c.algo != 2) {
            sl_k_cols_t pc;
            size_t tt1 = tb;
            if (do_pack) { pc = R.cols; pc.n = packed; CK(sl_k_pack_rows(&pc, nr, rb, rrows, s)); }
            if (gfur) { iota_kernel<<<4096, 256, 0, s>>>(iota_r, nr); CK(cudaGetLastError()); }
            CK(L<K>::radix(temp, &tt1, R.k, rk2, gfur ? (void *)iota_r : do_pack ? rrows : R.cols.ptr[0], rrows2, rb, nr, 0, b1, s));
            if (c.algo == 0) CK(L<K>::offsets(rk2, nr, 0, bits, ro, s));
            CK(cudaEventRecord(ev[1], s));
            if (do_pack) { pc = S.cols; pc.n = packed; CK(sl_k_pack_rows(&pc, ns, rb, srows, s)); }
            if (gfur) { iota_kernel<<<4096, 256, 0, s>>>(iota_s, ns); CK(cudaGetLastError()); }
            CK(L<K>::radix(temp, &tt1, S.k, sk2, gfur ? (void *)iota_s : do_pack ? srows : S.cols.ptr[0], srows2, rb, ns, 0, b1, s));
            if (c.algo == 0) CK(L<K>::offsets(sk2, ns, 0, bits, so, s));
            CK(cudaEventRecord(ev[2], s));
            if (c.algo == 0) {
                CK(L<K>::phj(temp, &tb, rk2, rrows2, ro, sk2, srows2, so, ns, rb, bits, bits, c.kind, &o_join, dcnt, s));
            } else {
                CK(L<K>::smj_count(temp, &tb, rk2, nr, sk2, ns, c.kind, dcnt, s));
                CK(L<K>::smj_write(temp, tb, rk2, rrows2, nr, sk2, srows2, ns, rb, c.kind, &o_join, s));
            }
        } else {
            CK(L<K>::npj_build(temp, &tb, R.k, nr, s));
            CK(cudaEventRecord(ev[1], s));
            CK(cudaEventRecord(ev[2], s));
            CK(L<K>::npj_probe(temp, tb, nr, &R.cols, S.k, ns, &S.cols, c.kind, &o, dcnt, s));
        }
        CK(cudaEventRecord(ev[3], s));
        if (gfur) {
            u64 n_out = 0;
            CK(cudaMemcpyAsync(&n_out, dcnt, 8, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            const int64_t m = (int64_t)std::min<u64>(n_out, cap);
            CK(sl_k_gather_cols(&R.cols, rrow, m, &o.r, s));
            CK(sl_k_gather_cols(&S.cols, srow, m, &o.s, s));
        }
        /* GFTR: per further column, re-transform (key, column) and gather by positions */
        if (need_pos && c.algo != 2) {
            u64 n_out = 0;
            CK(cudaMemcpyAsync(&n_out, dcnt, 8, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            for (int j = packed; j < c.P; j++) {
                for (int side = 0; side < 2; side++) {
                    if (side == 0 && !with_r) continue;
                    DRel<K> &d = side ? S : R;
                    size_t tt1 = tb;
                    CK(L<K>::radix(temp, &tt1, d.k, kscr, d.cols.ptr[j], col2, c.w, d.n, 0, b1, s));
                    sl_k_cols_t src, dst;
                    memset(&src, 0, sizeof src);
                    memset(&dst, 0, sizeof dst);
                    src.n = dst.n = 1;
                    src.width[0] = dst.width[0] = c.w;
                    src.ptr[0] = col2;
                    dst.ptr[0] = side ? o.s.ptr[j] : o.r.ptr[j];
                    CK(sl_k_gather_cols(&src, side ? o.s_pos : o.r_pos, (int64_t)std::min<u64>(n_out, cap), &dst, s));
                }
            }
        }
        CK(cudaEventRecord(ev[4], s));
        CK(cudaEventSynchronize(ev[4]));
        float a, b, cc, d;
        CK(cudaEventElapsedTime(&a, ev[0], ev[1]));
        CK(cudaEventElapsedTime(&b, ev[1], ev[2]));
        CK(cudaEventElapsedTime(&cc, ev[2], ev[3]));
        CK(cudaEventElapsedTime(&d, ev[3], ev[4]));
        if (rep >= 0) { t_r.push_back(a); t_s.push_back(b); t_j.push_back(cc); t_g.push_back(d); tt.push_back(a + b + cc + d); }
    }
    count = down(dcnt, 1, s)[0];
    /* checksum of the output vs CPU */
    const int64_t n_out = (int64_t)std::min<u64>(count, cap);
    CK(cudaMemsetAsync(dcnt + 2, 0, 8, s));
    col_sum<<<4096, 256, 0, s>>>(o.keys, sizeof(K), n_out, dcnt + 2);
    for (int j = 0; j < o.r.n; j++) col_sum<<<4096, 256, 0, s>>>(o.r.ptr[j], c.w, n_out, dcnt + 2);
    for (int j = 0; j < o.s.n; j++) col_sum<<<4096, 256, 0, s>>>(o.s.ptr[j], c.w, n_out, dcnt + 2);
    const u64 checksum = down(dcnt + 2, 1, s)[0];
    /* Reference on the GPU by direct addressing (R keys are a permutation of 0..nr-1,
     * independent of every join kernel): row_of_key, then one pass over S. */
    uint32_t *row_of_key = dalloc<uint32_t>(nr);
    inverse_perm<K><<<4096, 256, 0, s>>>(R.k, nr, row_of_key);
    CK(cudaMemsetAsync(dcnt, 0, 2 * 8, s));
    ref_sum<K><<<4096, 256, 0, s>>>(S.k, ns, nr, row_of_key, c.P, c.w, c.kind, dcnt);
    std::vector<u64> rr = down(dcnt, 2, s);
    const u64 ref_n = rr[0], ref = rr[1];
    cudaFree(row_of_key);
    const bool ok = count == ref_n && checksum == ref;
    EXPECT(ok, "%s: count %llu (want %llu), checksum %llu (want %llu)", c.name, count, ref_n, checksum, ref);
    const double t = median(tt);
    const double in_b = (double)(nr + ns) * (sizeof(K) + c.P * c.w);
    const double out_b = (double)count * (sizeof(K) + (with_r ? 2 : 1) * c.P * c.w);
    const double floor_ms = (in_b + out_b) / (g_d2d_gbs * 1e9) * 1e3;
    printf("{\"bench\":\"join_ext\",\"workload\":\"%s\",\"algo\":\"%s\",\"kind\":\"%s\",\"key_bytes\":%zu,"
           "\"payloads\":%d,\"payload_bytes\":%d,\"packed\":%d,\"row_bytes\":%d,\"r_rows\":%lld,\"s_rows\":%lld,"
           "\"zipf\":%d,\"match_ratio\":%.2f,\"radix_bits\":%d,\"time_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,"
           "\"output_rows\":%llu,\"checksum_ok\":%s,\"peak_device_bytes\":%zu,\"input_device_bytes\":%zu,"
           "\"floor_ms\":%.3f,\"device\":\"%s\",\"phases\":{\"transform_r\":%.3f,\"transform_s\":%.3f,"
           "\"join\":%.3f,\"gftr_gather\":%.3f}}\n",
           c.name, c.algo == 0 ? "phj" : c.algo == 1 ? "smj" : "npj", kind_name[c.kind], sizeof(K), c.P, c.w, packed,
           rb, (long long)nr, (long long)ns, c.zipf, c.ratio, c.algo == 0 ? bits : b1, t,
           *std::min_element(tt.begin(), tt.end()), *std::max_element(tt.begin(), tt.end()), count,
           ok ? "true" : "false", f0 - f_all, f0 - f_in, floor_ms, g_dev.c_str(), median(t_r), median(t_s),
           median(t_j), median(t_g));
    fflush(stdout);
    for (auto &e : ev) cudaEventDestroy(e);
    cudaFree(R.k); cudaFree(S.k);
    for (int j = 0; j < c.P; j++) { cudaFree(R.cols.ptr[j]); cudaFree(S.cols.ptr[j]); cudaFree(o.s.ptr[j]); if (with_r) cudaFree(o.r.ptr[j]); }
    cudaFree(o.keys); cudaFree(o.r_pos); cudaFree(o.s_pos);
    cudaFree(rk2); cudaFree(sk2); cudaFree(kscr); cudaFree(rrows); cudaFree(srows); cudaFree(rrows2);
    cudaFree(srows2); cudaFree(col2); cudaFree(iota_r); cudaFree(iota_s); cudaFree(rrow); cudaFree(srow); cudaFree(ro); cudaFree(so); cudaFree(temp); cudaFree(dcnt);
}

static void measure_d2d(cudaStream_t s)
{
    const size_t bytes = (size_t)2 << 30;
    char *a = dalloc<char>(bytes), *b = dalloc<char>(bytes);
    CK(cudaMemsetAsync(a, 1, bytes, s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int i = 0; i < 6; i++) {
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i) t.push_back(ms);
    }
    g_d2d_gbs = 2.0 * bytes / (median(t) * 1e-3) / 1e9;
    printf("{\"bench\":\"d2d_copy\",\"bytes\":%zu,\"time_ms\":%.3f,\"gb_per_s_read_plus_write\":%.1f,\"device\":\"%s\"}\n",
           bytes, median(t), g_d2d_gbs, g_dev.c_str());
    cudaFree(a); cudaFree(b);
    cudaEventDestroy(e0); cudaEventDestroy(e1);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_dev = prop.name;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    if (!strcmp(mode, "check")) {
        const int64_t n = (int64_t)1 << (argc > 2 ? atoi(argv[2]) : 14);
        check_errors(s);
        check_all<uint32_t>(n, s);
        check_all<uint64_t>(n / 2, s);
    } else if (!strcmp(mode, "tiny")) {
        HRel<uint32_t> R = make_rel<uint32_t>(3000, {4, 8}, 0, 1500, 0, 1), S = make_rel<uint32_t>(2000, {4, 8}, 1, 3000, 0, 9);
        for (int i = 0; i < 5000; i++) add_row(R, 5, 0);
        add_row(S, 5, 1);
        for (int kind = 0; kind < 4; kind++) /* PHJ: inner, mark-only and select kernels */
            check_algo<uint32_t>("tiny dup+multi-chunk", R, S, 0, kind, 1, 1, s);
        check_algo<uint32_t>("tiny dup+multi-chunk", R, S, 1, SL_K_JOIN_LEFT, 1, 1, s);
        check_algo<uint32_t>("tiny dup+multi-chunk", R, S, 2, SL_K_JOIN_LEFT, 1, 1, s);
    } else if (!strcmp(mode, "bench")) {
        const int lg = argc > 2 ? atoi(argv[2]) : 27;
        const char *only = argc > 3 ? argv[3] : "";
        const int64_t n = (int64_t)1 << lg;
        measure_d2d(s);
        std::vector<BenchCfg> v = {
            /* name, nr, ns, P, w, ratio, algo, packed, pad, kind, sort_bits */
            {"narrow", n, n, 1, 4, 1.0, 0, 1, 0, 0, 0},
            {"wide2_pack8", n, n, 2, 4, 1.0, 0, 2, 0, 0, 0},
            {"wide2_gftr", n, n, 2, 4, 1.0, 0, 1, 0, 0, 0},
            {"wide3_pack12", n, n, 3, 4, 1.0, 0, 3, 0, 0, 0},
            {"wide3_pack16pad", n, n, 3, 4, 1.0, 0, 3, 16, 0, 0},
            {"wide3_pack8_gftr", n, n, 3, 4, 1.0, 0, 2, 0, 0, 0},
            {"narrow_8B", n, n, 1, 8, 1.0, 0, 1, 0, 0, 0},
            {"wide2_zipf1_pack8", n, n, 2, 4, 1.0, 0, 2, 0, 0, 0, 1},
            {"wide2_r27_s28_pack8", n, 2 * n, 2, 4, 1.0, 0, 2, 0, 0, 0},
            {"wide2_match25_pack8", n, n, 2, 4, 0.25, 0, 2, 0, 0, 0},
            {"wide2_match10_pack8", n, n, 2, 4, 0.10, 0, 2, 0, 0, 0},
            {"npj_wide2_match25", n, n, 2, 4, 0.25, 2, 2, 0, 0, 0},
            {"npj_wide2_match10", n, n, 2, 4, 0.10, 2, 2, 0, 0, 0},
            {"wide2_match25_gfur", n, n, 2, 4, 0.25, 0, -1, 0, 0, 0},
            {"wide2_match10_gfur", n, n, 2, 4, 0.10, 0, -1, 0, 0, 0},
            {"wide2_gfur", n, n, 2, 4, 1.0, 0, -1, 0, 0, 0},
            {"narrow_semi_m50", n, n, 1, 4, 0.5, 0, 1, 0, 1, 0},
            {"narrow_anti_m50", n, n, 1, 4, 0.5, 0, 1, 0, 2, 0},
            {"narrow_left_m50", n, n, 1, 4, 0.5, 0, 1, 0, 3, 0},
            {"smj_narrow", n, n, 1, 4, 1.0, 1, 1, 0, 0, 0},
            {"smj_narrow_27bits", n, n, 1, 4, 1.0, 1, 1, 0, 0, 27},
            {"smj_wide2_pack8", n, n, 2, 4, 1.0, 1, 2, 0, 0, 0},
            {"npj_r12", 1 << 12, n, 1, 4, 1.0, 2, 1, 0, 0, 0},
            {"phj_r12", 1 << 12, n, 1, 4, 1.0, 0, 1, 0, 0, 0},
            {"npj_r16", 1 << 16, n, 1, 4, 1.0, 2, 1, 0, 0, 0},
            {"phj_r16", 1 << 16, n, 1, 4, 1.0, 0, 1, 0, 0, 0},
            {"npj_r20", 1 << 20, n, 1, 4, 1.0, 2, 1, 0, 0, 0},
            {"phj_r20", 1 << 20, n, 1, 4, 1.0, 0, 1, 0, 0, 0},
            {"npj_r22", 1 << 22, n, 1, 4, 1.0, 2, 1, 0, 0, 0},
            {"phj_r22", 1 << 22, n, 1, 4, 1.0, 0, 1, 0, 0, 0},
            {"npj_r24", 1 << 24, n, 1, 4, 1.0, 2, 1, 0, 0, 0},
            {"phj_r24", 1 << 24, n, 1, 4, 1.0, 0, 1, 0, 0, 0},
            {"npj_r27", n, n, 1, 4, 1.0, 2, 1, 0, 0, 0},
        };
        for (auto &c : v) {
            const std::string list = std::string(",") + only + ",", me = std::string(",") + c.name + ",";
            if (*only && list.find(me) == std::string::npos)
                continue;
            if (!strcmp(c.name, "narrow_8B"))
                bench<uint64_t>(c, s);
            else
                bench<uint32_t>(c, s);
        }
    } else {
        fprintf(stderr, "usage: %s check [log2n] | tiny | bench [log2n] [filter]\n", argv[0]);
        return 2;
    }
    CK(cudaStreamDestroy(s));
    printf("%s: %d failure(s)\n", mode, g_fail);
    return g_fail ? 1 : 0;
}
