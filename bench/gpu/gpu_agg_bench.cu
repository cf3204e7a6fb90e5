/* Standalone check and benchmark of the GPU group-by (issue 7): the kernels of
 * kernels/aggregate driven by the operator's host code (operators/aggregate/agg_gpu.c),
 * built by bench/meson.build with CUDA (no engine).
 *
 *   gpu_agg_bench check [scale]   every case and method against a CPU reference
 *                                 (exact for integers, floats relative 1e-9); exit 1 on
 *                                 any mismatch
 *   gpu_agg_bench tiny            a few rows per case (racecheck)
 *   gpu_agg_bench bench LG G,...  2^LG rows, int32 keys (G distinct random 32-bit values,
 *                                 uniform), int64 values, count(*) + sum(v): every method,
 *                                 median of 5 after a warm-up (CUDA events), floor from a
 *                                 device copy measured in the same run; one JSON line each
 *   gpu_agg_bench sweep LG        table vs partitioned over G = 2^8 .. 2^24 (choice)
 *
 * $AGG_BENCH_ONLY=auto,part_b13 runs only the named methods of bench and sweep.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../../operators/aggregate/agg_gpu.h"
#include "agg_bench_util.h"

static cudaStream_t g_s;
static int64_t g_part_threshold; /* $AGG_PART_THRESHOLD; 0 = the driver's default */
static size_t g_live = 0, g_peak = 0;
static std::map<void *, size_t> g_sizes;

static void *m_alloc(void *, size_t b)
{
    void *p = NULL;
    if (cudaMallocAsync(&p, b, g_s) != cudaSuccess)
        return NULL;
    g_sizes[p] = b;
    g_live += b;
    g_peak = std::max(g_peak, g_live);
    return p;
}
static void m_free(void *, void *p)
{
    if (!p)
        return;
    g_live -= g_sizes[p];
    g_sizes.erase(p);
    CK(cudaFreeAsync(p, g_s));
}
static void *h_alloc(void *, size_t b)
{
    return malloc(b);
}
static void h_free(void *, void *p, size_t)
{
    free(p);
}
static const agg_gdrv_mem g_mem = {m_alloc, m_free, h_alloc, h_free, NULL};

/* ------------------------------------------------------------------ check ---------- */

struct HostCol {
    int type;
    std::vector<uint64_t> v;     /* raw: int64 / double bits */
    std::vector<uint8_t> valid;  /* empty: all valid */
};

struct Case {
    std::string name;
    sl_k_agg_spec sp;
    std::vector<HostCol> keys, vals;  /* vals[a] (empty column for count(*)) */
    int64_t n;
    bool expect_overflow;
};

static int width(int t)
{
    return t == SL_K_I32 || t == SL_K_F32 ? 4 : 8;
}

/* Device copy of a column (values in their width, Arrow bitmap). */
struct DevCol {
    void *d = NULL;
    uint8_t *v = NULL;
};

static DevCol upload(const HostCol &c, int64_t lo, int64_t n)
{
    DevCol o;
    int w = width(c.type);
    std::vector<char> buf((size_t)std::max<int64_t>(n, 1) * w);
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = c.v[lo + i];
        if (c.type == SL_K_I32) {
            int32_t y = (int32_t)(int64_t)x;
            memcpy(&buf[i * 4], &y, 4);
        } else if (c.type == SL_K_F32) {
            double dd;
            memcpy(&dd, &x, 8);
            float f = (float)dd;
            memcpy(&buf[i * 4], &f, 4);
        } else {
            memcpy(&buf[i * 8], &x, 8);
        }
    }
    CK(cudaMalloc(&o.d, buf.size()));
    CK(cudaMemcpy(o.d, buf.data(), buf.size(), cudaMemcpyHostToDevice));
    if (!c.valid.empty()) {
        std::vector<uint8_t> bm((size_t)(n + 7) / 8 + 1, 0);
        for (int64_t i = 0; i < n; i++)
            if (c.valid[lo + i])
                bm[i >> 3] |= (uint8_t)(1u << (i & 7));
        CK(cudaMalloc(&o.v, bm.size()));
        CK(cudaMemcpy(o.v, bm.data(), bm.size(), cudaMemcpyHostToDevice));
    }
    return o;
}

struct RefGroup {
    int64_t rows = 0;
    int64_t cnt[SL_K_AGG_MAX_AGGS] = {};
    __int128 isum[SL_K_AGG_MAX_AGGS] = {};
    double fsum[SL_K_AGG_MAX_AGGS] = {};
    uint64_t mm[SL_K_AGG_MAX_AGGS] = {};
};

typedef std::vector<int64_t> GKey; /* keys..., null mask */

static double as_f(uint64_t x)
{
    double d;
    memcpy(&d, &x, 8);
    return d;
}

