/* Launchers of the GFTR partitioned hash join (all kinds, packed payload rows, positions)
 * and of its pack/gather helpers. Contracts in sluice_k/join_gftr.h. */
#include "sluice_k/join_gftr.h"

#include <cub/device/device_scan.cuh>

#include "join_gftr_kernels.cuh"
#include "../common/grid.cuh"

using namespace sluice_k::gftr;

static size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

static int grid_for(int64_t n, int threads)
{
    int64_t g = (n + threads - 1) / threads;
    g = sl_grid::capped(g, 16); /* grid-stride loops beyond a few waves */
    return g < 1 ? 1 : (int)g;
}

/* Column list that fits a row of row_bytes (4- or 8-byte columns, at most 4; with
 * row_ids, 4-byte ones may have no pointer: the row number). */
static bool cols_fit(const sl_k_cols_t *c, int row_bytes, bool row_ids = false)
{
    if (c->n < 0 || c->n > 4)
        return false;
    int b = 0;
    for (int j = 0; j < c->n; j++) {
        if ((c->width[j] != 4 && c->width[j] != 8) ||
            (c->ptr[j] == NULL && !(row_ids && c->width[j] == 4)))
            return false;
        b += c->width[j];
    }
    return b <= row_bytes;
}

/* ---------------------------------------------------------------- join ---- */

template <typename K, int NW>
static cudaError_t launch_phj(const PhjArgs<K> &a, bool mark_only, cudaStream_t stream)
{
    cudaError_t e;
    int dev = 0, sms = 0, per_sm = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
        return e;
    if (mark_only) {
        auto kern = phj_kernel<K, 0, true>;
        const size_t smem = smem_bytes<K, 0>();
        const int bt = Tune<K, 0>::kThreads;
        if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)smem)) != cudaSuccess ||
            (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, bt, smem)) !=
                cudaSuccess)
            return e;
        if (per_sm < 1)
            return cudaErrorInvalidConfiguration;
        kern<<<(unsigned)(sms * per_sm), bt, smem, stream>>>(a);
        return cudaGetLastError();
    }
    auto kern = phj_kernel<K, NW, false>;
    const size_t smem = smem_bytes<K, NW>();
    const int bt = Tune<K, NW>::kThreads;
    if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem)) != cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, bt, smem)) !=
            cudaSuccess)
        return e;
    if (per_sm < 1)
        return cudaErrorInvalidConfiguration;
    kern<<<(unsigned)(sms * per_sm), bt, smem, stream>>>(a);
    return cudaGetLastError();
}

template <typename K, int NW>
static cudaError_t launch_select(const uint32_t *bm, int64_t ns, uint32_t want, const K *s_keys,
                                 const void *s_rows, const sl_k_join_out_t &out, int left,
                                 unsigned long long *count, cudaStream_t stream)
{
    if (ns == 0)
        return cudaSuccess;
    select_kernel<K, NW><<<grid_for(ns, 256 * 4), 256, 0, stream>>>(bm, ns, want, s_keys,
                                                                     s_rows, out, left, count);
    return cudaGetLastError();
}

