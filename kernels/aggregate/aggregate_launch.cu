/* Launchers of the GPU group-by: the only place with <<< >>> for it. Contracts in
 * sluice_k/aggregate.h. */
#include "sluice_k/aggregate.h"

#include <cub/device/device_scan.cuh>

#include "aggregate_kernels.cuh"
#include "aggregate_direct.cuh"
#include "aggregate_few.cuh"
#include "aggregate_small.cuh"
#include "aggregate_wide.cuh"

using namespace sluice_k::agg;

namespace {

size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

/* Default shared-table groups of the table method: measured (bench/results_gpuagg.md). */
constexpr int kDefaultSharedGroups = 2048;
/* Shared-table groups of the partitioned method. */
constexpr int kPartGroups = 4096;
constexpr int kMaxBits = 13;

bool spec_ok(const sl_k_agg_spec *sp)
{
    if (!sp || sp->n_keys < 0 || sp->n_keys > kMaxK || sp->n_aggs < 0 || sp->n_aggs > kMaxA)
        return false;
    for (int j = 0; j < sp->n_keys; j++)
        if (sp->key_type[j] != SL_K_I32 && sp->key_type[j] != SL_K_I64)
            return false;
    for (int a = 0; a < sp->n_aggs; a++)
        if (sp->fn[a] < SL_K_AGG_COUNT_STAR || sp->fn[a] > SL_K_AGG_AVG ||
            (sp->fn[a] != SL_K_AGG_COUNT_STAR &&
             (sp->in_type[a] < SL_K_I32 || sp->in_type[a] > SL_K_F64)))
            return false;
    return true;
}

/* Key mode: 1/2 = one int32/int64 key without nulls (specialized loops), 0 generic. */
int key_mode(const sl_k_agg_spec *sp, const sl_k_agg_input *in)
{
    if (sp->n_keys != 1 || in->keys[0].d_valid || in->d_nullbits)
        return 0;
    return sp->key_type[0] == SL_K_I32 ? 1 : 2;
}

cudaError_t grid_for(const void *kern, int threads, size_t smem, int *grid)
{
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t e;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) !=
            cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, threads, smem)) !=
            cudaSuccess)
        return e;
    if (per_sm < 1)
        return cudaErrorInvalidConfiguration;
    *grid = sms * per_sm;
    return cudaSuccess;
}

/* Largest power of two <= want whose shared table fits `limit` bytes (at least 64: a
 * spec too wide for that gets an error at launch). */
int fit_groups(const sl_k_agg_spec *sp, int want, size_t limit)
{
    int c = 64;
    while (c < want && smem_bytes(*sp, 2 * c) <= limit)
        c <<= 1;
    return c;
}

size_t smem_optin()
{
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return 48 << 10;
    return (size_t)v;
}

/* Shared groups per block of the table method: the request rounded up to a power of two,
 * capped so that two blocks fit an SM (latency hiding); 0 = default, < 0 = none. */
int shared_groups_of(const sl_k_agg_spec *sp, int sg)
{
    if (sg < 0)
        return 0;
    int want = sg == 0 ? kDefaultSharedGroups : sg;
    int c = 16;
    while (c < want)
        c <<= 1;
    /* The default leaves room for two blocks per SM; an explicit size may take it all. */
    size_t limit = sg == 0 ? smem_optin() / 2 - 1024 : smem_optin() - 1024;
    if (smem_bytes(*sp, c) <= limit)
        return c;
    return fit_groups(sp, c, limit);
}

/* Groups per block of the partitioned method: one block per SM, most of shared memory. */
int part_groups_of(const sl_k_agg_spec *sp)
{
    size_t limit = smem_optin() - 2048;
    if (smem_bytes(*sp, kPartGroups) <= limit)
        return kPartGroups;
    return fit_groups(sp, kPartGroups, limit);
}

template <int KM, bool PRE>
cudaError_t update_km(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                      const sl_k_agg_table *tb, uint32_t *ovf, const sl_k_agg_table *spill,
                      int C, cudaStream_t stream)
{
    size_t smem = C > 0 ? smem_bytes(*sp, C) : 0;
    int grid = 0;
    cudaError_t e = grid_for((const void *)update_kernel<KM, PRE>, kThreads, smem, &grid);
    if (e != cudaSuccess)
        return e;
    int64_t need = (in->n + (int64_t)kItems * kThreads - 1) / ((int64_t)kItems * kThreads);
    if (need < grid)
        grid = (int)need;
    update_kernel<KM, PRE><<<grid, kThreads, smem, stream>>>(*sp, *in, *tb, ovf, *spill, C);
    return cudaGetLastError();
}

template <bool PRE>
cudaError_t update_pre(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                       const sl_k_agg_table *tb, uint32_t *ovf, const sl_k_agg_table *spill,
                       int C, cudaStream_t stream)
{
    switch (key_mode(sp, in)) {
    case 1: return update_km<1, PRE>(sp, in, tb, ovf, spill, C, stream);
    case 2: return update_km<2, PRE>(sp, in, tb, ovf, spill, C, stream);
    default: return update_km<0, PRE>(sp, in, tb, ovf, spill, C, stream);
    }
}

/* Shared slots per block of the few-groups path (fewer when the states do not leave room
 * for two blocks per SM): holds 2048 groups at half load. */
constexpr int kSmallLogSlots = 12;

/* Whether the shared-table kernels take this spec (inputs without nulls), and their
 * state layout. */
bool small_spec_ok(const sl_k_agg_spec *sp, SmallLayout *L)
{
    if (sp->n_keys != 1 || (sp->key_type[0] != SL_K_I32 && sp->key_type[0] != SL_K_I64))
        return false;
    L->n_st = 0;
    L->pk = -1;
    for (int a = 0; a < kMaxA; a++)
        L->st[a] = -1;
    for (int a = 0; a < sp->n_aggs; a++) {
        int kd = kind_of(sp->fn[a], sp->in_type[a]);
        if (kd == K_NONE || kd == K_COUNT)
            continue;
        if (kd != K_SUMI && kd != K_MINI && kd != K_MAXI)
            return false;
        if (kd == K_SUMI && L->pk < 0)
            L->pk = L->n_st;
        L->st[a] = L->n_st++;
    }
    return true;
}

/* Whether the few-groups path takes this input. */
bool small_ok(const sl_k_agg_spec *sp, const sl_k_agg_input *in, SmallLayout *L)
{
    if (!small_spec_ok(sp, L) || in->keys[0].d_valid || in->d_nullbits || in->d_rowidx)
        return false;
    for (int a = 0; a < sp->n_aggs; a++)
        if (sp->fn[a] != SL_K_AGG_COUNT_STAR && in->vals[a].d_valid)
            return false;
    return true;
}

/* Shared bytes of a table of 1 << log_c slots of key type K (SmallTab; `pack`: the wraps
 * of the packed words too). */
template <typename K>
size_t small_bytes(const SmallLayout &L, int log_c, bool pack)
{
    return ((size_t)L.n_st * 8 + sizeof(K) + 4 + (pack ? 8 : 0)) << log_c;
}

bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* Whether the key and the values of the aggregates with a state (has[a] >= 0) load as
 * 16-byte vectors. */