static std::map<GKey, RefGroup> reference(const Case &c)
{
    std::map<GKey, RefGroup> m;
    for (int64_t i = 0; i < c.n; i++) {
        GKey k(c.sp.n_keys + 1, 0);
        for (int j = 0; j < c.sp.n_keys; j++) {
            const HostCol &kc = c.keys[j];
            if (!kc.valid.empty() && !kc.valid[i])
                k[c.sp.n_keys] |= 1 << j;
            else
                k[j] = c.sp.key_type[j] == SL_K_I32 ? (int64_t)(int32_t)(int64_t)kc.v[i] : (int64_t)kc.v[i];
        }
        RefGroup &g = m[k];
        g.rows++;
        for (int a = 0; a < c.sp.n_aggs; a++) {
            if (c.sp.fn[a] == SL_K_AGG_COUNT_STAR)
                continue;
            const HostCol &vc = c.vals[a];
            if (!vc.valid.empty() && !vc.valid[i])
                continue;
            uint64_t x = vc.v[i];
            bool isint = vc.type == SL_K_I32 || vc.type == SL_K_I64;
            int64_t xi = vc.type == SL_K_I32 ? (int64_t)(int32_t)(int64_t)x : (int64_t)x;
            double xf = vc.type == SL_K_F32 ? (double)(float)as_f(x) : as_f(x);
            int fn = c.sp.fn[a];
            if (fn == SL_K_AGG_SUM || fn == SL_K_AGG_AVG) {
                if (isint)
                    g.isum[a] += xi;
                else
                    g.fsum[a] += xf;
            } else if (fn == SL_K_AGG_MIN || fn == SL_K_AGG_MAX) {
                bool first = g.cnt[a] == 0;
                if (isint) {
                    int64_t cur = (int64_t)g.mm[a];
                    if (first || (fn == SL_K_AGG_MIN ? xi < cur : xi > cur))
                        g.mm[a] = (uint64_t)xi;
                } else {
                    double cur = as_f(g.mm[a]);
                    if (first || (fn == SL_K_AGG_MIN ? xf < cur : xf > cur))
                        memcpy(&g.mm[a], &xf, 8);
                }
            }
            g.cnt[a]++;
        }
    }
    return m;
}

struct OutBufs {
    sl_k_agg_spec sp;
    std::vector<void *> bufs;
    int64_t rows = 0;
};

static int out_fn(void *ctx, int64_t rows, sl_k_agg_out *out)
{
    OutBufs *o = (OutBufs *)ctx;
    for (void *p : o->bufs)
        m_free(NULL, p);
    o->bufs.clear();
    o->rows = rows;
    int nc = o->sp.n_keys + o->sp.n_aggs;
    for (int c = 0; c < nc; c++) {
        out->d_cols[c] = m_alloc(NULL, (size_t)std::max<int64_t>(rows, 1) * 8);
        o->bufs.push_back(out->d_cols[c]);
        bool count = c >= o->sp.n_keys && (o->sp.fn[c - o->sp.n_keys] == SL_K_AGG_COUNT ||
                                           o->sp.fn[c - o->sp.n_keys] == SL_K_AGG_COUNT_STAR);
        out->d_valid[c] = NULL;
        if (!count) {
            out->d_valid[c] = (uint32_t *)m_alloc(NULL, (size_t)(rows + 31) / 32 * 4 + 4);
            o->bufs.push_back(out->d_valid[c]);
        }
        if (!out->d_cols[c] || (!count && !out->d_valid[c]))
            return AGG_GDRV_ENOMEM;
    }
    return AGG_GDRV_OK;
}

struct Cfg {
    const char *name;
    int mode, shared, bits;
    int64_t init_cap;
    int batches, flags;
    int big, one_pass; /* agg_gdrv.big, .one_pass */
    int cluster;       /* agg_gdrv.cluster */
};

static const Cfg kCfgs[] = {
    {"auto", AGG_GDRV_AUTO, 0, 0, 0, 1, SL_K_AGG_PRELOAD},
    {"table", AGG_GDRV_TABLE, 0, 0, 0, 3, SL_K_AGG_PRELOAD},
    {"table_lazy", AGG_GDRV_TABLE, 0, 0, 0, 2, 0},
    {"table_global", AGG_GDRV_TABLE, -1, 0, 0, 1, SL_K_AGG_PRELOAD},
    {"table_grow", AGG_GDRV_TABLE, 16, 0, 64, 2, 0},
    {"part", AGG_GDRV_PART, 0, 0, 0, 3, 0},
    {"part_rounds", AGG_GDRV_PART, 0, 1, 0, 2, 0},
    /* The record table (inputs it cannot take switch to partitions), partitioned first
     * by two bits; unpartitioned, from a table of 64 groups. */
    {"direct", AGG_GDRV_DIRECT, 0, 2, 0, 3, 0},
    {"direct_grow", AGG_GDRV_DIRECT, 0, -1, 64, 2, 0},
    /* The partition kernel's big table: bits from the estimate, after the one-pass wide
     * partitioner, and two bits (the partitions of more groups than the big table holds
     * go to the generic kernel); the smaller table. */
    {"part_big", AGG_GDRV_PART, 0, 0, 0, 3, 0, 1},
    {"part_big_1pass", AGG_GDRV_PART, 0, 0, 0, 2, 0, 1, 1},
    {"part_big_b2", AGG_GDRV_PART, 0, 2, 0, 2, 0, 1},
    {"part_nobig", AGG_GDRV_PART, 0, 0, 0, 2, 0, -1},
    /* The cluster table (8 bits, one pass), of 2, 8 and 16 blocks; at 2 bits (the
     * partitions of more groups than 2 blocks hold go to the generic kernel). Specs with
     * min or max do not take it (the big table instead). */
    {"part_cl2", AGG_GDRV_PART, 0, 0, 0, 3, 0, 0, 0, 2},
    {"part_cl8", AGG_GDRV_PART, 0, 0, 0, 3, 0, 0, 0, 8},
    {"part_cl16", AGG_GDRV_PART, 0, 0, 0, 2, 0, 0, 0, 16},
    {"part_cl2_b2", AGG_GDRV_PART, 0, 2, 0, 2, 0, 0, 0, 2},
};

