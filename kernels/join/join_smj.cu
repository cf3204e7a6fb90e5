/* Sort-merge join over sorted inputs: count (per-S-row match ranges + scan) and a
 * load-balanced write over output positions. Contracts in sluice_k/join_smj.h. */
#include "sluice_k/join_smj.h"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "sluice_k/rows.cuh"

using namespace sluice_k::rows;

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4; /* consecutive S rows (count) or output rows (write) per thread */

size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

/* First index in [lo, n) with a[i] >= key (a sorted), searching from lo by galloping:
 * cost log(distance), so walking a sorted probe side costs O(1) per row. */
template <typename K>
__device__ __forceinline__ int64_t gallop_lower(const K *__restrict__ a, int64_t lo, int64_t n,
                                                K key)
{
    if (lo >= n || !(a[lo] < key))
        return lo;
    int64_t step = 1, prev = lo; /* invariant: a[prev] < key */
    for (;;) {
        const int64_t nx = prev + step;
        if (nx >= n || !(a[nx] < key)) {
            int64_t l = prev + 1, h = nx < n ? nx : n;
            while (l < h) {
                const int64_t m = (l + h) >> 1;
                if (a[m] < key)
                    l = m + 1;
                else
                    h = m;
            }
            return l;
        }
        prev = nx;
        step <<= 1;
    }
}

/* First index in [lo, n) with a[i] > key. */
template <typename K>
__device__ __forceinline__ int64_t gallop_upper(const K *__restrict__ a, int64_t lo, int64_t n,
                                                K key)
{
    if (lo >= n || key < a[lo])
        return lo;
    int64_t step = 1, prev = lo; /* invariant: a[prev] <= key */
    for (;;) {
        const int64_t nx = prev + step;
        if (nx >= n || key < a[nx]) {
            int64_t l = prev + 1, h = nx < n ? nx : n;
            while (l < h) {
                const int64_t m = (l + h) >> 1;
                if (!(key < a[m]))
                    l = m + 1;
                else
                    h = m;
            }
            return l;
        }
        prev = nx;
        step <<= 1;
    }
}

template <typename K>
__device__ __forceinline__ int64_t lower_bound(const K *__restrict__ a, int64_t n, K key)
{
    int64_t l = 0, h = n;
    while (l < h) {
        const int64_t m = (l + h) >> 1;
        if (a[m] < key)
            l = m + 1;
        else
            h = m;
    }
    return l;
}

__device__ __forceinline__ uint64_t emits(int kind, uint64_t c)
{
    switch (kind) {
    case SL_K_JOIN_INNER: return c;
    case SL_K_JOIN_SEMI: return c > 0;
    case SL_K_JOIN_ANTI: return c == 0;
    default: return c > 0 ? c : 1; /* LEFT */
    }
}

/* lo[j] = first R row with key >= S key j; off[j] = rows S row j emits (scanned later);
 * count[1] += rows with an R partner. */
template <typename K>
__global__ void __launch_bounds__(kThreads)
    count_kernel(const K *__restrict__ rk, int64_t nr, const K *__restrict__ sk, int64_t ns,
                 int kind, uint32_t *__restrict__ lo_out, uint64_t *__restrict__ off,
                 unsigned long long *__restrict__ count)
{
    using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
    __shared__ typename Reduce::TempStorage red;
    unsigned long long matched = 0;
    const int64_t j0 = ((int64_t)blockIdx.x * kThreads + threadIdx.x) * kItems;
    if (j0 < ns) {
        K prev = sk[j0];
        int64_t lo = lower_bound(rk, nr, prev);
        int64_t hi = gallop_upper(rk, lo, nr, prev);
        for (int i = 0; i < kItems && j0 + i < ns; i++) {
            const int64_t j = j0 + i;
            const K key = sk[j];
            if (i > 0 && !(key == prev)) {
                lo = gallop_lower(rk, hi, nr, key);
                hi = gallop_upper(rk, lo, nr, key);
                prev = key;
            }
            const uint64_t c = (uint64_t)(hi - lo);
            lo_out[j] = (uint32_t)lo;
            off[j] = emits(kind, c);
            if (kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT)
                matched += c;
        }
    }
    const unsigned long long t = Reduce(red).Sum(matched);
    if (threadIdx.x == 0 && t)
        atomicAdd(&count[1], t);
}

static __global__ void total_kernel(const uint64_t *off, int64_t ns, unsigned long long *count)
{
    count[0] = off[ns];
}

/* Largest j in [start, n) with off[j] <= o (off ascending, off[start] <= o), galloping
 * from start. */
