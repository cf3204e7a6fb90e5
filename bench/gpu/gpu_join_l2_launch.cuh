/* The L2-table join of gpu_join_l2_micro as a launcher (it was
 * sl_k_phj_l2_materialize_k32_v32 in kernels/join/join_l2.cu on branch s19-gjoin, behind
 * the option debug_join_l2, run through the join on an H100 and taken out again: a clear
 * negative, see gpu_join_l2_micro.cu). Included by gpu_join_l2_micro.cu inside a
 * namespace of its own, after <cub/block/block_scan.cuh> and sluice_k/persistent.cuh.
 *
 * l2_materialize: R and S partitioned on bits [begin_bit, begin_bit + bits), bits <= 10,
 * with offsets as sl_k_phj_materialize_*; max_build = the most R rows of one partition.
 * Partition p's rows go into a hash table in global memory (8-byte slots, load <=
 * kLoadPct percent), and as many tables as fit l2_bytes (at least 2) are built and
 * probed at once by a persistent grid (units of kUnit build rows, twice that many probe
 * rows). Output and d_count[0] as sl_k_phj_materialize_k32_v32 (another row order);
 * d_count has 2 words: d_count[1] != 0 says a build key is repeated too often for linear
 * probing (a row found no slot in kMaxWalk: the output is incomplete; the join on the
 * branch then partitioned the next bits and ran the shared-memory kernel).
 * (Shape: what the micro varies.) Temp storage: two-call pattern (the tables are in it).
 *
 * A persistent grid takes units in order; partition p's units are its build chunks, then
 * its probe chunks. Partition p uses table p % T (u64 slots: key | value << 32, linear
 * probing from a multiply-shift hash of the key's bits outside the partition digit). A
 * slot whose key's partition digit is not p is empty for p, so no table is cleared
 * between partitions: p's build waits (one thread spinning) only until the last earlier
 * partition on the same table has finished probing it, and p's probes until p's build
 * chunks are done. Units are claimed in order by running blocks, so every wait ends (the
 * lowest unfinished unit waits on nothing). Table reads bypass L1 (ld.global.cg): L1 may
 * hold a line of the table's previous partition. */

namespace {

typedef unsigned long long u64;

constexpr int kBT = 256;  /* threads a block */
constexpr int kItems = 4; /* rows a thread a step */
constexpr int kStep = kBT * kItems;
constexpr int kMaxParts = 1024; /* plan_kernel: one block */
constexpr int kLoadPct = 67;     /* table load, percent */
constexpr int kUnit = 2048;      /* build rows a unit */
/* Slots a build row may walk: linear probing at load 2/3 walks a few dozen at most for
 * distinct keys; a key repeated thousands of times walks past all its copies (the build
 * would take quadratic time), so the join gives up (count[1]). */
constexpr int kMaxWalk = 4096;

size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

/* Per partition: build units nbc, probe units npc (both 0 when a side is empty), the
 * last earlier partition on the same table with units (prev, -1: none), unit_off (the
 * exclusive scan of nbc + npc, [P] the total). */
__global__ void __launch_bounds__(kMaxParts)
    plan_kernel(const int64_t *roff, const int64_t *soff, int P, int T, int bc, int pc,
                int *nbc, int *npc, int *prev, int64_t *unit_off)
{
    using Scan = cub::BlockScan<int64_t, kMaxParts>;
    __shared__ typename Scan::TempStorage ts;
    __shared__ int has[kMaxParts];
    const int p = threadIdx.x;
    int64_t units = 0;
    if (p < P) {
        const int64_t nr = roff[p + 1] - roff[p], ns = soff[p + 1] - soff[p];
        const int b = nr > 0 && ns > 0 ? (int)((nr + bc - 1) / bc) : 0;
        const int q = nr > 0 && ns > 0 ? (int)((ns + pc - 1) / pc) : 0;
        nbc[p] = b;
        npc[p] = q;
        units = b + q;
        has[p] = units > 0;
    }
    __syncthreads();
    if (p < P) {
        int q = p - T;
        while (q >= 0 && !has[q])
            q -= T;
        prev[p] = q;
    }
    int64_t ex;
    Scan(ts).ExclusiveSum(units, ex);
    if (p < P)
        unit_off[p] = ex;
    if (p == P - 1)
        unit_off[P] = ex + units;
}

/* Table t's slots hold a key of partition digit (t + 1) % P: empty for every partition
 * on table t (those are t mod T, T >= 2). */
__global__ void init_tables(u64 *tabs, int64_t slots, int T, int P, int begin)
{
    const int64_t total = slots * T;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x)
        tabs[i] = (u64)((uint32_t)((i / slots + 1) % P) << begin);
}