static int g_fail = 0;

#define BAD(...)                                                                        \
    do {                                                                                \
        if (bad++ < 5) {                                                                \
            printf("  MISMATCH %s/%s: ", c.name.c_str(), cfg.name);                     \
            printf(__VA_ARGS__);                                                        \
            printf("\n");                                                               \
        }                                                                               \
    } while (0)

static void run_case(const Case &c, const Cfg &cfg)
{
    agg_gdrv d;
    if (agg_gdrv_init(&d, &c.sp, g_s, &g_mem) != 0) {
        printf("init failed\n");
        exit(2);
    }
    d.part_threshold = g_part_threshold;
    d.force_mode = cfg.mode;
    d.shared_groups = cfg.shared;
    d.force_bits = cfg.bits;
    d.direct_bits = cfg.bits;
    d.init_cap = cfg.init_cap;
    d.update_flags = cfg.flags;
    d.big = cfg.big;
    d.one_pass = cfg.one_pass;
    d.cluster = cfg.cluster;
    std::vector<DevCol> dev;
    int nb = cfg.batches;
    for (int b = 0; b < nb; b++) {
        int64_t lo = c.n * b / nb, hi = c.n * (b + 1) / nb;
        sl_k_agg_input in;
        memset(&in, 0, sizeof in);
        in.n = hi - lo;
        for (int j = 0; j < c.sp.n_keys; j++) {
            DevCol dc = upload(c.keys[j], lo, hi - lo);
            dev.push_back(dc);
            in.keys[j].d_data = dc.d;
            in.keys[j].d_valid = dc.v;
        }
        for (int a = 0; a < c.sp.n_aggs; a++) {
            if (c.sp.fn[a] == SL_K_AGG_COUNT_STAR)
                continue;
            DevCol dc = upload(c.vals[a], lo, hi - lo);
            dev.push_back(dc);
            in.vals[a].d_data = dc.d;
            in.vals[a].d_valid = dc.v;
        }
        int rc = agg_gdrv_add(&d, &in);
        if (rc != 0) {
            printf("  FAIL %s/%s: add -> %d (%s: %s)\n", c.name.c_str(), cfg.name, rc,
                   d.what ? d.what : "", cudaGetErrorName(d.cuerr));
            g_fail++;
            return;
        }
    }
    int32_t *d_status;
    CK(cudaMalloc(&d_status, 4));
    CK(cudaMemset(d_status, 0, 4));
    OutBufs ob;
    ob.sp = c.sp;
    int64_t ng = 0, nulls[SL_K_AGG_MAX_KEYS + SL_K_AGG_MAX_AGGS];
    int rc = agg_gdrv_output(&d, out_fn, &ob, d_status, &ng, nulls);
    if (rc != 0) {
        printf("  FAIL %s/%s: output -> %d (%s: %s)\n", c.name.c_str(), cfg.name, rc,
               d.what ? d.what : "", cudaGetErrorName(d.cuerr));
        g_fail++;
        return;
    }
    int32_t status = 0;
    CK(cudaMemcpy(&status, d_status, 4, cudaMemcpyDeviceToHost));
    int nc = c.sp.n_keys + c.sp.n_aggs;
    std::vector<std::vector<uint64_t>> col(nc);
    std::vector<std::vector<uint32_t>> val(nc);
    for (int k = 0; k < nc; k++)
        col[k].resize((size_t)std::max<int64_t>(ng, 1));
    /* Download: walk ob.bufs in out_fn's order. */
    size_t bi = 0;
    for (int k = 0; k < nc; k++) {
        int a = k - c.sp.n_keys;
        bool count = k >= c.sp.n_keys &&
                     (c.sp.fn[a] == SL_K_AGG_COUNT || c.sp.fn[a] == SL_K_AGG_COUNT_STAR);
        int ow = 8;
        if (k < c.sp.n_keys)
            ow = width(c.sp.key_type[k]);
        else if (c.sp.fn[a] == SL_K_AGG_MIN || c.sp.fn[a] == SL_K_AGG_MAX)
            ow = width(c.sp.in_type[a]);
        std::vector<char> raw((size_t)std::max<int64_t>(ng, 1) * ow);
        if (ng)
            CK(cudaMemcpy(raw.data(), ob.bufs[bi], (size_t)ng * ow, cudaMemcpyDeviceToHost));
        bi++;
        for (int64_t r = 0; r < ng; r++) {
            uint64_t x = 0;
            if (ow == 4) {
                int t = k < c.sp.n_keys ? c.sp.key_type[k] : c.sp.in_type[a];
                if (t == SL_K_F32) {
                    float f;
                    memcpy(&f, &raw[r * 4], 4);
                    double dd = f;
                    memcpy(&x, &dd, 8);
                } else {
                    int32_t y;
                    memcpy(&y, &raw[r * 4], 4);
                    x = (uint64_t)(int64_t)y;
                }
            } else {
                memcpy(&x, &raw[r * 8], 8);
            }
            col[k][r] = x;
        }
        val[k].assign((size_t)(ng + 31) / 32 + 1, 0xffffffffu);
        if (!count) {
            if (ng)
                CK(cudaMemcpy(val[k].data(), ob.bufs[bi], (size_t)(ng + 31) / 32 * 4,
                              cudaMemcpyDeviceToHost));
            bi++;
        }
    }
    auto ref = reference(c);
    int bad = 0;
    if (c.expect_overflow) {
        if (status != -12)
            BAD("expected SL_EOVERFLOW (-12) in the status word, got %d", status);
    } else if (status != 0) {
        BAD("status word %d", status);
    }
    if (ng != (int64_t)ref.size())
        BAD("%lld groups, reference %zu", (long long)ng, ref.size());
    std::map<GKey, int> seen;
    for (int64_t r = 0; r < ng && !c.expect_overflow; r++) {
        GKey k(c.sp.n_keys + 1, 0);
        for (int j = 0; j < c.sp.n_keys; j++) {
            bool null = !(val[j][r >> 5] >> (r & 31) & 1);
            if (null)
                k[c.sp.n_keys] |= 1 << j;
            else
                k[j] = (int64_t)col[j][r];
        }
        if (seen[k]++) {
            BAD("row %lld: group repeated", (long long)r);
            continue;
        }
        auto it = ref.find(k);
        if (it == ref.end()) {
            BAD("row %lld: group not in the reference (key0 %lld)", (long long)r, (long long)k[0]);
            continue;
        }
        const RefGroup &g = it->second;
        for (int a = 0; a < c.sp.n_aggs; a++) {
            int kk = c.sp.n_keys + a, fn = c.sp.fn[a];
            bool null = !(val[kk][r >> 5] >> (r & 31) & 1);
            uint64_t x = col[kk][r];
            bool isint = c.sp.in_type[a] == SL_K_I32 || c.sp.in_type[a] == SL_K_I64;
            if (fn == SL_K_AGG_COUNT_STAR) {
                if ((int64_t)x != g.rows)
                    BAD("count(*) %lld vs %lld", (long long)x, (long long)g.rows);
                continue;
            }
            if (fn == SL_K_AGG_COUNT) {
                if ((int64_t)x != g.cnt[a])
                    BAD("count %lld vs %lld", (long long)x, (long long)g.cnt[a]);
                continue;
            }
            if (g.cnt[a] == 0) {
                if (!null)
                    BAD("agg %d: not null for a group without values", a);
                continue;
            }
            if (null) {
                BAD("agg %d: null, reference has %lld values", a, (long long)g.cnt[a]);
                continue;
            }
            if (fn == SL_K_AGG_SUM && isint) {
                if ((__int128)(int64_t)x != g.isum[a])
                    BAD("sum %lld vs %lld", (long long)x, (long long)g.isum[a]);
            } else if (fn == SL_K_AGG_SUM || fn == SL_K_AGG_AVG) {
                double want = isint ? (double)g.isum[a] : g.fsum[a];
                if (fn == SL_K_AGG_AVG)
                    want /= (double)g.cnt[a];
                double got = as_f(x);
                if (fabs(got - want) > 1e-9 * std::max(1.0, fabs(want)))
                    BAD("agg %d (fn %d): %.17g vs %.17g", a, fn, got, want);
            } else if (isint) {
                if ((int64_t)x != (int64_t)g.mm[a])
                    BAD("min/max %lld vs %lld", (long long)x, (long long)g.mm[a]);
            } else {
                double want = as_f(g.mm[a]);
                if (c.sp.in_type[a] == SL_K_F32)
                    want = (double)(float)want;
                if (as_f(x) != want)
                    BAD("min/max %.17g vs %.17g", as_f(x), want);
            }
        }
    }
    printf("  %-24s %-13s n=%-9lld groups=%-8lld mode=%d bits=%d grows=%lld replayed=%lld "
           "reruns=%lld status=%d cluster=%d %s\n",
           c.name.c_str(), cfg.name, (long long)c.n, (long long)ng, d.mode, d.bits,
           (long long)d.grows, (long long)d.replayed, (long long)d.rounds_rerun, status,
           d.cluster_on, bad ? "FAIL" : "ok");
    if (bad)
        g_fail++;
    for (void *p : ob.bufs)
        m_free(NULL, p);
    agg_gdrv_free(&d);
    CK(cudaStreamSynchronize(g_s));
    if (g_live != 0) {
        printf("  LEAK %s/%s: %zu device bytes live\n", c.name.c_str(), cfg.name, g_live);
        g_fail++;
    }
    for (DevCol &x : dev) {
        cudaFree(x.d);
        cudaFree(x.v);
    }
    cudaFree(d_status);
}