template <typename K>
static cudaError_t phj(void *d_temp, size_t *temp_bytes, const K *r_keys, const void *r_rows,
                       const int64_t *r_off, const K *s_keys, const void *s_rows,
                       const int64_t *s_off, int64_t ns, int row_bytes, int bits,
                       int part_shift, int kind, const sl_k_join_out_t *out,
                       unsigned long long *count, cudaStream_t stream)
{
    if (temp_bytes == NULL || bits < 1 || bits > 16 || part_shift < bits ||
        part_shift > (int)(8 * sizeof(K)) || ns < 0 || ns >= ((int64_t)1 << 32) ||
        kind < SL_K_JOIN_INNER || kind > SL_K_JOIN_LEFT || row_bytes < 0 ||
        row_bytes > 16 || (row_bytes & 3))
        return cudaErrorInvalidValue;
    const int64_t parts = (int64_t)1 << bits;
    size_t scan_bytes = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum((void *)NULL, scan_bytes, (int64_t *)NULL,
                                                  (int64_t *)NULL, parts + 1, stream);
    if (e != cudaSuccess)
        return e;
    const size_t u_bytes = align_up((size_t)(parts + 1) * sizeof(int64_t));
    const size_t bm_bytes =
        kind == SL_K_JOIN_INNER ? 0 : align_up((size_t)((ns + 31) / 32) * sizeof(uint32_t));
    const size_t need = u_bytes + align_up(scan_bytes) + 256 + bm_bytes;
    if (d_temp == NULL) {
        *temp_bytes = need;
        return cudaSuccess;
    }
    if (*temp_bytes < need || count == NULL || out == NULL || r_off == NULL || s_off == NULL ||
        out->capacity < 0 || (row_bytes > 0 && (r_rows == NULL || s_rows == NULL)))
        return cudaErrorInvalidValue;
    const bool semi_anti = kind == SL_K_JOIN_SEMI || kind == SL_K_JOIN_ANTI;
    if (!cols_fit(&out->s, row_bytes) || (!semi_anti && !cols_fit(&out->r, row_bytes)))
        return cudaErrorInvalidValue;
    sl_k_join_out_t o = *out;
    if (semi_anti)
        o.r.n = 0, o.r_pos = NULL; /* no R side in SEMI/ANTI rows */
    char *p = (char *)d_temp;
    int64_t *units = (int64_t *)p;
    void *scan_tmp = p + u_bytes;
    unsigned long long *work = (unsigned long long *)(p + u_bytes + align_up(scan_bytes));
    uint32_t *bm = bm_bytes ? (uint32_t *)(p + u_bytes + align_up(scan_bytes) + 256) : NULL;

    if ((e = cudaMemsetAsync(work, 0, sizeof *work, stream)) != cudaSuccess ||
        (e = cudaMemsetAsync(count, 0, 2 * sizeof *count, stream)) != cudaSuccess)
        return e;
    if (bm && (e = cudaMemsetAsync(bm, 0, bm_bytes, stream)) != cudaSuccess)
        return e;
    units_kernel<<<(unsigned)((parts + 1 + 255) / 256), 256, 0, stream>>>(r_off, s_off, parts,
                                                                         units);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    size_t sb = scan_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(scan_tmp, sb, units, units, parts + 1, stream)) !=
        cudaSuccess)
        return e;

    PhjArgs<K> a;
    a.r_keys = r_keys;
    a.s_keys = s_keys;
    a.r_rows = r_rows;
    a.s_rows = s_rows;
    a.r_off = r_off;
    a.s_off = s_off;
    a.parts = parts;
    a.shift = part_shift;
    a.unit_off = units;
    a.work = work;
    a.out = o;
    a.count = count;
    a.matched = bm;
    switch (row_bytes / 4) {
    case 0: e = launch_phj<K, 0>(a, semi_anti, stream); break;
    case 1: e = launch_phj<K, 1>(a, semi_anti, stream); break;
    case 2: e = launch_phj<K, 2>(a, semi_anti, stream); break;
    case 3: e = launch_phj<K, 3>(a, semi_anti, stream); break;
    default: e = launch_phj<K, 4>(a, semi_anti, stream); break;
    }
    if (e != cudaSuccess)
        return e;
    copy_count_kernel<<<1, 1, 0, stream>>>(count); /* [1] = rows with an R partner */
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if (kind == SL_K_JOIN_INNER)
        return cudaSuccess;
    const uint32_t want = kind == SL_K_JOIN_SEMI ? 1u : 0u;
    const int left = kind == SL_K_JOIN_LEFT;
    switch (row_bytes / 4) {
    case 0: return launch_select<K, 0>(bm, ns, want, s_keys, s_rows, o, left, count, stream);
    case 1: return launch_select<K, 1>(bm, ns, want, s_keys, s_rows, o, left, count, stream);
    case 2: return launch_select<K, 2>(bm, ns, want, s_keys, s_rows, o, left, count, stream);
    case 3: return launch_select<K, 3>(bm, ns, want, s_keys, s_rows, o, left, count, stream);
    default: return launch_select<K, 4>(bm, ns, want, s_keys, s_rows, o, left, count, stream);
    }
}

/* ------------------------------------------------------------ pack/gather ---- */