/* The key without its partition digit, hashed onto [0, ts). */
__device__ __forceinline__ uint32_t slot_of(uint32_t key, int begin, int shift, uint32_t ts)
{
    const uint32_t low = begin ? key & ((1u << begin) - 1) : 0;
    const uint32_t x = (shift < 32 ? (key >> shift) << begin : 0) | low;
    return (uint32_t)(((u64)(x * 0x9E3779B1u) * ts) >> 32);
}

__device__ __forceinline__ uint32_t digit(u64 slot, int begin, uint32_t dmask)
{
    return ((uint32_t)slot >> begin) & dmask;
}

__device__ __forceinline__ void wait_at_least(const unsigned *ctr, unsigned need)
{
    while (*(volatile const unsigned *)ctr < need)
        __nanosleep(128);
    __threadfence();
}

template <int MINB>
__global__ void __launch_bounds__(kBT, MINB)
    l2_join(const uint32_t *__restrict__ rk, const uint32_t *__restrict__ rv,
            const int64_t *__restrict__ roff, const uint32_t *__restrict__ sk,
            const uint32_t *__restrict__ sv, const int64_t *__restrict__ soff, int P, int begin,
            int shift, u64 *tabs, uint32_t ts, int T, const int64_t *__restrict__ unit_off,
            const int *__restrict__ nbc, const int *__restrict__ npc,
            const int *__restrict__ prev, unsigned *built, unsigned *probed,
            unsigned long long *work, int bc, int pc, int build_only, uint32_t *__restrict__ ok,
            uint32_t *__restrict__ orv, uint32_t *__restrict__ osv, int64_t cap,
            unsigned long long *count)
{
    /* count[1]: set when a build row found no slot within kMaxWalk (many equal keys):
     * it is left out and the caller joins another way */
    using Scan = cub::BlockScan<uint32_t, kBT>;
    __shared__ typename Scan::TempStorage scan_tmp;
    __shared__ int64_t sh_unit, sh_part;
    __shared__ unsigned long long sh_base;
    const int64_t total = unit_off[P];
    const uint32_t dmask = (uint32_t)(P - 1);
    for (;;) {
        int64_t u, p64;
        if (!sluice_k::claim_unit(work, unit_off, P, total, sh_unit, sh_part, u, p64))
            break;
        const int p = (int)p64;
        const int64_t local = u - unit_off[p];
        u64 *tab = tabs + (int64_t)(p % T) * ts;
        if (local < nbc[p]) { /* build */
            if (threadIdx.x == 0 && prev[p] >= 0)
                wait_at_least(&probed[prev[p]], (unsigned)npc[prev[p]]);
            __syncthreads();
            const int64_t b0 = roff[p] + local * bc;
            /* given up already: the unit builds nothing */
            const int64_t b1 =
                *(volatile unsigned long long *)(count + 1) ? b0 : min(roff[p + 1], b0 + bc);
            for (int64_t base = b0; base < b1; base += kStep) {
                uint32_t h[kItems];
                u64 cur[kItems], mine[kItems];
                bool live[kItems];
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    const int64_t idx = base + i * kBT + threadIdx.x;
                    live[i] = idx < b1;
                    if (live[i]) {
                        const uint32_t k = __ldcs(rk + idx);
                        mine[i] = (u64)k | (u64)__ldcs(rv + idx) << 32;
                        h[i] = slot_of(k, begin, shift, ts);
                    }
                }
#pragma unroll
                for (int i = 0; i < kItems; i++)
                    if (live[i])
                        cur[i] = __ldcg(tab + h[i]);
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    if (!live[i])
                        continue;
                    for (int walk = 0;; walk++) {
                        if (walk > kMaxWalk) {
                            atomicExch(count + 1, 1ull);
                            break;
                        }
                        if ((walk & 255) == 255 && *(volatile unsigned long long *)(count + 1))
                            break;
                        if (digit(cur[i], begin, dmask) == (uint32_t)p) { /* taken */
                            h[i] = h[i] + 1 == ts ? 0 : h[i] + 1;
                            cur[i] = __ldcg(tab + h[i]);
                            continue;
                        }
                        const u64 was = atomicCAS(tab + h[i], cur[i], mine[i]);
                        if (was == cur[i])
                            break;
                        cur[i] = was;
                    }
                }
            }
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0)
                atomicAdd(&built[p], 1u);
        } else { /* probe */
            if (threadIdx.x == 0)
                wait_at_least(&built[p], (unsigned)nbc[p]);
            __syncthreads();
            const int64_t s0 = soff[p] + (local - nbc[p]) * pc;
            const int64_t s1 = build_only ? s0 : min(soff[p + 1], s0 + pc);
            const u64 empty = (u64)((uint32_t)((p + 1) & dmask) << begin);
            for (int64_t base = s0; base < s1; base += kStep) {
                uint32_t k[kItems], v[kItems], h[kItems], cnt[kItems], first[kItems];
                u64 cur[kItems];
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    const int64_t idx = base + i * kBT + threadIdx.x;
                    cnt[i] = 0;
                    first[i] = 0;
                    if (idx < s1) {
                        k[i] = __ldcs(sk + idx);
                        v[i] = __ldcs(sv + idx);
                        h[i] = slot_of(k[i], begin, shift, ts);
                        cur[i] = __ldcg(tab + h[i]);
                    } else {
                        k[i] = v[i] = h[i] = 0;
                        cur[i] = empty; /* ends the walk at once */
                    }
                }
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    uint32_t hh = h[i];
                    u64 c = cur[i];
                    while (digit(c, begin, dmask) == (uint32_t)p) {
                        if ((uint32_t)c == k[i]) {
                            if (cnt[i] == 0)
                                first[i] = (uint32_t)(c >> 32);
                            cnt[i]++;
                        }
                        hh = hh + 1 == ts ? 0 : hh + 1;
                        c = __ldcg(tab + hh);
                    }
                }
                uint32_t excl[kItems], step_total = 0;
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    uint32_t agg;
                    Scan(scan_tmp).ExclusiveSum(cnt[i], excl[i], agg);
                    excl[i] += step_total;
                    step_total += agg;
                    __syncthreads();
                }
                if (threadIdx.x == 0)
                    sh_base = step_total ? atomicAdd(count, (u64)step_total) : 0;
                __syncthreads();
                const u64 ob = sh_base;
