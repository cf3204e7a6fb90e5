/* String join keys on the GPU: hashes and the collision check (views and the gather of
 * output strings: columns/str_gather.cu). Contracts in sluice_k/join_str.h. */
#include "sluice_k/join_str.h"

namespace {

constexpr int kBlock = 256;

__host__ __device__ inline int64_t grid_for(int64_t n)
{
    int64_t g = (n + kBlock - 1) / kBlock;
    return g < 65535 * 32 ? g : 65535 * 32;
}

__device__ inline uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* Up to 8 bytes at p as a little-endian word (an aligned load when it can). */
__device__ inline uint64_t load_word(const unsigned char *p, uint32_t n)
{
    if (n == 8 && ((uintptr_t)p & 7) == 0)
        return *(const uint64_t *)p;
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Each 8-byte word mixed in turn, the length first: a different length or any different
 * byte changes the hash (up to 64-bit collisions, which the check catches). */
__device__ inline uint64_t hash_bytes(const char *s, uint32_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    uint64_t h = fmix64(0x9E3779B97F4A7C15ULL ^ len);
    for (uint32_t i = 0; i < len; i += 8) {
        uint32_t m = len - i < 8 ? len - i : 8;
        h = fmix64(h ^ (load_word(u + i, m) * 0xC2B2AE3D27D4EB4FULL)) + 0x165667B19E3779F9ULL;
    }
    return h;
}

__device__ inline uint64_t component_hash(const sl_k_keycols_t &kc, int side, int k, int64_t r)
{
    switch (kc.kind[k]) {
    case SL_K_KEY_B32: return fmix64(((const uint32_t *)kc.d[side][k])[r] + 0x51ED27ULL);
    case SL_K_KEY_B64: return fmix64(((const uint64_t *)kc.d[side][k])[r] ^ 0x2545F4914F6CDD1DULL);
    default: {
        sl_k_strview_t v = ((const sl_k_strview_t *)kc.d[side][k])[r];
        return hash_bytes(v.p, v.len);
    }
    }
}

__global__ void key_hash(sl_k_keycols_t kc, int side, int64_t n, uint64_t seed, int weak,
                         uint64_t *h)
{
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n;
         r += (int64_t)gridDim.x * blockDim.x) {
        uint64_t acc = seed;
        for (int k = 0; k < kc.n; k++)
            acc = fmix64(acc ^ component_hash(kc, side, k, r)) + (uint64_t)k;
        h[r] = weak ? acc & 0xFF : acc;
    }
}

__device__ inline bool component_equal(const sl_k_keycols_t &kc, int k, int sa, int64_t a,
                                       int sb, int64_t b)
{
    switch (kc.kind[k]) {
    case SL_K_KEY_B32:
        return ((const uint32_t *)kc.d[sa][k])[a] == ((const uint32_t *)kc.d[sb][k])[b];
    case SL_K_KEY_B64:
        return ((const uint64_t *)kc.d[sa][k])[a] == ((const uint64_t *)kc.d[sb][k])[b];
    default: {
        sl_k_strview_t x = ((const sl_k_strview_t *)kc.d[sa][k])[a];
        sl_k_strview_t y = ((const sl_k_strview_t *)kc.d[sb][k])[b];
        if (x.len != y.len)
            return false;
        for (uint32_t i = 0; i < x.len; i++)
            if (x.p[i] != y.p[i])
                return false;
        return true;
    }
    }
}

__global__ void key_collisions(sl_k_keycols_t kc, const uint64_t *h, const uint32_t *row,
                               int64_t n, uint32_t n0, unsigned *flag)
{
    for (int64_t i = 1 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (h[i] != h[i - 1])
            continue;
        uint32_t a = row[i - 1], b = row[i];
        int sa = a >= n0, sb = b >= n0;
        int64_t ra = sa ? a - n0 : a, rb = sb ? b - n0 : b;
        for (int k = 0; k < kc.n; k++) {
            if (!component_equal(kc, k, sa, ra, sb, rb)) {
                *flag = 1;
                break;
            }
        }
    }
}

} // namespace

extern "C" cudaError_t sl_k_key_hash(const sl_k_keycols_t *kc, int side, int64_t n, uint64_t seed,
                                     int weak, uint64_t *d_h, cudaStream_t stream)
{
    if (kc == NULL || kc->n < 1 || kc->n > SL_K_MAX_KEYS || side < 0 || side > 1 || n < 0 ||
        (n > 0 && d_h == NULL))
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    key_hash<<<(unsigned)grid_for(n), kBlock, 0, stream>>>(*kc, side, n, seed, weak, d_h);
    return cudaGetLastError();
}

extern "C" cudaError_t sl_k_key_collisions(const sl_k_keycols_t *kc, const uint64_t *d_h,
                                           const uint32_t *d_row, int64_t n, uint32_t n0,
                                           unsigned *d_flag, cudaStream_t stream)
{
    if (kc == NULL || kc->n < 1 || kc->n > SL_K_MAX_KEYS || n < 0 || d_flag == NULL)
        return cudaErrorInvalidValue;
    if (n < 2)
        return cudaSuccess;
    key_collisions<<<(unsigned)grid_for(n), kBlock, 0, stream>>>(*kc, d_h, d_row, n, n0, d_flag);
    return cudaGetLastError();
}
