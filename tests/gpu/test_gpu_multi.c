/* Multi-device join and sort (operators/common/mgpu.h) on 1, 2, 4 and 8 logical devices
 * of one GPU (split_gpu), against a CPU reference: joins inner, semi, anti and left on
 * uniform keys, Zipf 1.0 probe keys, duplicates on both sides and keys spread over all
 * 64 bits; sorts (stable) on the same key sets; data starting in host memory or spread
 * over the devices; each through the direct exchange (a kernel per sender, and a copy
 * per range) and through the packet exchange (sl__mg_opts.packets), joins also through
 * the pipelined exchange in many small chunks and through the direct exchange after all
 * partitioning, and the multi-device sort-merge join (sl__mg_sort_merge_join) through
 * the direct and the packet exchange (enum path). `part_bits_2dev`: 2^14 hash partitions
 * (more than the pipelined exchange's histograms hold) take the staged exchange;
 * `copy_ranges`: the direct exchange's copy kernel. Case `small_2dev` keeps inputs small
 * for compute-sanitizer; `budget_skew_2dev` checks that a spread whose receiver cannot
 * hold its rows ends with SL_EBUDGET before anything moves; `fixed_cost_4dev` prints
 * what opening the devices and a small join cost; `exchange_throughput` prints both
 * exchanges' rates as a fraction of a plain device-to-device copy, and the packet
 * exchange's cost per packet.
 * Run one case: test_gpu_multi <case>. */
#include <math.h>
#include <time.h>

#include "common/mgpu.h"
#include "gpu_int.h"
#include "gpu_test.h"
#include "multi_keys.h"
#include "sluice_k/columns.h"
#include "sluice_k/join_types.h"

enum dist { UNIFORM, ZIPF, DUPS, WIDE, N_DIST };
static const char *const dist_name[] = {"uniform", "zipf1.0", "dups", "wide64"};
static const char *const kind_name[] = {"inner", "semi", "anti", "left"};

static int64_t mix64(int64_t k)
{
    uint64_t z = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    return (int64_t)(z ^ (z >> 29));
}

static void make_keys(enum dist d, int64_t *r, int64_t nr, int64_t *s, int64_t ns)
{
    rng_state = 1234 + (uint64_t)d;
    int64_t range = d == DUPS ? nr / 4 + 1 : 2 * nr + 1; /* + 1: an empty side still has a range */
    for (int64_t i = 0; i < nr; i++)
        r[i] = d == ZIPF ? i : (int64_t)(rnd() % (uint64_t)range);
    if (d == ZIPF)
        zipf_keys(s, ns, nr);
    else
        for (int64_t i = 0; i < ns; i++)
            s[i] = (int64_t)(rnd() % (uint64_t)range);
    if (d == WIDE) {
        for (int64_t i = 0; i < nr; i++)
            r[i] = mix64(r[i]);
        for (int64_t i = 0; i < ns; i++)
            s[i] = mix64(s[i]);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* How the joins and sorts below exchange rows: the direct exchange (a join's pipelined
 * one in chunks of 2^20 rows: one chunk a share here), the packet exchange, the direct
 * exchange with a cudaMemcpyAsync per range instead of a kernel per sender, a join's
 * pipelined exchange in chunks of 97 rows with one chunk in flight (many chunks, each
 * waiting for the copies of the one before), and a join's direct exchange after all
 * partitioning (chunk_rows -1); then the multi-device sort-merge join through the direct
 * and the packet exchange. Sorts take only the first three. */
enum path { DIRECT, PACKETS, COPIES, CHUNKS, STAGED, SMJ, SMJ_PACKETS, N_PATHS };
static int use_packets;
static int part_bits; /* 0: the default (2^10 partitions) */
static const char *const path_name[] = {"direct", "packets", "copies", "chunks", "staged",
                                        "smj", "smj-pkt"};

static struct sl__mg_opts path_opts(int path)
{
    return (struct sl__mg_opts){.packet_bytes = 256 << 10,
                                .packets = path == PACKETS || path == SMJ_PACKETS,
                                .chunk_rows = path == CHUNKS ? 97 : path == STAGED ? -1 : 0,
                                .chunks_in_flight = path == CHUNKS ? 1 : 0,
                                .part_bits = part_bits, .copies = path == COPIES};
}

/* ---- a table spread over the devices ---- */

struct spread {
    struct sl__mg_table t;
    void *dk[SL__MG_MAX_DEV], *dv[SL__MG_MAX_DEV];
};

/* Cuts host arrays into m->n contiguous shares (uneven: share d gets a little more than
 * share d - 1), in host memory or copied to each device. */
static void spread(struct sl__mdev *m, const int64_t *k, const uint64_t *v, int64_t n,
                   int on_device, struct spread *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->t.on_host = !on_device;
    int64_t at = 0, weight = 0;
    for (int d = 0; d < m->n; d++)
        weight += 10 + d;
    for (int d = 0; d < m->n; d++) {
        int64_t rows = d == m->n - 1 ? n - at : n * (10 + d) / weight;
        sp->t.n[d] = rows;
        sp->t.keys[d] = k + at;
        sp->t.vals[d] = v + at;
        if (on_device) {
            SL_ASSERT_OK(sl__mdev_use(m, d));
            SL_ASSERT_OK(sl__mdev_alloc(m, d, rows * 8 + 8, &sp->dk[d]));
            SL_ASSERT_OK(sl__mdev_alloc(m, d, rows * 8 + 8, &sp->dv[d]));
            SL_ASSERT_OK(sl__mdev_sync(m, d));
            CU(cudaMemcpy(sp->dk[d], k + at, (size_t)rows * 8, cudaMemcpyHostToDevice));
            CU(cudaMemcpy(sp->dv[d], v + at, (size_t)rows * 8, cudaMemcpyHostToDevice));
            sp->t.keys[d] = sp->dk[d];
            sp->t.vals[d] = sp->dv[d];
        }
        at += rows;
    }
}

static void unspread(struct sl__mdev *m, struct sl__mg_table *t, struct spread *sp)
{
    for (int d = 0; d < m->n; d++) {
        sl__mdev_use(m, d);
        sl__mdev_free(m, d, sp->dk[d], t->n[d] * 8 + 8);
        sl__mdev_free(m, d, sp->dv[d], t->n[d] * 8 + 8);
        sl__mdev_sync(m, d);
    }
}

/* ---- join reference ---- */

struct row {
    int64_t key;
    uint64_t rv, sv;
    int rnull;
};

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->sv != y->sv)
        return x->sv < y->sv ? -1 : 1;
    if (x->rnull != y->rnull)
        return x->rnull - y->rnull;
    return (x->rv > y->rv) - (x->rv < y->rv);
}