#pragma unroll
                for (int i = 0; i < kItems; i++) {
                    if (cnt[i] == 0)
                        continue;
                    u64 pos = ob + excl[i];
                    if (cnt[i] == 1) {
                        if (pos < (u64)cap) {
                            __stcs(ok + pos, k[i]);
                            __stcs(orv + pos, first[i]);
                            __stcs(osv + pos, v[i]);
                        }
                        continue;
                    }
                    uint32_t hh = h[i];
                    u64 c = __ldcg(tab + hh);
                    while (digit(c, begin, dmask) == (uint32_t)p) {
                        if ((uint32_t)c == k[i]) {
                            if (pos < (u64)cap) {
                                ok[pos] = k[i];
                                orv[pos] = (uint32_t)(c >> 32);
                                osv[pos] = v[i];
                            }
                            pos++;
                        }
                        hh = hh + 1 == ts ? 0 : hh + 1;
                        c = __ldcg(tab + hh);
                    }
                }
                __syncthreads(); /* sh_base is rewritten by the next step */
            }
            __syncthreads();
            if (threadIdx.x == 0)
                atomicAdd(&probed[p], 1u);
        }
        __syncthreads(); /* sh_unit is rewritten by the next claim */
    }
}

} // namespace

/* What the micro varies; 0 = the launcher's choice. tables: tables at once (else as many
 * as fit l2_bytes, at least 2); load_pct: table load (kLoadPct); unit: build rows a unit
 * (kUnit; probe units twice that); min_blocks: 4 or 6 bound the kernel's registers to
 * that many blocks of 256 threads an SM (64, 40), else as compiled (80: 3 blocks);
 * build_only: the tables are built and nothing is probed (the build's cost). */
struct Shape {
    int tables, load_pct, unit, min_blocks, build_only;
};