bool small_vec(const sl_k_agg_spec *sp, const sl_k_agg_input *in, const int *has)
{
    bool vec = aligned16(in->keys[0].d_data);
    for (int a = 0; a < sp->n_aggs; a++)
        if (has[a] >= 0)
            vec = vec && aligned16(in->vals[a].d_data);
    return vec;
}

/* Grid of a persistent kernel of `threads` threads taking `items` rows a step: the
 * resident blocks, fewer for a small input (at least one). */
cudaError_t small_grid(const void *kern, int threads, int items, size_t smem, int64_t n,
                       int *grid)
{
    cudaError_t e = grid_for(kern, threads, smem, grid);
    if (e != cudaSuccess)
        return e;
    int64_t need = (n / items + threads - 1) / threads;
    if (need < *grid)
        *grid = need < 1 ? 1 : (int)need;
    return cudaSuccess;
}

/* Slots (log2) of the few-groups kernels' shared table: kSmallLogSlots, fewer where the
 * states do not leave room for two blocks per SM. */
template <typename K>
int small_log_c(const SmallLayout &L, bool pack)
{
    const size_t limit = smem_optin() / 2 - 1024;
    int log_c = kSmallLogSlots;
    while (log_c > 8 && small_bytes<K>(L, log_c, pack) > limit)
        log_c--;
    return log_c;
}

/* Whether SL_K_AGG_PACK is taken: asked for, and its wrap arrays cost no slots. */
template <typename K>
bool small_pack(const SmallLayout &L, int flags)
{
    return (flags & SL_K_AGG_PACK) && small_log_c<K>(L, true) == small_log_c<K>(L, false);
}

template <typename K, bool SPLIT, bool PACK>
cudaError_t small_launch(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                         const sl_k_agg_table *tb, const sl_k_agg_table *spill,
                         const SmallLayout &L, cudaStream_t stream)
{
    const int log_c = small_log_c<K>(L, PACK);
    const size_t smem = small_bytes<K>(L, log_c, PACK);
    const bool vec = small_vec(sp, in, L.st);
    int grid = 0;
    cudaError_t e = small_grid((const void *)small_update_kernel<K, SPLIT, PACK>, kThreads,
                               kSmallItems, smem, in->n, &grid);
    if (e != cudaSuccess)
        return e;
    small_update_kernel<K, SPLIT, PACK><<<grid, kThreads, smem, stream>>>(*sp, *in, *tb, *spill,
                                                                           L, log_c, vec);
    return cudaGetLastError();
}

/* The lean few-groups kernel (L: one state, a sum) for key type K. */
template <typename K>
cudaError_t lean_launch(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                        const sl_k_agg_table *tb, const sl_k_agg_table *spill,
                        const SmallLayout &L, cudaStream_t stream)
{
    int a = 0;
    while (L.st[a] != 0)
        a++;
    const int log_c = kSmallLogSlots;
    const size_t smem = (sizeof(K) + 12) << log_c;
    const bool vec = aligned16(in->keys[0].d_data) && aligned16(in->vals[a].d_data);
    int grid = 0;
    cudaError_t e = small_grid((const void *)lean_update_kernel<K>, kThreads, kSmallItems, smem,
                               in->n, &grid);
    if (e != cudaSuccess)
        return e;
    lean_update_kernel<K><<<grid, kThreads, smem, stream>>>(*sp, *in, *tb, *spill, a, log_c,
                                                            vec);
    return cudaGetLastError();
}

/* The few-groups kernel for key type K: 64-bit shared sums, 32-bit halves, or (PACK)
 * halves with the row counts packed with the first sum. */
template <typename K>
cudaError_t small_launch_k(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                           const sl_k_agg_table *tb, const sl_k_agg_table *spill,
                           const SmallLayout &L, int flags, cudaStream_t stream)
{
    if ((flags & SL_K_AGG_LEAN) && L.n_st == 1 && L.pk == 0)
        return lean_launch<K>(sp, in, tb, spill, L, stream);
    if (small_pack<K>(L, flags))
        return small_launch<K, true, true>(sp, in, tb, spill, L, stream);
    if (flags & SL_K_AGG_SMALL_SPLIT)
        return small_launch<K, true, false>(sp, in, tb, spill, L, stream);
    return small_launch<K, false, false>(sp, in, tb, spill, L, stream);
}

/* Whether the few-groups kernel takes this input (aggregate_few.cuh), and its layout. */
bool few_ok(const sl_k_agg_spec *sp, const sl_k_agg_input *in, FewLayout *L)
{
    if (sp->n_keys > 2 || in->d_nullbits)
        return false;
    L->n_keys = sp->n_keys;
    L->key_type = sp->n_keys ? sp->key_type[0] : SL_K_I32;
    for (int j = 0; j < sp->n_keys; j++)
        if (in->keys[j].d_valid || (sp->key_type[j] != SL_K_I32 &&
                                    (sp->n_keys == 2 || sp->key_type[j] != SL_K_I64)))
            return false;
    L->n_st = 0;
    for (int a = 0; a < kMaxA; a++)
        L->st[a] = -1;
    for (int a = 0; a < sp->n_aggs; a++) {
        const int kd = kind_of(sp->fn[a], sp->in_type[a]);
        if (kd != K_NONE && in->vals[a].d_valid)
            return false;
        if (kd == K_NONE || kd == K_COUNT)
            continue;
        if ((kd != K_SUMI && kd != K_MINI && kd != K_MAXI) || L->n_st == kFewStates)
            return false;
        L->agg[L->n_st] = a;
        L->kd[L->n_st] = kd;
        L->type[L->n_st] = sp->in_type[a];
        L->st[a] = L->n_st++;
    }
    return true;
}

cudaError_t few_launch(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                       const sl_k_agg_table *tb, const sl_k_agg_table *spill, const FewLayout &L,
                       cudaStream_t stream)
{
    const size_t smem = ((size_t)L.n_st * 16 + 8 + 4) << kFewLogSlots;
    bool vec = true;
    for (int j = 0; j < sp->n_keys; j++)
        vec = vec && aligned16(in->keys[j].d_data);
    for (int s = 0; s < L.n_st; s++)
        vec = vec && aligned16(in->vals[L.agg[s]].d_data);
    int grid = 0;
    cudaError_t e = small_grid((const void *)few_update_kernel, kFewThreads, kFewItems, smem,
                               in->n, &grid);
    if (e != cudaSuccess)
        return e;
    few_update_kernel<<<grid, kFewThreads, smem, stream>>>(*sp, *in, *tb, *spill, L, vec);
    return cudaGetLastError();
}

/* The record layout of the many-groups table: key, rows, then per aggregate with a
 * state its words (a sum two, min/max one). */
bool direct_layout(const sl_k_agg_spec *sp, DirectLayout *L)
{
    SmallLayout S;
    if (!small_spec_ok(sp, &S))
        return false;
    L->words = 2;
    for (int a = 0; a < kMaxA; a++) {
        L->off[a] = -1;
        if (a >= sp->n_aggs || S.st[a] < 0)
            continue;
        L->off[a] = L->words;
        L->words += kind_of(sp->fn[a], sp->in_type[a]) == K_SUMI ? 2 : 1;
    }
    return true;
}

/* Slots for `groups` groups at a load of at most 2/3 (a sampled estimate is off by some
 * percent: a table of twice the slots would double the clear and output scans). */