static HostCol gen_col(int type, int64_t n, uint64_t *s, double null_frac,
                       std::function<uint64_t(int64_t)> f)
{
    HostCol c;
    c.type = type;
    c.v.resize((size_t)n);
    for (int64_t i = 0; i < n; i++)
        c.v[i] = f(i);
    if (null_frac > 0) {
        c.valid.resize((size_t)n);
        for (int64_t i = 0; i < n; i++)
            c.valid[i] = (double)(rng(s) >> 11) * 0x1.0p-53 >= null_frac;
    }
    return c;
}

static uint64_t fbits(double d)
{
    uint64_t x;
    memcpy(&x, &d, 8);
    return x;
}

/* Standard spec: one int32 key; count(*), sum, min, max, avg, count of an int64 column. */
static Case std_case(const std::string &name, int64_t n, int64_t groups, double zipf,
                     uint64_t seed, int ktype = SL_K_I32)
{
    Case c;
    c.name = name;
    c.n = n;
    c.expect_overflow = false;
    memset(&c.sp, 0, sizeof c.sp);
    c.sp.n_keys = 1;
    c.sp.key_type[0] = ktype;
    int fns[6] = {SL_K_AGG_COUNT_STAR, SL_K_AGG_SUM, SL_K_AGG_MIN, SL_K_AGG_MAX, SL_K_AGG_AVG,
                  SL_K_AGG_COUNT};
    c.sp.n_aggs = 6;
    std::vector<double> cdf;
    if (zipf > 0) {
        double t = 0;
        cdf.resize((size_t)groups);
        for (int64_t g = 0; g < groups; g++)
            cdf[g] = (t += pow((double)(g + 1), -zipf));
        for (auto &x : cdf)
            x /= t;
    }
    uint64_t s = seed * 7 + 3;
    std::vector<int64_t> gid((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = rng(&s);
        if (zipf > 0)
            gid[i] = std::lower_bound(cdf.begin(), cdf.end(), (double)(r >> 11) * 0x1.0p-53) -
                     cdf.begin();
        else
            gid[i] = (int64_t)(r % (uint64_t)groups);
    }
    c.keys.push_back(gen_col(ktype, n, &s, 0, [&](int64_t i) {
        uint64_t k = (uint64_t)gid[i] * 0x9E3779B97F4A7C15ull;
        return ktype == SL_K_I32 ? (uint64_t)(int64_t)(int32_t)(k >> 32) : k;
    }));
    for (int a = 0; a < 6; a++) {
        c.sp.fn[a] = fns[a];
        c.sp.in_type[a] = SL_K_I64;
        c.vals.push_back(a == 0 ? HostCol{SL_K_I64, {}, {}}
                                : gen_col(SL_K_I64, n, &s, 0, [&](int64_t) {
                                      return (uint64_t)((int64_t)(rng(&s) % 2000001) - 1000000);
                                  }));
    }
    return c;
}

/* Two keys (int32 with nulls, int64), values of every type with nulls. */
static Case nulls_case(int64_t n, uint64_t seed)
{
    Case c;
    c.name = "nulls_composite";
    c.n = n;
    c.expect_overflow = false;
    memset(&c.sp, 0, sizeof c.sp);
    c.sp.n_keys = 2;
    c.sp.key_type[0] = SL_K_I32;
    c.sp.key_type[1] = SL_K_I64;
    uint64_t s = seed;
    c.keys.push_back(gen_col(SL_K_I32, n, &s, 0.1, [&](int64_t) { return (uint64_t)(rng(&s) % 50); }));
    c.keys.push_back(gen_col(SL_K_I64, n, &s, 0.05, [&](int64_t) {
        return (uint64_t)((int64_t)(rng(&s) % 7) - 3) << 40;
    }));
    struct { int fn, type; } a[8] = {{SL_K_AGG_SUM, SL_K_I32}, {SL_K_AGG_SUM, SL_K_F32},
                                     {SL_K_AGG_AVG, SL_K_F64}, {SL_K_AGG_MIN, SL_K_F64},
                                     {SL_K_AGG_MAX, SL_K_F32}, {SL_K_AGG_MIN, SL_K_I32},
                                     {SL_K_AGG_COUNT, SL_K_I64}, {SL_K_AGG_COUNT_STAR, 0}};
    c.sp.n_aggs = 8;
    for (int i = 0; i < 8; i++) {
        c.sp.fn[i] = a[i].fn;
        c.sp.in_type[i] = a[i].type;
        if (a[i].fn == SL_K_AGG_COUNT_STAR) {
            c.vals.push_back(HostCol{SL_K_I64, {}, {}});
            continue;
        }
        /* Column 6 is all null in some groups: nulls 0.9. */
        double nf = i == 6 ? 0.9 : 0.2;
        int t = a[i].type;
        c.vals.push_back(gen_col(t, n, &s, nf, [&, t](int64_t) {
            int64_t r = (int64_t)(rng(&s) % 200001) - 100000;
            if (t == SL_K_F32 || t == SL_K_F64)
                return fbits((double)r / 64.0);
            return (uint64_t)r;
        }));
    }
    return c;
}

/* int64 sums: one group overflows (SL_EOVERFLOW), or (no_overflow) partial sums pass
 * 2^63 but the final sum fits. */
static Case overflow_case(int64_t n, bool overflow)
{
    Case c;
    c.name = overflow ? "int64_overflow" : "int64_near_overflow";
    c.n = n;
    c.expect_overflow = overflow;
    memset(&c.sp, 0, sizeof c.sp);
    c.sp.n_keys = 1;
    c.sp.key_type[0] = SL_K_I64;
    c.sp.n_aggs = 2;
    c.sp.fn[0] = SL_K_AGG_SUM;
    c.sp.in_type[0] = SL_K_I64;
    c.sp.fn[1] = SL_K_AGG_COUNT_STAR;
    uint64_t s = 5;
    c.keys.push_back(gen_col(SL_K_I64, n, &s, 0, [&](int64_t i) { return (uint64_t)(i % 3); }));
    c.vals.push_back(gen_col(SL_K_I64, n, &s, 0, [&](int64_t i) {
        int64_t big = (int64_t)1 << 62;
        if (i % 3 != 0)
            return (uint64_t)(int64_t)(i % 100);
        if (overflow)
            return (uint64_t)big;                                  /* group 0 overflows */
        /* The first half of group 0 passes 2^63 in any order, the second brings it back. */
        return (uint64_t)(i / 3 < (n + 2) / 6 ? big : -big + 1);
    }));
    c.vals.push_back(HostCol{SL_K_I64, {}, {}});
    return c;
}

static int cmd_check(double scale)
{
    auto N = [&](int64_t x) { return std::max<int64_t>(1, (int64_t)(x * scale)); };
    std::vector<Case> cases;
    {
        Case e = std_case("empty", 0, 1, 0, 1);
        cases.push_back(e);
    }
    cases.push_back(std_case("one_row", 1, 1, 0, 2));
    cases.push_back(std_case("one_group", N(200000), 1, 0, 3));
    cases.push_back(std_case("groups_1000", N(1000000), 1000, 0, 4));
    cases.push_back(std_case("groups_200k", N(1000000), std::max<int64_t>(2, N(200000)), 0, 5));
    cases.push_back(std_case("zipf_1.0", N(1000000), std::max<int64_t>(2, N(100000)), 1.0, 6));
    cases.push_back(std_case("key_int64", N(300000), std::max<int64_t>(2, N(20000)), 0, 7, SL_K_I64));
    cases.push_back(nulls_case(N(300000), 8));
    cases.push_back(overflow_case(N(30000) + 3, true));
    cases.push_back(overflow_case(N(30000) + 3, false));
    for (const Case &c : cases)
        for (const Cfg &cfg : kCfgs)
            run_case(c, cfg);
    printf("check: %d failures\n", g_fail);
    return g_fail ? 1 : 0;
}

/* ------------------------------------------------------------------ bench ---------- */

__device__ __host__ inline uint64_t mixr(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

__global__ void gen_kernel(int32_t *k, int64_t *v, int64_t n, uint64_t groups)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t r = mixr((uint64_t)i * 2 + 1);
        k[i] = (int32_t)key_of((uint32_t)(r % groups));
        v[i] = (int64_t)(mixr((uint64_t)i * 2 + 2) % 1000);
    }
}