static cudaError_t pack(const sl_k_cols_t *cols, const uint32_t *sel, int64_t n, int row_bytes,
                        void *d_rows, cudaStream_t stream)
{
    if (cols == NULL || n < 0 || cols->n < 1 || row_bytes < 4 || row_bytes > 16 ||
        (row_bytes & 3) || !cols_fit(cols, row_bytes, true) || (n > 0 && !d_rows))
        return cudaErrorInvalidValue;
    const int b = row_bytes;
    if (n == 0)
        return cudaSuccess;
    const int g = grid_for(n, 256);
    switch (b / 4) {
    case 1: pack_kernel<1><<<g, 256, 0, stream>>>(*cols, sel, n, d_rows); break;
    case 2: pack_kernel<2><<<g, 256, 0, stream>>>(*cols, sel, n, d_rows); break;
    case 3: pack_kernel<3><<<g, 256, 0, stream>>>(*cols, sel, n, d_rows); break;
    default: pack_kernel<4><<<g, 256, 0, stream>>>(*cols, sel, n, d_rows); break;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_pack_rows(const sl_k_cols_t *cols, int64_t n, int row_bytes,
                                      void *d_rows, cudaStream_t stream)
{
    return pack(cols, NULL, n, row_bytes, d_rows, stream);
}

extern "C" cudaError_t sl_k_pack_rows_sel(const sl_k_cols_t *cols, const uint32_t *d_sel,
                                          int64_t n, int row_bytes, void *d_rows,
                                          cudaStream_t stream)
{
    if (n > 0 && d_sel == NULL)
        return cudaErrorInvalidValue;
    return pack(cols, d_sel, n, row_bytes, d_rows, stream);
}

extern "C" cudaError_t sl_k_gather_rows(const void *d_rows, int row_bytes, const uint32_t *d_idx,
                                        int64_t n, const sl_k_cols_t *dst, cudaStream_t stream)
{
    if (dst == NULL || n < 0 || row_bytes < 4 || row_bytes > 16 || (row_bytes & 3) ||
        !cols_fit(dst, row_bytes) || (n > 0 && (d_rows == NULL || d_idx == NULL)))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    const int g = grid_for(n, 256);
    switch (row_bytes / 4) {
    case 1: gather_rows_kernel<1><<<g, 256, 0, stream>>>(d_rows, d_idx, n, *dst); break;
    case 2: gather_rows_kernel<2><<<g, 256, 0, stream>>>(d_rows, d_idx, n, *dst); break;
    case 3: gather_rows_kernel<3><<<g, 256, 0, stream>>>(d_rows, d_idx, n, *dst); break;
    default: gather_rows_kernel<4><<<g, 256, 0, stream>>>(d_rows, d_idx, n, *dst); break;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_gather_cols(const sl_k_cols_t *src, const uint32_t *d_idx, int64_t n,
                                        const sl_k_cols_t *dst, cudaStream_t stream)
{
    if (src == NULL || dst == NULL || n < 0 || src->n != dst->n || src->n < 0 ||
        src->n > SL_K_MAX_COLS || (n > 0 && d_idx == NULL))
        return cudaErrorInvalidValue;
    for (int j = 0; j < src->n; j++)
        if (src->width[j] != dst->width[j] || (src->width[j] != 4 && src->width[j] != 8) ||
            src->ptr[j] == NULL || dst->ptr[j] == NULL)
            return cudaErrorInvalidValue;
    if (n == 0 || src->n == 0)
        return cudaSuccess;
    gather_cols_kernel<<<grid_for(n, 256), 256, 0, stream>>>(*src, d_idx, n, *dst);
    return cudaGetLastError();
}

/* ---------------------------------------------------------------- extern C ---- */

#define SL_K_PHJ_JOIN_DEF(SUF, KT)                                                         \
    extern "C" cudaError_t sl_k_phj_join_##SUF(                                           \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, const void *d_r_rows,       \
        const int64_t *d_r_offsets, const KT *d_s_keys, const void *d_s_rows,             \
        const int64_t *d_s_offsets, int64_t ns, int row_bytes, int bits, int part_shift,  \
        int kind, const sl_k_join_out_t *out, unsigned long long *d_count,                \
        cudaStream_t stream)                                                              \
    {                                                                                     \
        return phj<KT>(d_temp, temp_bytes, d_r_keys, d_r_rows, d_r_offsets, d_s_keys,     \
                       d_s_rows, d_s_offsets, ns, row_bytes, bits, part_shift, kind, out, \
                       d_count, stream);                                                  \
    }

SL_K_PHJ_JOIN_DEF(k32, uint32_t)
SL_K_PHJ_JOIN_DEF(k64, uint64_t)