uint64_t direct_slots(int64_t groups)
{
    uint64_t slots = 16, g = (uint64_t)(groups < 1 ? 1 : groups);
    while (slots < g + g / 2)
        slots <<= 1;
    return slots;
}

/* Blocks of a grid-stride kernel over n items, 256 threads each. */
unsigned blocks_for(uint64_t n)
{
    uint64_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

template <int KM>
cudaError_t count_km(const sl_k_agg_spec *sp, const sl_k_agg_input *in, int bits,
                     unsigned long long *counts, cudaStream_t stream)
{
    size_t smem = (size_t)4 << bits;
    int grid = 0;
    cudaError_t e = grid_for((const void *)part_count_kernel<KM>, kThreads, smem, &grid);
    if (e != cudaSuccess)
        return e;
    int64_t need = (in->n + kThreads - 1) / kThreads;
    if (need < grid)
        grid = (int)need;
    part_count_kernel<KM><<<grid, kThreads, smem, stream>>>(*sp, *in, bits, counts);
    return cudaGetLastError();
}

template <int KM>
cudaError_t scatter_km(const sl_k_agg_spec *sp, const sl_k_agg_input *in, int bits,
                       int64_t *cursor, const sl_k_agg_input *out, cudaStream_t stream)
{
    size_t smem = (size_t)4 << bits;
    int grid = 0;
    cudaError_t e = grid_for((const void *)part_scatter_kernel<KM>, kThreads, smem, &grid);
    if (e != cudaSuccess)
        return e;
    int64_t need = (in->n + kThreads - 1) / kThreads;
    if (need < grid)
        grid = (int)need;
    part_scatter_kernel<KM><<<grid, kThreads, smem, stream>>>(*sp, *in, bits, cursor, *out);
    return cudaGetLastError();
}

} // namespace

extern "C" size_t sl_k_agg_table_bytes(const struct sl_k_agg_spec *sp, int64_t cap)
{
    if (cap < 1)
        cap = 1;
    uint64_t slots = 16;
    while (slots < (uint64_t)cap * 2)
        slots <<= 1;
    int nk = sp->n_keys > 0 ? sp->n_keys : 1;
    size_t b = align_up(slots * 8) + align_up(4 * 8) + align_up((size_t)nk * cap * 8) +
               align_up((size_t)cap * 4) + align_up((size_t)cap * 8);
    for (int a = 0; a < sp->n_aggs; a++) {
        int kd = kind_of(sp->fn[a], sp->in_type[a]);
        if (kd == K_NONE)
            continue;
        if (kd != K_COUNT)
            b += align_up((size_t)cap * 8);
        if (kd == K_SUMI)
            b += align_up((size_t)cap * 8);
        b += align_up((size_t)cap * 8);
    }
    return b;
}

extern "C" void sl_k_agg_table_carve(const struct sl_k_agg_spec *sp, int64_t cap, void *d_mem,
                                     struct sl_k_agg_table *tb)
{
    if (cap < 1)
        cap = 1;
    uint64_t slots = 16;
    while (slots < (uint64_t)cap * 2)
        slots <<= 1;
    int nk = sp->n_keys > 0 ? sp->n_keys : 1;
    char *p = (char *)d_mem;
    memset(tb, 0, sizeof *tb);
    tb->cap = cap;
    tb->n_slots = slots;
    tb->d_slots = (unsigned long long *)p;
    p += align_up(slots * 8);
    tb->d_n = (unsigned long long *)p;
    p += align_up(4 * 8);
    tb->d_keys = (int64_t *)p;
    p += align_up((size_t)nk * cap * 8);
    tb->d_nulls = (uint32_t *)p;
    p += align_up((size_t)cap * 4);
    tb->d_rows = (unsigned long long *)p;
    p += align_up((size_t)cap * 8);
    for (int a = 0; a < sp->n_aggs; a++) {
        int kd = kind_of(sp->fn[a], sp->in_type[a]);
        if (kd == K_NONE)
            continue;
        if (kd != K_COUNT) {
            tb->d_v0[a] = (unsigned long long *)p;
            p += align_up((size_t)cap * 8);
        }
        if (kd == K_SUMI) {
            tb->d_v1[a] = (long long *)p;
            p += align_up((size_t)cap * 8);
        }
        tb->d_nn[a] = (unsigned long long *)p;
        p += align_up((size_t)cap * 8);
    }
}

extern "C" cudaError_t sl_k_agg_table_clear(const struct sl_k_agg_table *tb, cudaStream_t stream)
{
    if (!tb || !tb->d_slots)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(tb->d_slots, 0, tb->n_slots * 8, stream);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(tb->d_n, 0, 4 * 8, stream);
    return e;
}

extern "C" int64_t sl_k_agg_spill_cap(const struct sl_k_agg_spec *sp, int shared_groups)
{
    int C = shared_groups_of(sp, shared_groups);
    if (C == 0)
        return 1;
    /* The most blocks any key mode's grid has (they differ in registers). */
    int grid = 0, g = 0;
    const void *kerns[6] = {(const void *)update_kernel<0, false>,
                            (const void *)update_kernel<1, false>,
                            (const void *)update_kernel<2, false>,
                            (const void *)update_kernel<0, true>,
                            (const void *)update_kernel<1, true>,
                            (const void *)update_kernel<2, true>};
    for (int k = 0; k < 6; k++) {
        if (grid_for(kerns[k], kThreads, smem_bytes(*sp, C), &g) != cudaSuccess)
            return -1;
        grid = g > grid ? g : grid;
    }
    return (int64_t)grid * C;
}

extern "C" cudaError_t sl_k_agg_update(const struct sl_k_agg_spec *sp,
                                       const struct sl_k_agg_input *in,
                                       const struct sl_k_agg_table *tb, uint32_t *ovf,
                                       const struct sl_k_agg_table *spill, int shared_groups,
                                       int flags, cudaStream_t stream)
{
    if (!spec_ok(sp) || !in || in->n < 0 || in->n >= ((int64_t)1 << 32) || !tb || !spill)
        return cudaErrorInvalidValue;
    if (in->n == 0)
        return cudaSuccess;
    FewLayout F;
    if ((flags & SL_K_AGG_FEW) && few_ok(sp, in, &F))
        return few_launch(sp, in, tb, spill, F, stream);
    SmallLayout L;
    if ((flags & SL_K_AGG_SMALL) && small_ok(sp, in, &L))
        return sp->key_type[0] == SL_K_I32
                   ? small_launch_k<int32_t>(sp, in, tb, spill, L, flags, stream)
                   : small_launch_k<int64_t>(sp, in, tb, spill, L, flags, stream);
    int C = shared_groups_of(sp, shared_groups);
    return flags & SL_K_AGG_PRELOAD ? update_pre<true>(sp, in, tb, ovf, spill, C, stream)
                                    : update_pre<false>(sp, in, tb, ovf, spill, C, stream);
}