static double g_d2d = 0;
static std::string g_dev;

static void measure_d2d()
{
    size_t bytes = (size_t)2 << 30;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> t;
    for (int r = 0; r < 6; r++) {
        cudaEventRecord(e0, g_s);
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, g_s));
        cudaEventRecord(e1, g_s);
        CK(cudaEventSynchronize(e1));
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r)
            t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    g_d2d = 2.0 * bytes / (t[t.size() / 2] * 1e-3) / 1e9;
    printf("{\"bench\":\"d2d_copy\",\"bytes\":%zu,\"time_ms\":%.3f,\"gb_per_s_read_plus_write\":%.1f,\"device\":\"%s\"}\n",
           bytes, t[t.size() / 2], g_d2d, g_dev.c_str());
    cudaFree(a);
    cudaFree(b);
}

struct BenchOut {
    std::vector<void *> bufs;
};

static int bench_out_fn(void *ctx, int64_t rows, sl_k_agg_out *out)
{
    BenchOut *o = (BenchOut *)ctx;
    for (void *p : o->bufs)
        m_free(NULL, p);
    o->bufs.clear();
    size_t w[3] = {4, 8, 8};
    for (int c = 0; c < 3; c++) {
        out->d_cols[c] = m_alloc(NULL, (size_t)std::max<int64_t>(rows, 1) * w[c]);
        o->bufs.push_back(out->d_cols[c]);
    }
    out->d_valid[0] = (uint32_t *)m_alloc(NULL, (size_t)(rows + 31) / 32 * 4 + 4);
    out->d_valid[2] = (uint32_t *)m_alloc(NULL, (size_t)(rows + 31) / 32 * 4 + 4);
    o->bufs.push_back(out->d_valid[0]);
    o->bufs.push_back(out->d_valid[2]);
    return AGG_GDRV_OK;
}