/* Table size and count for the largest build partition. */
inline void l2_shape(int64_t max_build, size_t l2_bytes, const Shape &sh, uint32_t *ts, int *T)
{
    int64_t s = max_build * 100 / (sh.load_pct ? sh.load_pct : kLoadPct) + 1;
    if (s < 1024)
        s = 1024;
    *ts = (uint32_t)s;
    int64_t t = sh.tables ? sh.tables : (int64_t)(l2_bytes / ((size_t)s * 8));
    *T = (int)(t < 2 ? 2 : t > kMaxParts ? kMaxParts : t);
}

cudaError_t l2_materialize(
    void *d_temp, size_t *temp_bytes, const uint32_t *d_r_keys, const uint32_t *d_r_vals,
    const int64_t *d_r_offsets, const uint32_t *d_s_keys, const uint32_t *d_s_vals,
    const int64_t *d_s_offsets, int bits, int begin_bit, int64_t max_build,
    size_t l2_bytes, uint32_t *d_out_keys, uint32_t *d_out_r_vals, uint32_t *d_out_s_vals,
    int64_t out_capacity, Shape shape, unsigned long long *d_count, cudaStream_t stream)
{
    if (temp_bytes == NULL || bits < 1 || (1 << bits) > kMaxParts || begin_bit < 0 ||
        begin_bit + bits > 32 || max_build < 0 || max_build >= ((int64_t)1 << 31) ||
        out_capacity < 0)
        return cudaErrorInvalidValue;
    const int P = 1 << bits;
    uint32_t ts;
    int T;
    l2_shape(max_build, l2_bytes, shape, &ts, &T);
    const size_t off_b = align_up((size_t)(P + 1) * 8), int_b = align_up((size_t)P * 4);
    const size_t ctr_b = align_up((size_t)2 * P * 4) + 256; /* built, probed; work */
    const size_t need = off_b + 3 * int_b + ctr_b + (size_t)ts * T * 8;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || d_count == NULL || d_r_offsets == NULL || d_s_offsets == NULL ||
        (out_capacity > 0 &&
         (d_out_keys == NULL || d_out_r_vals == NULL || d_out_s_vals == NULL)))
        return cudaErrorInvalidValue;
    char *q = (char *)d_temp;
    int64_t *unit_off = (int64_t *)q;
    int *nbc = (int *)(q + off_b), *npc = (int *)(q + off_b + int_b);
    int *prev = (int *)(q + off_b + 2 * int_b);
    char *ctr = q + off_b + 3 * int_b;
    unsigned *built = (unsigned *)ctr, *probed = built + P;
    unsigned long long *work = (unsigned long long *)(ctr + align_up((size_t)2 * P * 4));
    u64 *tabs = (u64 *)(ctr + ctr_b);
    cudaError_t e;
    if ((e = cudaMemsetAsync(ctr, 0, ctr_b, stream)) != cudaSuccess ||
        (e = cudaMemsetAsync(d_count, 0, 2 * sizeof *d_count, stream)) != cudaSuccess)
        return e;
    auto kern = shape.min_blocks == 6   ? l2_join<6>
                : shape.min_blocks == 4 ? l2_join<4>
                                        : l2_join<1>;
    int dev = 0, sms = 0, per_sm = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kBT, 0)) !=
            cudaSuccess)
        return e;
    if (per_sm < 1)
        return cudaErrorInvalidConfiguration;
    init_tables<<<sms * 4, 256, 0, stream>>>(tabs, ts, T, P, begin_bit);
    const int bc = shape.unit > 0 ? shape.unit : kUnit, pc = 2 * bc;
    plan_kernel<<<1, kMaxParts, 0, stream>>>(d_r_offsets, d_s_offsets, P, T, bc, pc, nbc, npc,
                                             prev, unit_off);
    kern<<<sms * per_sm, kBT, 0, stream>>>(
        d_r_keys, d_r_vals, d_r_offsets, d_s_keys, d_s_vals, d_s_offsets, P, begin_bit,
        begin_bit + bits, tabs, ts, T, unit_off, nbc, npc, prev, built, probed, work, bc, pc,
        shape.build_only, d_out_keys, d_out_r_vals, d_out_s_vals, out_capacity, d_count);
    return cudaGetLastError();
}