__device__ __forceinline__ int64_t row_of(const uint64_t *__restrict__ off, int64_t start,
                                          int64_t n, uint64_t o)
{
    int64_t step = 1, prev = start; /* off[prev] <= o */
    for (;;) {
        const int64_t nx = prev + step;
        if (nx >= n || off[nx] > o) {
            int64_t l = prev, h = (nx < n ? nx : n) - 1; /* answer in [l, h] */
            while (l < h) {
                const int64_t m = (l + h + 1) >> 1;
                if (off[m] <= o)
                    l = m;
                else
                    h = m - 1;
            }
            return l;
        }
        prev = nx;
        step <<= 1;
    }
}

template <typename K, int NW>
__global__ void __launch_bounds__(kThreads)
    write_kernel(const K *__restrict__ rk, const void *r_rows_v, int64_t nr,
                 const K *__restrict__ sk, const void *s_rows_v, int64_t ns,
                 const uint32_t *__restrict__ lo, const uint64_t *__restrict__ off, int kind,
                 const sl_k_join_out_t out)
{
    using R = typename RowT<NW>::T;
    const R *r_rows = (const R *)r_rows_v;
    const R *s_rows = (const R *)s_rows_v;
    __shared__ int64_t sh_j;
    const uint64_t total = off[ns];
    const uint64_t lim = total < (uint64_t)out.capacity ? total : (uint64_t)out.capacity;
    const uint64_t tile = (uint64_t)blockIdx.x * kThreads * kItems;
    if (tile >= lim)
        return;
    if (threadIdx.x == 0)
        sh_j = row_of(off, 0, ns + 1, tile);
    __syncthreads();
    const uint64_t o0 = tile + (uint64_t)threadIdx.x * kItems;
    if (o0 >= lim)
        return;
    int64_t j = row_of(off, sh_j, ns + 1, o0);
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    for (int i = 0; i < kItems; i++) {
        const uint64_t o = o0 + i;
        if (o >= lim)
            break;
        while (off[j + 1] <= o)
            j++;
        const K key = sk[j];
        if (out.keys)
            ((K *)out.keys)[o] = key;
        if (out.s_pos)
            out.s_pos[o] = (uint32_t)j;
        if constexpr (NW > 0)
            put_row<NW>(out.s, o, s_rows[j]);
        if (!with_r)
            continue;
        const int64_t r = (int64_t)lo[j] + (int64_t)(o - off[j]);
        const bool hit = r < nr && rk[r] == key;
        if (out.r_pos)
            out.r_pos[o] = hit ? (uint32_t)r : SL_K_NULL_POS;
        if (hit) {
            if constexpr (NW > 0)
                put_row<NW>(out.r, o, r_rows[r]);
        } else {
            put_zero(out.r, o);
        }
    }
}

bool cols_fit(const sl_k_cols_t *c, int row_bytes)
{
    if (c->n < 0 || c->n > 4)
        return false;
    int b = 0;
    for (int j = 0; j < c->n; j++) {
        if ((c->width[j] != 4 && c->width[j] != 8) || c->ptr[j] == NULL)
            return false;
        b += c->width[j];
    }
    return b <= row_bytes;
}

struct Layout {
    size_t scan, lo, off, total;
};

Layout layout(int64_t ns, cudaStream_t stream, cudaError_t *e)
{
    Layout l = {0, 0, 0, 0};
    size_t scan_bytes = 0;
    *e = cub::DeviceScan::ExclusiveSum((void *)NULL, scan_bytes, (uint64_t *)NULL,
                                       (uint64_t *)NULL, ns + 1, stream);
    l.scan = align_up(scan_bytes);
    l.lo = align_up((size_t)ns * sizeof(uint32_t));
    l.off = align_up((size_t)(ns + 1) * sizeof(uint64_t));
    l.total = l.scan + l.lo + l.off;
    return l;
}

