/* Device helpers of persistent-grid kernels (CUDA only, included by kernels/): a block
 * takes work units from a global counter until none is left, and finds the partition a
 * unit belongs to from the partitions' first units (unit_off, parts + 1 entries, the
 * last being the total). Used by the partitioned hash joins (kernels/join). */
#ifndef SLUICE_K_PERSISTENT_CUH
#define SLUICE_K_PERSISTENT_CUH

#include <stdint.h>

namespace sluice_k {

/* Takes the block's next unit u and its partition p (the largest p with
 * unit_off[p] <= u). Warp 0 does it, by a 32-way search: 3 dependent loads for 2^15
 * partitions instead of 15; sh_unit and sh_part are the caller's __shared__ words that
 * hand the result to the block. Every thread of the block calls it (it synchronizes the
 * block); false when no unit is left. The caller synchronizes the block again before it
 * calls it next (sh_unit is rewritten). */
__device__ __forceinline__ bool claim_unit(unsigned long long *work, const int64_t *unit_off,
                                           int64_t parts, int64_t total_units, int64_t &sh_unit,
                                           int64_t &sh_part, int64_t &u_out, int64_t &p_out)
{
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        int64_t u = 0;
        if (lane == 0)
            u = (int64_t)atomicAdd(work, 1ull);
        u = __shfl_sync(0xffffffffu, u, 0);
        int64_t lo = 0, hi = parts;
        if (u < total_units) {
            while (lo < hi) {
                const int64_t span = hi - lo;
                const int64_t q = lo + (span * (lane + 1) + 31) / 32; /* in (lo, hi] */
                const unsigned m = __ballot_sync(0xffffffffu, unit_off[q] <= u);
                if (m == 0) {
                    hi = lo + (span + 31) / 32 - 1;
                } else {
                    const int L = 31 - __clz(m);
                    const int64_t qL = __shfl_sync(0xffffffffu, q, L);
                    const int64_t qN = __shfl_sync(0xffffffffu, q, L < 31 ? L + 1 : 31);
                    lo = qL;
                    if (L < 31)
                        hi = qN - 1;
                }
            }
        }
        if (lane == 0) {
            sh_unit = u;
            sh_part = lo;
        }
    }
    __syncthreads();
    u_out = sh_unit;
    p_out = sh_part;
    return u_out < total_units;
}

} // namespace sluice_k

#endif /* SLUICE_K_PERSISTENT_CUH */