struct kv {
    int64_t k;
    uint64_t v;
};

static int cmp_kv(const void *a, const void *b)
{
    const struct kv *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

static struct row *reference_join(const int64_t *rk, int64_t nr, const int64_t *sk, int64_t ns,
                                  int kind, int64_t *n_out)
{
    struct kv *r = malloc((size_t)(nr + 1) * sizeof *r);
    assert_non_null(r);
    for (int64_t i = 0; i < nr; i++)
        r[i] = (struct kv){rk[i], (uint64_t)i};
    qsort(r, (size_t)nr, sizeof *r, cmp_kv);
    int64_t cap = 1024, n = 0;
    struct row *out = malloc((size_t)cap * sizeof *out);
    for (int64_t i = 0; i < ns; i++) {
        int64_t lo = 0, hi = nr;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (r[mid].k < sk[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        int64_t end = lo;
        while (end < nr && r[end].k == sk[i])
            end++;
        int64_t add = kind == SL_K_JOIN_INNER ? end - lo
                      : kind == SL_K_JOIN_SEMI ? (end > lo)
                      : kind == SL_K_JOIN_ANTI ? (end == lo)
                                               : (end > lo ? end - lo : 1);
        if (n + add > cap) {
            while (n + add > cap)
                cap *= 2;
            out = realloc(out, (size_t)cap * sizeof *out);
            assert_non_null(out);
        }
        uint64_t sv = 1000000000ull + (uint64_t)i;
        if (kind == SL_K_JOIN_SEMI || kind == SL_K_JOIN_ANTI) {
            if (add)
                out[n++] = (struct row){sk[i], 0, sv, 0};
        } else if (end == lo) {
            if (kind == SL_K_JOIN_LEFT)
                out[n++] = (struct row){sk[i], 0, sv, 1};
        } else {
            for (int64_t j = lo; j < end; j++)
                out[n++] = (struct row){sk[i], r[j].v, sv, 0};
        }
    }
    free(r);
    qsort(out, (size_t)n, sizeof *out, cmp_row);
    *n_out = n;
    return out;
}

/* The reference of a (key set, kind) for nr x ns rows, computed once: every path and
 * device count joins the same keys (make_keys is deterministic). */
static struct {
    int64_t nr, ns, n;
    struct row *rows;
} ref_cache[N_DIST][4];

static const struct row *cached_reference(enum dist d, int kind, const int64_t *rk, int64_t nr,
                                          const int64_t *sk, int64_t ns, int64_t *n_out)
{
    if (!ref_cache[d][kind].rows || ref_cache[d][kind].nr != nr || ref_cache[d][kind].ns != ns) {
        free(ref_cache[d][kind].rows);
        ref_cache[d][kind].rows = reference_join(rk, nr, sk, ns, kind, &ref_cache[d][kind].n);
        ref_cache[d][kind].nr = nr, ref_cache[d][kind].ns = ns;
    }
    *n_out = ref_cache[d][kind].n;
    return ref_cache[d][kind].rows;
}

static struct row *download_join(struct sl__mdev *m, const struct sl__mg_result *res, int kind,
                                 int64_t *n_out)
{
    int64_t n = 0;
    for (int d = 0; d < m->n; d++)
        n += res->n[d];
    struct row *out = malloc((size_t)(n + 1) * sizeof *out);
    assert_non_null(out);
    int64_t at = 0;
    for (int d = 0; d < m->n; d++) {
        int64_t c = res->n[d];
        if (c == 0)
            continue;
        int64_t *k = malloc((size_t)c * 8);
        uint64_t *rv = malloc((size_t)c * 8), *sv = malloc((size_t)c * 8);
        uint32_t *rp = malloc((size_t)c * 4);
        SL_ASSERT_OK(sl__mdev_use(m, d));
        CU(cudaMemcpy(k, res->keys[d], (size_t)c * 8, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(rv, res->r_vals[d], (size_t)c * 8, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(sv, res->s_vals[d], (size_t)c * 8, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(rp, res->r_pos[d], (size_t)c * 4, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < c; i++) {
            bool rcols = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
            int rnull = kind == SL_K_JOIN_LEFT && rp[i] == SL_K_NULL_POS;
            out[at++] = (struct row){k[i], rcols && !rnull ? rv[i] : 0, sv[i], rnull};
        }
        free(k), free(rv), free(sv), free(rp);
    }
    qsort(out, (size_t)n, sizeof *out, cmp_row);
    *n_out = n;
    return out;
}

/* n_dev logical devices sharing gpu_mem bytes (0: the default budget). */
static sl_engine_t *open_split_mem(int n_dev, int64_t gpu_mem)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.n_gpus = n_dev;
    cfg.split_gpu = 1;
    cfg.gpu_mem_limit = gpu_mem;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

static sl_engine_t *open_split(int n_dev)
{
    return open_split_mem(n_dev, 0);
}

static void check_join(struct sl__mdev *m, enum dist dist, int kind, int on_device,
                       int64_t nr, int64_t ns)
{
    int64_t *rk = malloc((size_t)nr * 8 + 8), *sk = malloc((size_t)ns * 8 + 8);
    uint64_t *rv = malloc((size_t)nr * 8 + 8), *sv = malloc((size_t)ns * 8 + 8);
    assert_true(rk && sk && rv && sv);
    make_keys(dist, rk, nr, sk, ns);
    for (int64_t i = 0; i < nr; i++)
        rv[i] = (uint64_t)i;
    for (int64_t i = 0; i < ns; i++)
        sv[i] = 1000000000ull + (uint64_t)i;
    struct spread r, s;
    spread(m, rk, rv, nr, on_device, &r);
    spread(m, sk, sv, ns, on_device, &s);
    struct sl__mg_opts o = path_opts(use_packets); /* packets: many, few credits */
    struct sl__mg_result res;
    double t0 = now_s();
    int rc = use_packets >= SMJ ? sl__mg_sort_merge_join(m, &r.t, &s.t, kind, &o, &res)
                                : sl__mg_hash_join(m, &r.t, &s.t, kind, &o, &res);
    if (rc != SL_OK)
        fail_msg("join %s %s on %d devices: %s", dist_name[dist], kind_name[kind], m->n,
                 sl_last_errmsg());
    double t1 = now_s();
    int64_t n_ref, n_got, most = 0, all = 0;
    const struct row *ref = cached_reference(dist, kind, rk, nr, sk, ns, &n_ref);
    struct row *got = download_join(m, &res, kind, &n_got);
    for (int d = 0; d < m->n; d++) {
        most = res.n[d] > most ? res.n[d] : most;
        all += res.n[d];
    }
    printf("join %-8s %-5s %d dev %-6s %-7s: %lld rows (ref %lld), biggest device %.0f%%, "
           "%llu packets %.1f MiB, %.3f s\n", dist_name[dist], kind_name[kind], m->n,
           on_device ? "device" : "host", path_name[use_packets], (long long)n_got,
           (long long)n_ref,
           all ? 100.0 * (double)most / (double)all : 0.0,
           (unsigned long long)res.xchg.packets, (double)res.xchg.bytes / (1 << 20), t1 - t0);
    assert_int_equal(n_got, n_ref);
    for (int64_t i = 0; i < n_ref; i++)
        if (cmp_row(&ref[i], &got[i]))
            fail_msg("row %lld: key %lld rv %llu sv %llu null %d, want key %lld rv %llu sv "
                     "%llu null %d", (long long)i, (long long)got[i].key,
                     (unsigned long long)got[i].rv, (unsigned long long)got[i].sv,
                     got[i].rnull, (long long)ref[i].key, (unsigned long long)ref[i].rv,
                     (unsigned long long)ref[i].sv, ref[i].rnull);
    if (m->n > 1 && ns >= 1000 && (dist != ZIPF || use_packets < SMJ))
        /* enough rows that device 0 sends some to device 1 (a hash join's partitions;
         * the sort-merge join's key ranges may all stay where a Zipf share is) */
        assert_non_null(strstr(res.explain, "exchange: 0->1"));
    if (on_device && dist == UNIFORM && kind == SL_K_JOIN_INNER)
        printf("%s", res.explain);
    sl__mg_result_free(m, &res);
    unspread(m, &r.t, &r);
    unspread(m, &s.t, &s);
    free(got), free(rk), free(sk), free(rv), free(sv);
}

static void check_sort(struct sl__mdev *m, enum dist dist, int on_device, int64_t n)
{
    int64_t *k = malloc((size_t)n * 8 + 8), *unused = malloc((size_t)n * 8 + 8);
    uint64_t *v = malloc((size_t)n * 8 + 8);
    assert_true(k && v && unused);
    make_keys(dist, unused, n, k, n); /* the probe side's keys: Zipf, duplicates, ... */
    for (int64_t i = 0; i < n; i++)
        v[i] = (uint64_t)i;
    struct spread sp;
    spread(m, k, v, n, on_device, &sp);
    struct sl__mg_result res;
    struct sl__mg_opts o = path_opts(use_packets);
    if (sl__mg_sort(m, &sp.t, &o, &res) != SL_OK)
        fail_msg("sort %s on %d devices: %s", dist_name[dist], m->n, sl_last_errmsg());
    struct kv *ref = malloc((size_t)(n + 1) * sizeof *ref);
    for (int64_t i = 0; i < n; i++)
        ref[i] = (struct kv){k[i], v[i]}; /* payload = row: (key, row) order is stable */
    qsort(ref, (size_t)n, sizeof *ref, cmp_kv);
    int64_t at = 0, most = 0;
    for (int d = 0; d < m->n; d++) {
        int64_t c = res.n[d];
        most = c > most ? c : most;
        if (c == 0)
            continue;
        int64_t *gk = malloc((size_t)c * 8);
        uint64_t *gv = malloc((size_t)c * 8);
        SL_ASSERT_OK(sl__mdev_use(m, d));
        CU(cudaMemcpy(gk, res.keys[d], (size_t)c * 8, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(gv, res.s_vals[d], (size_t)c * 8, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < c; i++, at++)
            if (at >= n || gk[i] != ref[at].k || gv[i] != ref[at].v)
                fail_msg("sort %s, %d devices: device %d row %lld is (%lld, %llu), want "
                         "(%lld, %llu)", dist_name[dist], m->n, d, (long long)i,
                         (long long)gk[i], (unsigned long long)gv[i],
                         (long long)(at < n ? ref[at].k : 0),
                         (unsigned long long)(at < n ? ref[at].v : 0));
        free(gk), free(gv);
    }
    assert_int_equal(at, n);
    printf("sort %-8s %d dev %-6s %-7s: %lld rows, biggest device %.0f%%, %llu packets\n",
           dist_name[dist], m->n, on_device ? "device" : "host", path_name[use_packets],
           (long long)n,
           n ? 100.0 * (double)most / (double)n : 0.0, (unsigned long long)res.xchg.packets);
    sl__mg_result_free(m, &res);
    unspread(m, &sp.t, &sp);
    free(ref), free(k), free(v), free(unused);
}

static void joins_and_sorts(int n_dev, int64_t nr, int64_t ns, bool sorts)
{
    NEED_GPU();
    sl_engine_t *e = open_split(n_dev);
    struct sl__mdev m;
    SL_ASSERT_OK(sl__mdev_open(e, &m));
    assert_int_equal(m.n, n_dev);
    assert_string_equal(m.xchg.name, "device");
    for (use_packets = 0; use_packets < N_PATHS; use_packets++)
        for (int on_device = 0; on_device < 2; on_device++)
            for (int dist = 0; dist < N_DIST; dist++) {
                for (int kind = 0; kind < 4; kind++)
                    check_join(&m, (enum dist)dist, kind, on_device, nr, ns);
                if (sorts && use_packets <= COPIES)
                    check_sort(&m, (enum dist)dist, on_device, ns);
            }
    use_packets = 0;
    sl__mdev_close(&m);
    sl_engine_close(e);
}

SL_TEST(multi_1dev)
{
    (void)state;
    joins_and_sorts(1, 20000, 100000, true);
}

SL_TEST(multi_2dev)
{
    (void)state;
    joins_and_sorts(2, 20000, 100000, true);
}

SL_TEST(multi_4dev)
{
    (void)state;
    joins_and_sorts(4, 20000, 100000, true);
}

SL_TEST(multi_8dev)
{
    (void)state;
    joins_and_sorts(8, 20000, 100000, true);
}

/* Small inputs on 2 devices, for compute-sanitizer (memcheck, racecheck): every path
 * (hash join direct, packets, a copy per range, chunks, staged; sort-merge join direct
 * and packets; sorts direct, packets and a copy per range), uniform keys and duplicates on both sides (multi_2dev runs every
 * key set), data from host memory and spread over the devices; empty shares included. */
/* small_2dev's checks for paths [first, last). */
static void small_paths(int first, int last)
{
    NEED_GPU();
    sl_engine_t *e = open_split(2);
    struct sl__mdev m;
    SL_ASSERT_OK(sl__mdev_open(e, &m));
    for (int i = 2 * first; i < 2 * last; i++) {
        int on_device = i & 1;
        use_packets = i >> 1;
        for (int dist = 0; dist < N_DIST; dist++) {
            if (dist != UNIFORM && dist != DUPS)
                continue;
            for (int kind = 0; kind < 4; kind++)
                check_join(&m, (enum dist)dist, kind, on_device, 300, 1000);
            if (use_packets <= COPIES)
                check_sort(&m, (enum dist)dist, on_device, 1000);
        }
        check_join(&m, UNIFORM, SL_K_JOIN_LEFT, on_device, 1, 3); /* shares of 0 rows */
        check_join(&m, UNIFORM, SL_K_JOIN_ANTI, on_device, 0, 5);
        check_sort(&m, UNIFORM, on_device, 1);
    }
    use_packets = 0;
    sl__mdev_close(&m);
    sl_engine_close(e);
}

SL_TEST(small_2dev)
{
    (void)state;
    small_paths(0, N_PATHS);
}

/* small_2dev's sort-merge joins alone (racecheck takes about 1.5 s each). */
SL_TEST(small_smj_2dev)
{
    (void)state;
    small_paths(SMJ, N_PATHS);
}

/* sl_k_copy_ranges (the direct exchange's copies between logical devices of one GPU):
 * ranges of 0, 1, 3, 8, 16 bytes, ones across tile boundaries (256 KiB), at every
 * alignment of source and destination, copied exactly, bytes outside them untouched;
 * too many ranges and a negative length refused. */
SL_TEST(copy_ranges)
{
    (void)state;
    NEED_GPU();
    const int64_t size = (int64_t)4 << 20;
    uint8_t *h_src = malloc((size_t)size), *h_dst = malloc((size_t)size),
            *want = malloc((size_t)size);
    assert_true(h_src && h_dst && want);
    for (int64_t i = 0; i < size; i++)
        h_src[i] = (uint8_t)(i * 131 + (i >> 9));
    memset(want, 0xAA, (size_t)size);
    uint8_t *src, *dst;
    CU(cudaMalloc((void **)&src, (size_t)size));
    CU(cudaMalloc((void **)&dst, (size_t)size));
    CU(cudaMemcpy(src, h_src, (size_t)size, cudaMemcpyHostToDevice));
    CU(cudaMemset(dst, 0xAA, (size_t)size));
    static const int64_t len[] = {0, 1, 3, 8, 16, 24, 4096 + 5, (256 << 10) - 8, (256 << 10) + 1,
                                  (512 << 10) + 16, 40000, 7, (1 << 20) + 3};
    int n = (int)(sizeof len / sizeof len[0]);
    struct sl_k_copy_range r[SL_K_COPY_RANGES_MAX + 1];
    int64_t at_s = 5, at_d = 0;
    for (int i = 0; i < n; i++) { /* each range at another alignment of each side */
        r[i] = (struct sl_k_copy_range){src + at_s, dst + at_d, len[i]};
        memcpy(want + at_d, h_src + at_s, (size_t)len[i]);
        at_s += len[i] + 3 + i, at_d += len[i] + 8 * (i & 1) + (i % 3);
        assert_true(at_s < size && at_d < size);
    }
    CU(sl_k_copy_ranges(r, n, 0));
    CU(cudaDeviceSynchronize());
    CU(cudaMemcpy(h_dst, dst, (size_t)size, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < size; i++)
        if (h_dst[i] != want[i])
            fail_msg("byte %lld is %u, want %u", (long long)i, h_dst[i], want[i]);
    for (int i = 0; i <= SL_K_COPY_RANGES_MAX; i++)
        r[i] = (struct sl_k_copy_range){src, dst, 8};
    assert_int_equal(sl_k_copy_ranges(r, SL_K_COPY_RANGES_MAX + 1, 0), cudaErrorInvalidValue);
    r[0].bytes = -1;
    assert_int_equal(sl_k_copy_ranges(r, 1, 0), cudaErrorInvalidValue);
    CU(sl_k_copy_ranges(r, 0, 0));
    CU(cudaFree(src));
    CU(cudaFree(dst));
    free(h_src), free(h_dst), free(want);
}

/* 2^14 hash partitions: more than the pipelined exchange's histograms hold (2^12), so
 * the direct exchange takes the staged way (every device partitions all its rows
 * first), which needs no histogram; the packet exchange as before. 2^21 partitions are
 * refused. */
SL_TEST(part_bits_2dev)
{
    (void)state;
    NEED_GPU();
    sl_engine_t *e = open_split(2);
    struct sl__mdev m;
    SL_ASSERT_OK(sl__mdev_open(e, &m));
    static const int paths[] = {DIRECT, STAGED, PACKETS};
    part_bits = 14;
    for (int p = 0; p < 3; p++) {
        use_packets = paths[p];
        for (int dist = 0; dist < N_DIST; dist++)
            for (int kind = 0; kind < 4; kind++)
                check_join(&m, (enum dist)dist, kind, p & 1, 20000, 100000);
    }
    int64_t k[4] = {1, 2, 3, 4};
    uint64_t v[4] = {0};
    struct spread r;
    spread(&m, k, v, 4, 0, &r);
    struct sl__mg_opts o = {.part_bits = 21};
    struct sl__mg_result res;
    assert_int_equal(sl__mg_hash_join(&m, &r.t, &r.t, SL_K_JOIN_INNER, &o, &res), SL_EINVAL);
    part_bits = 0;
    use_packets = 0;
    sl__mdev_close(&m);
    sl_engine_close(e);
}

/* A spread whose receiver cannot hold what it would receive (every probe row has one
 * key, so one device gets them all) ends with SL_EBUDGET before anything moves, and
 * leaves the devices' memory as it found it; the same rows with spread keys fit. Two
 * devices of 256 MiB each; 6 Mi probe rows from host memory, semi join. */
SL_TEST(budget_skew_2dev)
{
    (void)state;
    NEED_GPU();
    sl_engine_t *e = open_split_mem(2, (int64_t)512 << 20);
    struct sl__mdev m;
    SL_ASSERT_OK(sl__mdev_open(e, &m));
    const int64_t nr = 1000, ns = (int64_t)6 << 20;
    int64_t *rk = malloc((size_t)nr * 8), *sk = malloc((size_t)ns * 8);
    uint64_t *rv = calloc((size_t)nr, 8), *sv = calloc((size_t)ns, 8);
    assert_true(rk && sk && rv && sv);
    for (int64_t i = 0; i < nr; i++)
        rk[i] = i;
    int64_t before[2], in_use, peak, limit;
    for (int d = 0; d < 2; d++)
        sl__gpu_mem(m.gpu[d], &before[d], &peak, &limit);
    for (int hot = 1; hot >= 0; hot--) {
        int64_t want = 0, got = 0;
        for (int64_t i = 0; i < ns; i++) {
            sk[i] = hot ? 7 : i % (2 * nr);
            want += sk[i] < nr;
        }
        struct spread r, s;
        spread(&m, rk, rv, nr, 0, &r);
        spread(&m, sk, sv, ns, 0, &s);
        struct sl__mg_result res;
        int rc = sl__mg_hash_join(&m, &r.t, &s.t, SL_K_JOIN_SEMI, NULL, &res);
        printf("semi join, %s probe keys: %s\n", hot ? "one" : "spread",
               rc == SL_OK ? "ok" : sl_last_errmsg());
        if (hot) {
            assert_int_equal(rc, SL_EBUDGET);
            assert_non_null(strstr(sl_last_errmsg(), "budget"));
        } else {
            SL_ASSERT_OK(rc);
            for (int d = 0; d < 2; d++)
                got += res.n[d];
            assert_int_equal(got, want);
            sl__mg_result_free(&m, &res);
        }
        unspread(&m, &r.t, &r);
        unspread(&m, &s.t, &s);
        for (int d = 0; d < 2; d++) {
            sl__gpu_mem(m.gpu[d], &in_use, &peak, &limit);
            assert_int_equal(in_use, before[d]); /* nothing left behind */
        }
    }
    free(rk), free(sk), free(rv), free(sv);
    sl__mdev_close(&m);
    sl_engine_close(e);
}

/* Where the fixed cost of a small spread goes: opening and closing 4 devices, and a
 * 2^18 join 2^19 already spread over them (the median of 5 each), against the same join
 * through one device. Prints only; a failing step fails the case. */
SL_TEST(fixed_cost_4dev)
{
    (void)state;
    NEED_GPU();
    sl_engine_t *e = open_split(4);
    const int64_t nr = (int64_t)1 << 18, ns = (int64_t)1 << 19;
    int64_t *rk = malloc((size_t)nr * 8), *sk = malloc((size_t)ns * 8);
    uint64_t *rv = calloc((size_t)nr, 8), *sv = calloc((size_t)ns, 8);
    assert_true(rk && sk && rv && sv);
    make_keys(UNIFORM, rk, nr, sk, ns);
    for (int k = 1; k <= 4; k += 3) {
        int use[4] = {0, 1, 2, 3};
        double t_open[5], t_join[5], t_close[5];
        for (int i = 0; i < 5; i++) {
            struct sl__mdev m;
            double t0 = now_s();
            SL_ASSERT_OK(sl__mdev_open_some(e, use, k, &m));
            double t1 = now_s();
            struct spread r, s;
            spread(&m, rk, rv, nr, 1, &r);
            spread(&m, sk, sv, ns, 1, &s);
            struct sl__mg_result res;
            double t2 = now_s();
            SL_ASSERT_OK(sl__mg_hash_join(&m, &r.t, &s.t, SL_K_JOIN_INNER, NULL, &res));
            double t3 = now_s();
            sl__mg_result_free(&m, &res);
            unspread(&m, &r.t, &r);
            unspread(&m, &s.t, &s);
            double t4 = now_s();
            sl__mdev_close(&m);
            t_open[i] = t1 - t0, t_join[i] = t3 - t2, t_close[i] = now_s() - t4;
        }
        for (int a = 0; a < 5; a++) /* medians: sort each column (5 values) */
            for (int b = a + 1; b < 5; b++) {
                double *col[3] = {t_open, t_join, t_close};
                for (int c = 0; c < 3; c++)
                    if (col[c][b] < col[c][a]) {
                        double x = col[c][a];
                        col[c][a] = col[c][b], col[c][b] = x;
                    }
            }
        printf("%d device(s): open %.3f ms, join 2^18 x 2^19 %.3f ms, close %.3f ms "
               "(medians of 5)\n", k, t_open[2] * 1e3, t_join[2] * 1e3, t_close[2] * 1e3);
    }
    free(rk), free(sk), free(rv), free(sv);
    sl_engine_close(e);
}

/* Logical devices split the GPU's budget: each gets its part, and all parts fit. */
SL_TEST(split_budget)
{
    (void)state;
    NEED_GPU();
    size_t free_b = 0, total_b = 0;
    CU(cudaMemGetInfo(&free_b, &total_b));
    sl_engine_t *e = open_split(4);
    struct sl__mdev m;
    SL_ASSERT_OK(sl__mdev_open(e, &m));
    int64_t sum = 0, first = 0;
    for (int d = 0; d < m.n; d++) {
        int64_t in_use, peak, limit;
        sl__gpu_mem(m.gpu[d], &in_use, &peak, &limit);
        first = d ? first : limit;
        assert_true(limit > 0);
        assert_true(llabs(limit - first) < (int64_t)1 << 28); /* read one after another */
        assert_int_equal(m.ordinal[d], 0);
        sum += limit;
    }
    assert_true(sum <= (int64_t)free_b);
    assert_true(sum > (int64_t)free_b / 2);
    sl__mdev_close(&m);
    sl_engine_close(e);
}

/* The exchange between logical devices against a plain device-to-device copy of the
 * same bytes: all-to-all among 2 and 4 devices, 512 MiB in all. */
SL_TEST(exchange_throughput)
{
    (void)state;
    NEED_GPU();
    const int64_t rows = (int64_t)64 << 20; /* 8-byte rows: 512 MiB */
    void *a, *b;
    CU(cudaMalloc(&a, (size_t)rows * 8));
    CU(cudaMalloc(&b, (size_t)rows * 8));
    CU(cudaMemcpy(b, a, (size_t)rows * 8, cudaMemcpyDeviceToDevice)); /* warm */
    CU(cudaDeviceSynchronize());
    double t0 = now_s();
    for (int i = 0; i < 4; i++)
        CU(cudaMemcpy(b, a, (size_t)rows * 8, cudaMemcpyDeviceToDevice));
    CU(cudaDeviceSynchronize());
    double copy_gbps = 4.0 * (double)rows * 8 / (now_s() - t0) / 1e9;
    CU(cudaFree(a));
    CU(cudaFree(b));
    printf("device copy: %.1f GB/s (bytes copied per second)\n", copy_gbps);
    for (int n_dev = 2; n_dev <= 4; n_dev *= 2) {
        sl_engine_t *e = open_split(n_dev);
        struct sl__mdev m;
        SL_ASSERT_OK(sl__mdev_open(e, &m));
        int64_t share = rows / n_dev, per = share / n_dev;
        struct sl__mg_move mv = {.n_cols = 1, .width = {8}};
        int64_t from[SL__MG_MAX_DEV * SL__MG_MAX_DEV], count[SL__MG_MAX_DEV * SL__MG_MAX_DEV];
        int64_t base[SL__MG_MAX_DEV * SL__MG_MAX_DEV], total[SL__MG_MAX_DEV];
        for (int s = 0; s < n_dev; s++)
            for (int d = 0; d < n_dev; d++) {
                from[s * n_dev + d] = d * per;
                count[s * n_dev + d] = per;
            }
        sl__mg_recv_layout(count, n_dev, base, total);
        mv.from = from, mv.count = count, mv.base = base;
        for (int d = 0; d < n_dev; d++) {
            SL_ASSERT_OK(sl__mdev_use(&m, d));
            SL_ASSERT_OK(sl__mdev_alloc(&m, d, share * 8, (void **)&mv.src[0][d]));
            SL_ASSERT_OK(sl__mdev_alloc(&m, d, total[d] * 8, &mv.dst[0][d]));
            SL_ASSERT_OK(sl__mdev_sync(&m, d));
        }
        /* the direct exchange (packet_kib 0: a kernel per sender; -1: a copy per range,
         * as before sl_k_copy_ranges), then packets of 64 KiB (where the copy itself takes
         * well under a microsecond: the time is the cost per packet), 1, 4 and 16 MiB */
        static const int kibs[] = {0, -1, 64, 1024, 4096, 16384};
        for (int i = 0; i < 6; i++) {
            int packet_kib = kibs[i];
            struct sl__mg_opts o = {.packet_bytes = (size_t)(packet_kib > 0 ? packet_kib : 0)
                                                    << 10,
                                    .credits = 4, .packets = packet_kib > 0};
            mv.copies = packet_kib < 0;
            sl_xchg_stats st;
            SL_ASSERT_OK(sl__mg_exchange(&m, &mv, &o, &st)); /* warm */
            t0 = now_s();
            SL_ASSERT_OK(sl__mg_exchange(&m, &mv, &o, &st));
            double sec = now_s() - t0;
            double gbps = (double)st.bytes / sec / 1e9;
            char what[64];
            if (packet_kib > 0)
                snprintf(what, sizeof what, "%d KiB packets, 4 credits", packet_kib);
            else
                snprintf(what, sizeof what, packet_kib ? "direct, a copy per range"
                                                       : "direct, a kernel per sender");
            printf("exchange %d logical devices, %s: %.1f MiB in %llu packets, %.2f ms "
                   "(%.1f us a packet), %.1f GB/s = %.2f of the device copy\n", n_dev, what,
                   (double)st.bytes / (1 << 20), (unsigned long long)st.packets, sec * 1e3,
                   sec * 1e6 / (double)st.packets, gbps, gbps / copy_gbps);
            assert_int_equal(st.bytes, (uint64_t)(per * n_dev * n_dev * 8));
        }
        for (int d = 0; d < n_dev; d++) {
            sl__mdev_use(&m, d);
            sl__mdev_free(&m, d, (void *)mv.src[0][d], share * 8);
            sl__mdev_free(&m, d, mv.dst[0][d], total[d] * 8);
        }
        sl__mdev_close(&m);
        sl_engine_close(e);
    }
}