__global__ void sums_kernel(const int64_t *cnt, const int64_t *sum, int64_t n,
                            unsigned long long *acc)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        atomicAdd(&acc[0], (unsigned long long)cnt[i]);
        atomicAdd(&acc[1], (unsigned long long)sum[i]);
    }
}

/* $AGG_BENCH_ONLY: the methods to run (comma-separated names; unset: all), so that a
 * profiler run times only the kernels it looks at. */
static bool method_wanted(const char *method)
{
    const char *only = getenv("AGG_BENCH_ONLY");
    if (!only || !*only)
        return true;
    const size_t n = strlen(method);
    for (const char *p = only; *p;) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, method, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

/* One configuration: median of 5 after a warm-up. */
static void bench_one(const char *method, int mode, int shared, int bits, int64_t n,
                      int64_t groups, int32_t *dk, int64_t *dv, uint64_t vsum,
                      int flags = SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT | SL_K_AGG_LEAN,
                      int rowpart = 0, int big = 0, int one_pass = 0, int cluster = 0)
{
    if (!method_wanted(method))
        return;
    sl_k_agg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.n_keys = 1;
    sp.key_type[0] = SL_K_I32;
    sp.n_aggs = 2;
    sp.fn[0] = SL_K_AGG_COUNT_STAR;
    sp.fn[1] = SL_K_AGG_SUM;
    sp.in_type[1] = SL_K_I64;
    sl_k_agg_input in;
    memset(&in, 0, sizeof in);
    in.n = n;
    in.keys[0].d_data = dk;
    in.vals[1].d_data = dv;
    int32_t *d_status;
    unsigned long long *acc;
    CK(cudaMalloc(&d_status, 4));
    CK(cudaMalloc(&acc, 16));
    cudaEvent_t e0, e1, e2;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    std::vector<double> tt, ta, to;
    int64_t ng = 0;
    bool ok = true;
    agg_gdrv last;
    size_t peak = 0;
    for (int r = 0; r < 6; r++) {
        CK(cudaMemsetAsync(d_status, 0, 4, g_s));
        CK(cudaStreamSynchronize(g_s));
        size_t base = g_live;
        g_peak = g_live;
        agg_gdrv d;
        BenchOut bo;
        cudaEventRecord(e0, g_s);
        if (agg_gdrv_init(&d, &sp, g_s, &g_mem) != 0)
            exit(2);
        d.part_threshold = g_part_threshold;
        d.force_mode = mode;
        d.shared_groups = shared;
        d.force_bits = bits;
        d.direct_bits = bits;
        d.update_flags = flags;
        d.row_partition = rowpart;
        d.big = big;
        d.one_pass = one_pass;
        d.cluster = cluster;
        int rc = agg_gdrv_add(&d, &in);
        cudaEventRecord(e1, g_s);
        int64_t nulls[3];
        if (rc == 0)
            rc = agg_gdrv_output(&d, bench_out_fn, &bo, d_status, &ng, nulls);
        cudaEventRecord(e2, g_s);
        CK(cudaEventSynchronize(e2));
        if (rc != 0) {
            printf("bench %s: driver failed %d (%s: %s)\n", method, rc, d.what ? d.what : "",
                   cudaGetErrorName(d.cuerr));
            exit(1);
        }
        float a, b;
        cudaEventElapsedTime(&a, e0, e1);
        cudaEventElapsedTime(&b, e1, e2);
        if (r) {
            ta.push_back(a);
            to.push_back(b);
            tt.push_back(a + b);
        }
        peak = g_peak - base;
        if (r == 0) {
            CK(cudaMemsetAsync(acc, 0, 16, g_s));
            sums_kernel<<<1024, 256, 0, g_s>>>((const int64_t *)bo.bufs[1],
                                               (const int64_t *)bo.bufs[2], ng, acc);
            unsigned long long h[2];
            int32_t st;
            CK(cudaMemcpyAsync(h, acc, 16, cudaMemcpyDeviceToHost, g_s));
            CK(cudaMemcpyAsync(&st, d_status, 4, cudaMemcpyDeviceToHost, g_s));
            CK(cudaStreamSynchronize(g_s));
            ok = h[0] == (unsigned long long)n && h[1] == vsum && st == 0 &&
                 ng <= groups && ng >= std::min<int64_t>(groups, n) * 9 / 10;
        }
        last = d;
        for (void *p : bo.bufs)
            m_free(NULL, p);
        agg_gdrv_free(&d);
    }
    auto med = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    double t = med(tt);
    double floor_ms = ((double)n * 12 + (double)ng * 20) / (g_d2d * 1e9) * 1e3;
    std::sort(tt.begin(), tt.end());
    printf("{\"bench\":\"aggregate\",\"method\":\"%s\",\"rows\":%lld,\"groups\":%lld,"
           "\"time_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,\"gtuples_per_s\":%.2f,"
           "\"output_rows\":%lld,\"check_ok\":%s,\"peak_device_bytes\":%zu,\"floor_ms\":%.3f,"
           "\"x_floor\":%.2f,\"vs_pytorch\":%.1f,\"mode\":%d,\"bits\":%d,\"g_est\":%.0f,"
           "\"grows\":%lld,\"clustered\":%d,\"big\":%d,\"cluster\":%d,\"device\":\"%s\",\"phases\":{\"%s\":%.3f,"
           "\"%s\":%.3f,\"record_partition\":%.3f}}\n",
           method, (long long)n, (long long)groups, t, tt.front(), tt.back(),
           (double)n / (t * 1e6), (long long)ng, ok ? "true" : "false", peak, floor_ms,
           t / floor_ms, (groups <= 1000 ? 17.0 : 35.0) / t, last.mode, last.bits, last.g_est,
           (long long)last.grows, last.clustered, last.big_on, last.cluster_on, g_dev.c_str(),
           last.mode == AGG_GDRV_PART ? "partition" : "aggregate", med(ta),
           last.mode == AGG_GDRV_PART ? "aggregate_partitions" : "output", med(to),
           last.phase_ms[AGG_PH_PARTITION]);
    fflush(stdout);
    cudaFree(d_status);
    cudaFree(acc);
}

static int cmd_bench(int lg, const char *glist, bool sweep)
{
    int64_t n = (int64_t)1 << lg;
    int32_t *dk;
    int64_t *dv;
    CK(cudaMalloc(&dk, (size_t)n * 4));
    CK(cudaMalloc(&dv, (size_t)n * 8));
    measure_d2d();
    std::vector<int64_t> gs;
    if (sweep) {
        for (int b = 8; b <= 24; b += 2)
            gs.push_back((int64_t)1 << b);
    } else {
        for (const char *p = glist; *p;) {
            gs.push_back(strtoll(p, (char **)&p, 0));
            if (*p == ',')
                p++;
        }
    }
    for (int64_t g : gs) {
        gen_kernel<<<4096, 256, 0, g_s>>>(dk, dv, n, (uint64_t)g);
        CK(cudaStreamSynchronize(g_s));
        uint64_t vsum = 0;
        for (int64_t i = 0; i < n; i++)
            vsum += mixr((uint64_t)i * 2 + 2) % 1000;
        if (sweep) {
            bench_one("table", AGG_GDRV_TABLE, 0, 0, n, g, dk, dv, vsum);
            bench_one("part", AGG_GDRV_PART, 0, 0, n, g, dk, dv, vsum);
            continue;
        }
        bench_one("auto", AGG_GDRV_AUTO, 0, 0, n, g, dk, dv, vsum);
        /* Without the partition kernel's big table (debug_agg_gpu_no_big_table); the
         * cluster table (agg_gdrv.cluster, not the default: slower) of 8 and 16 blocks
         * at 8 bits (one pass), 8 at 9 bits (a lower load), 2 at 10 (a load of 0.57 as 8
         * at 8). */
        const int fl = SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT | SL_K_AGG_LEAN;
        if (g > 65536) {
            bench_one("auto_nobig", AGG_GDRV_AUTO, 0, 0, n, g, dk, dv, vsum, fl, 0, -1);
            const int cl[][2] = {{8, 8}, {16, 8}, {8, 9}, {2, 10}};
            for (const auto &c : cl) {
                char name[32];
                snprintf(name, sizeof name, "part_cl%d_b%d", c[0], c[1]);
                bench_one(name, AGG_GDRV_PART, 0, c[1], n, g, dk, dv, vsum, fl, 0, 0, 0, c[0]);
            }
        }
        /* The general shared-table kernel (before SL_K_AGG_LEAN), and with the row counts
         * packed with the sums (SL_K_AGG_PACK). */
        bench_one("auto_general", AGG_GDRV_AUTO, 0, 0, n, g, dk, dv, vsum,
                  SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT);
        bench_one("auto_packed", AGG_GDRV_AUTO, 0, 0, n, g, dk, dv, vsum,
                  SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT | SL_K_AGG_PACK);
        if (g <= 65536) {
            bench_one("table_atom64", AGG_GDRV_TABLE, 0, 0, n, g, dk, dv, vsum,
                      SL_K_AGG_PRELOAD);
            bench_one("table_s2048_lazy", AGG_GDRV_TABLE, 0, 0, n, g, dk, dv, vsum, 0);
            bench_one("table_s1024", AGG_GDRV_TABLE, 1024, 0, n, g, dk, dv, vsum);
            bench_one("table_s2048", AGG_GDRV_TABLE, 2048, 0, n, g, dk, dv, vsum);
            bench_one("table_s4096", AGG_GDRV_TABLE, 4096, 0, n, g, dk, dv, vsum);
            bench_one("table_global", AGG_GDRV_TABLE, -1, 0, n, g, dk, dv, vsum);
        } else {
            bench_one("table", AGG_GDRV_TABLE, 0, 0, n, g, dk, dv, vsum);
            /* The record table: partitioning bits from its size, none, 4 and 7. */
            bench_one("direct", AGG_GDRV_DIRECT, 0, 0, n, g, dk, dv, vsum);
            bench_one("direct_b0", AGG_GDRV_DIRECT, 0, -1, n, g, dk, dv, vsum);
            bench_one("direct_b4", AGG_GDRV_DIRECT, 0, 4, n, g, dk, dv, vsum);
            bench_one("direct_b7", AGG_GDRV_DIRECT, 0, 7, n, g, dk, dv, vsum);
            /* The partitioned method: the tile partitioner (two passes past 8 bits),
             * and the row-by-row one it replaces. */
            for (int b = 11; b <= 14; b++) {
                char name[32];
                snprintf(name, sizeof name, "part_b%d", b);
                bench_one(name, AGG_GDRV_PART, 0, b, n, g, dk, dv, vsum,
                          SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT | SL_K_AGG_LEAN, 0, -1);
            }
            /* The big table at forced bits after the two-pass tile partitioner, and after
             * the one-pass wide partitioner. */
            for (int b = 11; b <= 13; b++)
                for (int op = 0; op < 2; op++) {
                    char name[32];
                    snprintf(name, sizeof name, "part_big%s_b%d", op ? "_1pass" : "", b);
                    if (!op || b <= 12)
                        bench_one(name, AGG_GDRV_PART, 0, b, n, g, dk, dv, vsum,
                                  SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT | SL_K_AGG_LEAN, 0,
                                  1, op);
                }
            bench_one("part_b13_rows", AGG_GDRV_PART, 0, 13, n, g, dk, dv, vsum,
                      SL_K_AGG_PRELOAD | SL_K_AGG_SMALL_SPLIT, 1);
        }
    }
    cudaFree(dk);
    cudaFree(dv);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s check [scale] | tiny | bench LG G,... | sweep LG\n", argv[0]);
        return 2;
    }
    int dev_count = 0;
    if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
        printf("no GPU\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_dev = prop.name;
    CK(cudaStreamCreateWithFlags(&g_s, cudaStreamNonBlocking));
    /* Keep freed pool memory: taking memory from the pool is timed, growing it is not. */
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t thr = UINT64_MAX;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    if (getenv("AGG_PART_THRESHOLD")) /* move the method threshold (tests of the choice) */
        g_part_threshold = atoll(getenv("AGG_PART_THRESHOLD"));
    std::string cmd = argv[1];
    if (cmd == "check")
        return cmd_check(argc > 2 ? atof(argv[2]) : 1.0);
    if (cmd == "tiny")
        return cmd_check(0.0002);
    if (cmd == "bench")
        return cmd_bench(argc > 2 ? atoi(argv[2]) : 28, argc > 3 ? argv[3] : "1000,16777216", false);
    if (cmd == "sweep")
        return cmd_bench(argc > 2 ? atoi(argv[2]) : 26, "", true);
    return 2;
}