extern "C" cudaError_t sl_k_agg_table_merge(const struct sl_k_agg_spec *sp,
                                            const struct sl_k_agg_table *src,
                                            const struct sl_k_agg_table *dst,
                                            cudaStream_t stream)
{
    if (!spec_ok(sp) || !src || !dst)
        return cudaErrorInvalidValue;
    int64_t blocks = (src->cap + 255) / 256;
    if (blocks > 65536)
        blocks = 65536;
    merge_kernel<<<(unsigned)blocks, 256, 0, stream>>>(*sp, *src, *dst);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_agg_table_output(const struct sl_k_agg_spec *sp,
                                             const struct sl_k_agg_table *tb,
                                             const struct sl_k_agg_out *out, int32_t *d_status,
                                             cudaStream_t stream)
{
    if (!spec_ok(sp) || !tb || !out || !d_status || out->cap < 0)
        return cudaErrorInvalidValue;
    int64_t rows = tb->cap < out->cap ? tb->cap : out->cap;
    table_output_kernel<<<blocks_for((uint64_t)rows), 256, 0, stream>>>(*sp, *tb, *out, d_status);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_agg_sample_distinct(void *d_temp, size_t *temp_bytes,
                                                const struct sl_k_agg_spec *sp,
                                                const struct sl_k_agg_input *in, int64_t m,
                                                unsigned long long *d_counts,
                                                cudaStream_t stream)
{
    if (!temp_bytes || !spec_ok(sp) || !in || m < 0)
        return cudaErrorInvalidValue;
    if (m > in->n)
        m = in->n;
    uint64_t slots = 16;
    while (slots < (uint64_t)m * 2)
        slots <<= 1;
    if (!d_temp) {
        *temp_bytes = slots * 8;
        return cudaSuccess;
    }
    if (*temp_bytes < slots * 8 || !d_counts)
        return cudaErrorInvalidValue;
    if (m == 0)
        return cudaSuccess;
    cudaError_t e = cudaMemsetAsync(d_temp, 0, slots * 8, stream);
    if (e != cudaSuccess)
        return e;
    int64_t blocks = (m + 255) / 256;
    sample_kernel<<<(unsigned)(blocks < 1024 ? blocks : 1024), 256, 0, stream>>>(
        *sp, *in, m, (unsigned long long *)d_temp, slots, d_counts);
    return cudaGetLastError();
}

/* Solves d = G (1 - exp(-m / G)) for G (the expected distinct values of m draws from G
 * equally likely groups) by bisection; all distinct means "at least m^2 / 2", capped
 * at n. */
static double uniform_groups(int64_t n, int64_t m, int64_t d)
{
    if (m <= 0 || d <= 0)
        return 0;
    if (d >= m)
        return (double)m * (double)m / 2 < (double)n ? (double)m * (double)m / 2 : (double)n;
    double lo = (double)d, hi = (double)n > (double)d ? (double)n : (double)d;
    for (int i = 0; i < 100; i++) {
        double g = 0.5 * (lo + hi);
        double f = g * -expm1(-(double)m / g);
        if (f < (double)d)
            lo = g;
        else
            hi = g;
    }
    return 0.5 * (lo + hi);
}

/* The distinct count of a spread sample reads an input clustered by key (lineitem sorted
 * by l_orderkey: 60M rows, 15M groups, 4 rows a group) as all distinct, so the uniform
 * model says "every row its own group". But an input has at most 1 + (rows whose next
 * row has another key) groups, and the sampled share of such rows estimates that bound
 * (taken two standard deviations high: 16,384 changes in 65,536 pairs, as lineitem's,
 * make it 1.6% high). The estimate is the smaller of the two, and at least the distinct
 * keys the sample saw: the bound is far above the groups of an unclustered input and
 * close to them in a clustered one. */
extern "C" double sl_k_agg_estimate_groups(int64_t n, int64_t m, int64_t d, int64_t changes,
                                           int *clustered)
{
    double u = uniform_groups(n, m, d);
    if (clustered)
        *clustered = 0;
    if (changes < 0 || m <= 0)
        return u;
    double x = (double)changes;
    double c = 1 + (x + 2 * sqrt(x) + 2) / (double)m * (double)(n - 1);
    if (c < (double)d)
        c = (double)d;
    /* Unclustered, the bound is about n >= u (consecutive rows rarely share a key). */
    if (clustered)
        *clustered = c < u / 2;
    return c < u ? c : u;
}

extern "C" cudaError_t sl_k_agg_part_count(const struct sl_k_agg_spec *sp,
                                           const struct sl_k_agg_input *in, int bits,
                                           unsigned long long *d_counts, cudaStream_t stream)
{
    if (!spec_ok(sp) || !in || in->n < 0 || bits < 1 || bits > kMaxBits || !d_counts ||
        in->d_rowidx)
        return cudaErrorInvalidValue;
    if (in->n == 0)
        return cudaSuccess;
    switch (key_mode(sp, in)) {
    case 1: return count_km<1>(sp, in, bits, d_counts, stream);
    case 2: return count_km<2>(sp, in, bits, d_counts, stream);
    default: return count_km<0>(sp, in, bits, d_counts, stream);
    }
}

extern "C" cudaError_t sl_k_agg_part_scatter(void *d_temp, size_t *temp_bytes,
                                             const struct sl_k_agg_spec *sp,
                                             const struct sl_k_agg_input *in, int bits,
                                             const unsigned long long *d_counts,
                                             int64_t *d_offsets,
                                             const struct sl_k_agg_pbatch *out,
                                             cudaStream_t stream)
{
    if (!temp_bytes || !spec_ok(sp) || !in || in->n < 0 || in->n >= ((int64_t)1 << 32) ||
        bits < 1 || bits > kMaxBits || in->d_rowidx)
        return cudaErrorInvalidValue;
    const int P = 1 << bits;
    size_t scan_bytes = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum((void *)NULL, scan_bytes,
                                                  (const unsigned long long *)NULL,
                                                  (int64_t *)NULL, P, stream);
    if (e != cudaSuccess)
        return e;
    const size_t cur_bytes = align_up((size_t)(P + 1) * 8);
    if (!d_temp) {
        *temp_bytes = cur_bytes + align_up(scan_bytes);
        return cudaSuccess;
    }
    if (*temp_bytes < cur_bytes + align_up(scan_bytes) || !d_counts || !d_offsets || !out)
        return cudaErrorInvalidValue;
    int64_t *cursor = (int64_t *)d_temp;
    void *scan_tmp = (char *)d_temp + cur_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(scan_tmp, scan_bytes, d_counts, d_offsets, P,
                                           stream)) != cudaSuccess)
        return e;
    part_offsets_tail_kernel<<<(P + 256) / 256, 256, 0, stream>>>(d_offsets, P, in->n, cursor);
    if ((e = cudaGetLastError()) != cudaSuccess || in->n == 0)
        return e;
    switch (key_mode(sp, in)) {
    case 1: return scatter_km<1>(sp, in, bits, cursor, &out->in, stream);
    case 2: return scatter_km<2>(sp, in, bits, cursor, &out->in, stream);
    default: return scatter_km<0>(sp, in, bits, cursor, &out->in, stream);
    }
}

extern "C" int64_t sl_k_agg_part_groups_per_block(const struct sl_k_agg_spec *sp)
{
    return spec_ok(sp) ? part_groups_of(sp) : 0;
}

/* Partitions per redo bitmap of sl_k_agg_part_final (at the start of d_pending). */
static size_t redo_words(int bits)
{
    return ((size_t)1 << bits) / 32 + 1;
}

extern "C" size_t sl_k_agg_part_pending_bytes(int64_t rows, int bits)
{
    return ((size_t)(rows < 0 ? 0 : rows) + 31) / 32 * 4 + redo_words(bits) * 4;
}