template <typename K>
cudaError_t smj_count(void *d_temp, size_t *temp_bytes, const K *rk, int64_t nr, const K *sk,
                      int64_t ns, int kind, unsigned long long *count, cudaStream_t stream)
{
    const int64_t lim = ((int64_t)1 << 32) - 1;
    if (temp_bytes == NULL || nr < 0 || ns < 0 || nr >= lim || ns >= lim ||
        kind < SL_K_JOIN_INNER || kind > SL_K_JOIN_LEFT)
        return cudaErrorInvalidValue;
    cudaError_t e;
    const Layout l = layout(ns, stream, &e);
    if (e != cudaSuccess)
        return e;
    if (d_temp == NULL) {
        *temp_bytes = l.total;
        return cudaSuccess;
    }
    if (*temp_bytes < l.total || count == NULL || (nr > 0 && !rk) || (ns > 0 && !sk))
        return cudaErrorInvalidValue;
    char *p = (char *)d_temp;
    uint32_t *lo = (uint32_t *)(p + l.scan);
    uint64_t *off = (uint64_t *)(p + l.scan + l.lo);
    if ((e = cudaMemsetAsync(count, 0, 2 * sizeof *count, stream)) != cudaSuccess ||
        (e = cudaMemsetAsync(off + ns, 0, sizeof *off, stream)) != cudaSuccess)
        return e;
    if (ns > 0) {
        const int64_t threads = (ns + kItems - 1) / kItems;
        count_kernel<K><<<(unsigned)((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
            rk, nr, sk, ns, kind, lo, off, count);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
    }
    size_t sb = l.scan;
    if ((e = cub::DeviceScan::ExclusiveSum(d_temp, sb, off, off, ns + 1, stream)) != cudaSuccess)
        return e;
    total_kernel<<<1, 1, 0, stream>>>(off, ns, count);
    return cudaGetLastError();
}

template <typename K>
cudaError_t smj_write(void *d_temp, size_t temp_bytes, const K *rk, const void *r_rows,
                      int64_t nr, const K *sk, const void *s_rows, int64_t ns, int row_bytes,
                      int kind, const sl_k_join_out_t *out, cudaStream_t stream)
{
    const int64_t lim = ((int64_t)1 << 32) - 1;
    if (d_temp == NULL || out == NULL || nr < 0 || ns < 0 || nr >= lim || ns >= lim ||
        kind < SL_K_JOIN_INNER || kind > SL_K_JOIN_LEFT || row_bytes < 0 || row_bytes > 16 ||
        (row_bytes & 3) || out->capacity < 0 || (row_bytes > 0 && (!r_rows || !s_rows)))
        return cudaErrorInvalidValue;
    const bool with_r = kind == SL_K_JOIN_INNER || kind == SL_K_JOIN_LEFT;
    if (!cols_fit(&out->s, row_bytes) || (with_r && !cols_fit(&out->r, row_bytes)))
        return cudaErrorInvalidValue;
    cudaError_t e;
    const Layout l = layout(ns, stream, &e);
    if (e != cudaSuccess)
        return e;
    if (temp_bytes < l.total)
        return cudaErrorInvalidValue;
    sl_k_join_out_t o = *out;
    if (!with_r)
        o.r.n = 0, o.r_pos = NULL;
    char *p = (char *)d_temp;
    const uint32_t *lo = (const uint32_t *)(p + l.scan);
    const uint64_t *off = (const uint64_t *)(p + l.scan + l.lo);
    if (o.capacity == 0 || ns == 0)
        return cudaSuccess;
    const int64_t tiles = (o.capacity + kThreads * kItems - 1) / (kThreads * kItems);
    if (tiles >= ((int64_t)1 << 31))
        return cudaErrorInvalidValue;
    switch (row_bytes / 4) {
    case 0: write_kernel<K, 0><<<(unsigned)tiles, kThreads, 0, stream>>>(rk, r_rows, nr, sk, s_rows, ns, lo, off, kind, o); break;
    case 1: write_kernel<K, 1><<<(unsigned)tiles, kThreads, 0, stream>>>(rk, r_rows, nr, sk, s_rows, ns, lo, off, kind, o); break;
    case 2: write_kernel<K, 2><<<(unsigned)tiles, kThreads, 0, stream>>>(rk, r_rows, nr, sk, s_rows, ns, lo, off, kind, o); break;
    case 3: write_kernel<K, 3><<<(unsigned)tiles, kThreads, 0, stream>>>(rk, r_rows, nr, sk, s_rows, ns, lo, off, kind, o); break;
    default: write_kernel<K, 4><<<(unsigned)tiles, kThreads, 0, stream>>>(rk, r_rows, nr, sk, s_rows, ns, lo, off, kind, o); break;
    }
    return cudaGetLastError();
}

} // namespace

#define SL_K_SMJ_DEF(SUF, KT)                                                              \
    extern "C" cudaError_t sl_k_smj_count_##SUF(                                          \
        void *d_temp, size_t *temp_bytes, const KT *d_r_keys, int64_t nr,                 \
        const KT *d_s_keys, int64_t ns, int kind, unsigned long long *d_count,            \
        cudaStream_t stream)                                                              \
    {                                                                                     \
        return smj_count<KT>(d_temp, temp_bytes, d_r_keys, nr, d_s_keys, ns, kind, d_count, \
                             stream);                                                     \
    }                                                                                     \
    extern "C" cudaError_t sl_k_smj_write_##SUF(                                          \
        void *d_temp, size_t temp_bytes, const KT *d_r_keys, const void *d_r_rows,        \
        int64_t nr, const KT *d_s_keys, const void *d_s_rows, int64_t ns, int row_bytes,  \
        int kind, const sl_k_join_out_t *out, cudaStream_t stream)                        \
    {                                                                                     \
        return smj_write<KT>(d_temp, temp_bytes, d_r_keys, d_r_rows, nr, d_s_keys,        \
                             d_s_rows, ns, row_bytes, kind, out, stream);                 \
    }

SL_K_SMJ_DEF(k32, uint32_t)
SL_K_SMJ_DEF(k64, uint64_t)