/* Slots of the partition kernel's big table (SL_K_AGG_BIG): all of an SM's shared
 * memory for one block, a multiple of 32 (0: the spec does not take it). */
template <typename K>
static int big_slots(const SmallLayout &L)
{
    const size_t per = small_bytes<K>(L, 0, false), room = smem_optin() - 1024;
    return (int)(room / per) & ~31;
}

/* The shared-table partition kernel (groups per partition at half the slots' load, or
 * BIG: the big table), then part_final_kernel on the partitions it left. */
template <typename K, bool PACK, bool BIG>
static cudaError_t small_final(const sl_k_agg_spec *sp, const SmallLayout &L,
                               const sl_k_agg_pbatch *d_batches, int n_batches, int bits,
                               uint32_t *d_redo, const sl_k_agg_out *out, int32_t *d_status,
                               cudaStream_t stream)
{
    const int log_c = small_log_c<K>(L, PACK), big_c = BIG ? big_slots<K>(L) : 0;
    const size_t smem = BIG ? small_bytes<K>(L, 0, false) * big_c : small_bytes<K>(L, log_c, PACK);
    if (BIG && big_c < 64)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaFuncSetAttribute((const void *)small_part_final_kernel<K, PACK, BIG, 0>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    small_part_final_kernel<K, PACK, BIG, 0><<<1 << bits, BIG ? kBigThreads : kThreads, smem,
                                              stream>>>(*sp, d_batches, n_batches, d_redo, *out,
                                                        d_status, L, log_c, big_c);
    return cudaGetLastError();
}

/* The cluster table's launch (SL_K_AGG_CLUSTER): CL blocks of kBigThreads a partition,
 * one cluster each, with the big table's slots each. With d_batches NULL: only sets the
 * kernel's attributes and puts the clusters that can be resident at once in *max_active
 * (0: none, the GPU or the build has no clusters of CL blocks of this size). */
template <typename K, int CL>
static cudaError_t cluster_final(const sl_k_agg_spec *sp, const SmallLayout &L,
                                 const sl_k_agg_pbatch *d_batches, int n_batches, int bits,
                                 uint32_t *d_redo, const sl_k_agg_out *out, int32_t *d_status,
                                 int *max_active, cudaStream_t stream)
{
    const int big_c = big_slots<K>(L);
    const size_t smem = small_bytes<K>(L, 0, false) * big_c;
    if (big_c < 64)
        return cudaErrorInvalidValue;
    /* No min/max: their 64-bit atomics on another block's shared memory gave wrong
     * results on the H100 (racecheck: hazards inside atomicMin/atomicMax, 2026-11-27). */
    for (int a = 0; a < sp->n_aggs; a++) {
        const int kd = kind_of(sp->fn[a], sp->in_type[a]);
        if (kd == K_MINI || kd == K_MAXI)
            return cudaErrorNotSupported;
    }
    void (*kern)(sl_k_agg_spec, const sl_k_agg_pbatch *, int, uint32_t *, sl_k_agg_out,
                 int32_t *, SmallLayout, int, int) = small_part_final_kernel<K, false, true, CL>;
    int dev = 0, cc = 0, cl_ok = 0;
    cudaError_t e;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&cl_ok, cudaDevAttrClusterLaunch, dev)) != cudaSuccess)
        return e;
    if (cc < 9 || !cl_ok)
        return cudaErrorNotSupported;
    if ((e = cudaFuncSetAttribute((const void *)kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem)) != cudaSuccess ||
        (CL > 8 && (e = cudaFuncSetAttribute((const void *)kern,
                                             cudaFuncAttributeNonPortableClusterSizeAllowed,
                                             1)) != cudaSuccess))
        return e;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = CL;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)CL << bits);
    cfg.blockDim = dim3(kBigThreads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    if (!d_batches) {
        *max_active = 0;
        return cudaOccupancyMaxActiveClusters(max_active, (const void *)kern, &cfg);
    }
    return cudaLaunchKernelEx(&cfg, kern, *sp, d_batches, n_batches, d_redo, *out, d_status, L,
                              0, big_c);
}

template <typename K>
static cudaError_t cluster_final_n(int cl, const sl_k_agg_spec *sp, const SmallLayout &L,
                                   const sl_k_agg_pbatch *d_batches, int n_batches, int bits,
                                   uint32_t *d_redo, const sl_k_agg_out *out, int32_t *d_status,
                                   int *max_active, cudaStream_t stream)
{
    switch (cl) {
    case 2: return cluster_final<K, 2>(sp, L, d_batches, n_batches, bits, d_redo, out, d_status,
                                       max_active, stream);
    case 4: return cluster_final<K, 4>(sp, L, d_batches, n_batches, bits, d_redo, out, d_status,
                                       max_active, stream);
    case 8: return cluster_final<K, 8>(sp, L, d_batches, n_batches, bits, d_redo, out, d_status,
                                       max_active, stream);
    case 16: return cluster_final<K, 16>(sp, L, d_batches, n_batches, bits, d_redo, out,
                                         d_status, max_active, stream);
    default: return cudaErrorInvalidValue;
    }
}

template <typename K>
static cudaError_t small_final_k(const sl_k_agg_spec *sp, const SmallLayout &L,
                                 const sl_k_agg_pbatch *d_batches, int n_batches, int bits,
                                 uint32_t *d_redo, const sl_k_agg_out *out, int32_t *d_status,
                                 int flags, cudaStream_t stream)
{
    if (flags & SL_K_AGG_CLUSTER_MASK)
        return cluster_final_n<K>(sl_k_agg_cluster_of(flags), sp, L, d_batches, n_batches, bits,
                                  d_redo, out, d_status, NULL, stream);
    if (flags & SL_K_AGG_BIG)
        return small_final<K, false, true>(sp, L, d_batches, n_batches, bits, d_redo, out,
                                           d_status, stream);
    return small_pack<K>(L, flags)
               ? small_final<K, true, false>(sp, L, d_batches, n_batches, bits, d_redo, out,
                                             d_status, stream)
               : small_final<K, false, false>(sp, L, d_batches, n_batches, bits, d_redo, out,
                                              d_status, stream);
}

template <int KM>
static cudaError_t final_km(const sl_k_agg_spec *sp, const sl_k_agg_pbatch *d_batches,
                            int n_batches, int bits, uint32_t *d_pending, const sl_k_agg_out *out,
                            int32_t *d_status, const uint32_t *only, cudaStream_t stream)
{
    const int C = part_groups_of(sp);
    size_t smem = smem_bytes(*sp, C);
    cudaError_t e = cudaFuncSetAttribute((const void *)part_final_kernel<KM>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    part_final_kernel<KM><<<1 << bits, kThreads, smem, stream>>>(*sp, d_batches, n_batches,
                                                                  d_pending, *out, d_status, C,
                                                                  only);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_agg_part_final(const struct sl_k_agg_spec *sp,
                                           const struct sl_k_agg_pbatch *d_batches,
                                           int n_batches, int bits, int any_nulls, int flags,
                                           uint32_t *d_pending, const struct sl_k_agg_out *out,
                                           int32_t *d_status, cudaStream_t stream)
{
    if (!spec_ok(sp) || n_batches < 0 || (n_batches > 0 && !d_batches) || bits < 1 ||
        bits > kMaxBits || !d_pending || !out || !d_status)
        return cudaErrorInvalidValue;
    if (n_batches == 0)
        return cudaSuccess;
    uint32_t *redo = d_pending, *pending = d_pending + redo_words(bits);
    SmallLayout L;
    const uint32_t *only = NULL;
    if (!any_nulls && !(flags & SL_K_AGG_NO_SMALL) && small_spec_ok(sp, &L)) {
        cudaError_t e = sp->key_type[0] == SL_K_I32
                            ? small_final_k<int32_t>(sp, L, d_batches, n_batches, bits, redo,
                                                     out, d_status, flags, stream)
                            : small_final_k<int64_t>(sp, L, d_batches, n_batches, bits, redo,
                                                     out, d_status, flags, stream);
        if (e != cudaSuccess)
            return e;
        only = redo;
    }
    if (sp->n_keys == 1 && !any_nulls)
        return sp->key_type[0] == SL_K_I32
                   ? final_km<1>(sp, d_batches, n_batches, bits, pending, out, d_status, only,
                                 stream)
                   : final_km<2>(sp, d_batches, n_batches, bits, pending, out, d_status, only,
                                 stream);
    return final_km<0>(sp, d_batches, n_batches, bits, pending, out, d_status, only, stream);
}

extern "C" int sl_k_agg_part_cluster_max(const struct sl_k_agg_spec *sp, int cluster)
{
    SmallLayout L;
    int n = 0;
    if (!spec_ok(sp) || !small_spec_ok(sp, &L))
        return 0;
    cudaError_t e = sp->key_type[0] == SL_K_I32
                        ? cluster_final_n<int32_t>(cluster, sp, L, NULL, 0, 1, NULL, NULL, NULL,
                                                   &n, 0)
                        : cluster_final_n<int64_t>(cluster, sp, L, NULL, 0, 1, NULL, NULL, NULL,
                                                   &n, 0);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* a refusal is an answer, not a pending error */
        return 0;
    }
    return n;
}

extern "C" int sl_k_agg_direct_ok(const struct sl_k_agg_spec *sp, const struct sl_k_agg_input *in)
{
    SmallLayout L;
    return spec_ok(sp) && in && small_ok(sp, in, &L);
}

extern "C" size_t sl_k_agg_direct_bytes(const struct sl_k_agg_spec *sp, int64_t groups)
{
    DirectLayout L;
    if (!spec_ok(sp) || !direct_layout(sp, &L))
        return 0;
    return align_up((direct_slots(groups) + 1) * (size_t)L.words * 8) + align_up(2 * 8);
}

extern "C" void sl_k_agg_direct_carve(const struct sl_k_agg_spec *sp, int64_t groups,
                                      void *d_mem, struct sl_k_agg_dtable *dt)
{
    DirectLayout L;
    memset(dt, 0, sizeof *dt);
    if (!spec_ok(sp) || !direct_layout(sp, &L))
        return;
    dt->n_slots = direct_slots(groups);
    while (((uint64_t)1 << dt->log_slots) < dt->n_slots)
        dt->log_slots++;
    dt->words = L.words;
    dt->d_rec = (unsigned long long *)d_mem;
    dt->d_n = (unsigned long long *)((char *)d_mem +
                                     align_up((dt->n_slots + 1) * (size_t)L.words * 8));
}

extern "C" cudaError_t sl_k_agg_direct_clear(const struct sl_k_agg_spec *sp,
                                             const struct sl_k_agg_dtable *dt,
                                             cudaStream_t stream)
{
    DirectLayout L;
    if (!spec_ok(sp) || !dt || !dt->d_rec || !direct_layout(sp, &L) || L.words != dt->words)
        return cudaErrorInvalidValue;
    DirectInit init;
    memset(&init, 0, sizeof init);
    init.w[0] = (unsigned long long)kDirectEmpty;
    for (int a = 0; a < sp->n_aggs; a++)
        if (L.off[a] >= 0)
            init.w[L.off[a]] = v0_init(kind_of(sp->fn[a], sp->in_type[a]));
    direct_clear_kernel<<<blocks_for((dt->n_slots + 1) * (uint64_t)L.words), 256, 0, stream>>>(
        *dt, init);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_agg_direct_update(const struct sl_k_agg_spec *sp,
                                              const struct sl_k_agg_input *in,
                                              const struct sl_k_agg_dtable *dt,
                                              cudaStream_t stream)
{
    DirectLayout L;
    if (!sl_k_agg_direct_ok(sp, in) || !dt || !dt->d_rec || in->n < 0 ||
        !direct_layout(sp, &L) || L.words != dt->words)
        return cudaErrorInvalidValue;
    if (in->n == 0)
        return cudaSuccess;
    const bool vec = small_vec(sp, in, L.off);
    const bool k32 = sp->key_type[0] == SL_K_I32;
    const void *kern = k32 ? (const void *)direct_update_kernel<int32_t>
                           : (const void *)direct_update_kernel<int64_t>;
    int grid = 0;
    cudaError_t e = small_grid(kern, kThreads, kSmallItems, 0, in->n, &grid);
    if (e != cudaSuccess)
        return e;
    if (k32)
        direct_update_kernel<int32_t><<<grid, kThreads, 0, stream>>>(*sp, *in, *dt, L, vec);
    else
        direct_update_kernel<int64_t><<<grid, kThreads, 0, stream>>>(*sp, *in, *dt, L, vec);
    return cudaGetLastError();
}

/* The scatter kernel for nv value columns (0..kPartVals). */
template <typename K>
static const void *dpart_scatter_fn(int nv)
{
    switch (nv) {
    case 0: return (const void *)dpart_scatter_kernel<K, 0>;
    case 1: return (const void *)dpart_scatter_kernel<K, 1>;
    case 2: return (const void *)dpart_scatter_kernel<K, 2>;
    case 3: return (const void *)dpart_scatter_kernel<K, 3>;
    default: return (const void *)dpart_scatter_kernel<K, 4>;
    }
}

/* The value columns the partitioners move: those of the aggregates with a state, into
 * out's (NULL: the size query). */
static cudaError_t dpart_cols(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                              const sl_k_agg_input *out, DPartCols *c)
{
    DirectLayout L;
    if (!direct_layout(sp, &L))
        return cudaErrorInvalidValue;
    memset(c, 0, sizeof *c);
    for (int a = 0; a < sp->n_aggs; a++) {
        if (L.off[a] < 0)
            continue;
        if (c->n_vals == kPartVals)
            return cudaErrorInvalidValue; /* the caller partitions generically */
        c->src[c->n_vals] = in->vals[a].d_data;
        c->dst[c->n_vals] = out ? (void *)out->vals[a].d_data : NULL;
        c->w[c->n_vals++] = sp->in_type[a] == SL_K_I32 ? 4 : 8;
    }
    return cudaSuccess;
}

/* The partitioner's grid and value columns (the same for the size query and the run). */
template <typename K>
static cudaError_t dpart_setup(const sl_k_agg_spec *sp, const sl_k_agg_input *in,
                               const sl_k_agg_input *out, DPartCols *c, int *grid,
                               size_t *smem)
{
    cudaError_t e0 = dpart_cols(sp, in, out, c);
    if (e0 != cudaSuccess)
        return e0;
    *smem = dpart_smem<K>(c->n_vals);
    cudaError_t e = grid_for(dpart_scatter_fn<K>(c->n_vals), kThreads, *smem, grid);
    const int64_t tile = dpart_tile<K>(c->n_vals);
    int64_t need = (in->n + tile - 1) / tile;
    if (e == cudaSuccess && need < *grid)
        *grid = need < 1 ? 1 : (int)need;
    return e;
}

/* One pass of the tile partitioner: keys and the columns of c from `keys` into `okeys`
 * and c.dst, `bits` bits below g.shift, over `grid` blocks (hist and offs: grid << bits
 * cells each). */
template <typename K>
static cudaError_t dpart_pass(const K *keys, int64_t n, int bits, const DPartSeg &g, int grid,
                              size_t smem, unsigned *hist, unsigned *offs, void *scan_tmp,
                              size_t scan_bytes, K *okeys, const DPartCols &c,
                              cudaStream_t stream)
{
    const size_t cells = (size_t)grid << bits;
    dpart_count_kernel<K><<<grid, kThreads, 0, stream>>>(keys, n, bits, g, hist);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(scan_tmp, scan_bytes, hist, offs, (int)cells, stream);
    if (e != cudaSuccess)
        return e;
    void *args[] = {(void *)&keys, (void *)&n, (void *)&bits, (void *)&g, (void *)&offs,
                    (void *)&okeys, (void *)&c};
    return cudaLaunchKernel(dpart_scatter_fn<K>(c.n_vals), dim3(grid), dim3(kThreads), args,
                            smem, stream);
}

/* The temp block of sl_k_agg_tile_partition (the record table's one pass: offsets NULL,
 * no second level), and the moved columns (dpart_setup: into out's, NULL for the size
 * query). */
struct DPartPlan {
    int b1, b2, grid1, grid2;
    int64_t chunk;
    size_t smem, scan_bytes;
    size_t o_hist1, o_offs1, o_scan, o_o1, o_cstart, o_hist2, o_offs2, o_mid, bytes;
    DPartCols c;
};

template <typename K>
static cudaError_t dpart_plan(const sl_k_agg_spec *sp, const sl_k_agg_input *in, int bits,
                              bool offsets, const sl_k_agg_input *out, DPartPlan *pl)
{
    memset(pl, 0, sizeof *pl);
    const DPartCols &c = pl->c;
    cudaError_t e = dpart_setup<K>(sp, in, out, &pl->c, &pl->grid1, &pl->smem);
    if (e != cudaSuccess)
        return e;
    pl->b1 = bits > 8 ? (bits + 1) / 2 : bits;
    pl->b2 = bits - pl->b1;
    const int P1 = 1 << pl->b1;
    if (pl->b2) {
        pl->chunk = (in->n + pl->grid1 - 1) / pl->grid1;
        if (pl->chunk < dpart_tile<K>(c.n_vals))
            pl->chunk = dpart_tile<K>(c.n_vals);
        pl->grid2 = (int)((in->n + pl->chunk - 1) / pl->chunk) + P1;
    }
    const size_t cells1 = (size_t)pl->grid1 << pl->b1, cells2 = (size_t)pl->grid2 << pl->b2;
    size_t s1 = 0, s2 = 0;
    e = cub::DeviceScan::ExclusiveSum((void *)NULL, s1, (const unsigned *)NULL, (unsigned *)NULL,
                                      (int)cells1);
    if (e == cudaSuccess && pl->b2)
        e = cub::DeviceScan::ExclusiveSum((void *)NULL, s2, (const unsigned *)NULL,
                                          (unsigned *)NULL, (int)cells2);
    if (e != cudaSuccess)
        return e;
    pl->scan_bytes = s1 > s2 ? s1 : s2;
    size_t p = 0;
    pl->o_hist1 = p, p += align_up(cells1 * 4);
    pl->o_offs1 = p, p += align_up(cells1 * 4);
    pl->o_scan = p, p += align_up(pl->scan_bytes);
    if (offsets || pl->b2) {
        pl->o_o1 = p, p += align_up((size_t)(P1 + 1) * 8);
        pl->o_cstart = p, p += align_up((size_t)(P1 + 1) * 4);
    }
    if (pl->b2) {
        pl->o_hist2 = p, p += align_up(cells2 * 4);
        pl->o_offs2 = p, p += align_up(cells2 * 4);
        pl->o_mid = p, p += align_up((size_t)in->n * sizeof(K));
        for (int j = 0; j < c.n_vals; j++)
            p += align_up((size_t)in->n * c.w[j]);
    }
    pl->bytes = p;
    return cudaSuccess;
}

template <typename K>
static cudaError_t dpart_run(void *d_temp, size_t *temp_bytes, const sl_k_agg_spec *sp,
                             const sl_k_agg_input *in, int bits, const sl_k_agg_input *out,
                             int64_t *d_offsets, cudaStream_t stream)
{
    DPartPlan pl;
    cudaError_t e = dpart_plan<K>(sp, in, bits, d_offsets != NULL, d_temp ? out : NULL, &pl);
    if (e != cudaSuccess)
        return e;
    if (!d_temp) {
        *temp_bytes = pl.bytes;
        return cudaSuccess;
    }
    if (*temp_bytes < pl.bytes || !out || !out->keys[0].d_data)
        return cudaErrorInvalidValue;
    char *t = (char *)d_temp;
    const DPartCols &c = pl.c;
    const int P1 = 1 << pl.b1;
    DPartSeg g1 = {NULL, NULL, 0, 0, 0};
    const K *keys = (const K *)in->keys[0].d_data;
    K *okeys = (K *)out->keys[0].d_data;
    DPartCols c1 = c;
    K *mid_keys = NULL;
    if (pl.b2) { /* the first pass into the middle buffer */
        char *m = t + pl.o_mid;
        mid_keys = (K *)m;
        m += align_up((size_t)in->n * sizeof(K));
        for (int j = 0; j < c.n_vals; j++) {
            c1.dst[j] = m;
            m += align_up((size_t)in->n * c.w[j]);
        }
    }
    unsigned *offs1 = (unsigned *)(t + pl.o_offs1);
    e = dpart_pass<K>(keys, in->n, pl.b1, g1, pl.grid1, pl.smem, (unsigned *)(t + pl.o_hist1),
                      offs1, t + pl.o_scan, pl.scan_bytes, pl.b2 ? mid_keys : okeys, c1,
                      stream);
    if (e != cudaSuccess)
        return e;
    if (!d_offsets && !pl.b2)
        return cudaSuccess;
    int64_t *o1 = pl.b2 ? (int64_t *)(t + pl.o_o1) : d_offsets;
    unsigned *cstart = (unsigned *)(t + pl.o_cstart);
    dpart_chunks_kernel<<<1, kChunkThreads, 0, stream>>>(offs1, pl.grid1, P1, in->n,
                                                         pl.b2 ? pl.chunk : 1, o1, cstart);
    if ((e = cudaGetLastError()) != cudaSuccess || !pl.b2)
        return e;
    DPartSeg g2 = {o1, cstart, P1, pl.b1, pl.chunk};
    DPartCols c2 = c;
    for (int j = 0; j < c.n_vals; j++)
        c2.src[j] = c1.dst[j];
    unsigned *offs2 = (unsigned *)(t + pl.o_offs2);
    e = dpart_pass<K>(mid_keys, in->n, pl.b2, g2, pl.grid2, pl.smem, (unsigned *)(t + pl.o_hist2),
                      offs2, t + pl.o_scan, pl.scan_bytes, okeys, c2, stream);
    if (e != cudaSuccess || !d_offsets)
        return e;
    dpart_offsets_kernel<<<(((1 << bits) + 1) + 255) / 256, 256, 0, stream>>>(
        offs2, o1, cstart, pl.b1, pl.b2, in->n, d_offsets);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_agg_direct_partition(void *d_temp, size_t *temp_bytes,
                                                 const struct sl_k_agg_spec *sp,
                                                 const struct sl_k_agg_input *in, int bits,
                                                 const struct sl_k_agg_input *out,
                                                 cudaStream_t stream)
{
    if (!temp_bytes || !sl_k_agg_direct_ok(sp, in) || in->n < 0 || in->n >= ((int64_t)1 << 32) ||
        bits < 1 || bits > 8)
        return cudaErrorInvalidValue;
    return sp->key_type[0] == SL_K_I32
               ? dpart_run<int32_t>(d_temp, temp_bytes, sp, in, bits, out, NULL, stream)
               : dpart_run<int64_t>(d_temp, temp_bytes, sp, in, bits, out, NULL, stream);
}

extern "C" cudaError_t sl_k_agg_tile_partition(void *d_temp, size_t *temp_bytes,
                                               const struct sl_k_agg_spec *sp,
                                               const struct sl_k_agg_input *in, int bits,
                                               const struct sl_k_agg_input *out,
                                               int64_t *d_offsets, cudaStream_t stream)
{
    if (!temp_bytes || !sl_k_agg_direct_ok(sp, in) || in->n < 0 || in->n >= ((int64_t)1 << 32) ||
        bits < 1 || bits > 16 || (d_temp && !d_offsets))
        return cudaErrorInvalidValue;
    int64_t *offs = d_temp ? d_offsets : (int64_t *)1; /* the size query: plan with offsets */
    return sp->key_type[0] == SL_K_I32
               ? dpart_run<int32_t>(d_temp, temp_bytes, sp, in, bits, out, offs, stream)
               : dpart_run<int64_t>(d_temp, temp_bytes, sp, in, bits, out, offs, stream);
}

extern "C" cudaError_t sl_k_agg_direct_output(const struct sl_k_agg_spec *sp,
                                              const struct sl_k_agg_dtable *dt,
                                              const struct sl_k_agg_out *out, int32_t *d_status,
                                              cudaStream_t stream)
{
    DirectLayout L;
    if (!spec_ok(sp) || !dt || !dt->d_rec || !out || !d_status || out->cap < 0 ||
        !direct_layout(sp, &L) || L.words != dt->words)
        return cudaErrorInvalidValue;
    direct_output_kernel<<<blocks_for((dt->n_slots + 1 + kOutItems - 1) / kOutItems), 256, 0,
                           stream>>>(*sp, *dt, L, *out, d_status);
    return cudaGetLastError();
}

extern "C" int64_t sl_k_agg_part_big_slots(const struct sl_k_agg_spec *sp)
{
    SmallLayout L;
    if (!spec_ok(sp) || !small_spec_ok(sp, &L))
        return 0;
    return sp->key_type[0] == SL_K_I32 ? big_slots<int32_t>(L) : big_slots<int64_t>(L);
}

/* The wide scatter kernel for nv value columns (0..kPartVals) scanning SI cells a thread. */
template <typename K, int SI>
static const void *wide_scatter_si(int nv)
{
    switch (nv) {
    case 0: return (const void *)wide_scatter_kernel<K, 0, SI>;
    case 1: return (const void *)wide_scatter_kernel<K, 1, SI>;
    case 2: return (const void *)wide_scatter_kernel<K, 2, SI>;
    case 3: return (const void *)wide_scatter_kernel<K, 3, SI>;
    default: return (const void *)wide_scatter_kernel<K, 4, SI>;
    }
}

template <typename K>
static const void *wide_scatter_fn(int nv, int bits)
{
    return wide_scan_items(bits) == 4 ? wide_scatter_si<K, 4>(nv)
                                      : wide_scatter_si<K, kWideScanItems>(nv);
}

template <typename K>
static cudaError_t wide_run(void *d_temp, size_t *temp_bytes, const sl_k_agg_spec *sp,
                            const sl_k_agg_input *in, int bits, const sl_k_agg_input *out,
                            int64_t *d_offsets, cudaStream_t stream)
{
    DPartCols c;
    cudaError_t e = dpart_cols(sp, in, d_temp ? out : NULL, &c);
    if (e != cudaSuccess)
        return e;
    const size_t P = (size_t)1 << bits, bytes = 2 * align_up(P * 4);
    if (!d_temp) {
        *temp_bytes = bytes;
        return cudaSuccess;
    }
    if (*temp_bytes < bytes || !out || !out->keys[0].d_data)
        return cudaErrorInvalidValue;
    unsigned *hist = (unsigned *)d_temp, *cursor = (unsigned *)((char *)d_temp + align_up(P * 4));
    const K *keys = (const K *)in->keys[0].d_data;
    K *okeys = (K *)out->keys[0].d_data;
    const int64_t n = in->n;
    int grid = 0;
    if ((e = cudaMemsetAsync(hist, 0, P * 4, stream)) != cudaSuccess ||
        (e = grid_for((const void *)wide_count_kernel<K>, kThreads, 0, &grid)) != cudaSuccess)
        return e;
    int64_t need = (n + kThreads - 1) / kThreads;
    grid = need < 1 ? 1 : need < grid ? (int)need : grid;
    wide_count_kernel<K><<<grid, kThreads, 0, stream>>>(keys, n, bits, hist);
    wide_offsets_kernel<<<1, kThreads, 0, stream>>>(hist, bits, n, d_offsets, cursor);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    const size_t smem = wide_smem<K>(c.n_vals, bits);
    const void *kern = wide_scatter_fn<K>(c.n_vals, bits);
    if ((e = grid_for(kern, kThreads, smem, &grid)) != cudaSuccess)
        return e;
    const int64_t tile = dpart_tile<K>(c.n_vals);
    need = (n + tile - 1) / tile;
    grid = need < 1 ? 1 : need < grid ? (int)need : grid;
    int b = bits;
    void *args[] = {(void *)&keys, (void *)&n, (void *)&b, (void *)&cursor, (void *)&okeys,
                    (void *)&c};
    return cudaLaunchKernel(kern, dim3(grid), dim3(kThreads), args, smem, stream);
}

extern "C" cudaError_t sl_k_agg_wide_partition(void *d_temp, size_t *temp_bytes,
                                               const struct sl_k_agg_spec *sp,
                                               const struct sl_k_agg_input *in, int bits,
                                               const struct sl_k_agg_input *out,
                                               int64_t *d_offsets, cudaStream_t stream)
{
    if (!temp_bytes || !sl_k_agg_direct_ok(sp, in) || in->n < 0 || in->n >= ((int64_t)1 << 32) ||
        bits < 1 || bits > kWideMaxBits || (d_temp && !d_offsets))
        return cudaErrorInvalidValue;
    return sp->key_type[0] == SL_K_I32
               ? wide_run<int32_t>(d_temp, temp_bytes, sp, in, bits, out, d_offsets, stream)
               : wide_run<int64_t>(d_temp, temp_bytes, sp, in, bits, out, d_offsets, stream);
}
