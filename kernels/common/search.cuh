/* Binary searches shared by kernels. */
#pragma once

#include <cstdint>

namespace sl_search {

/* The last index p in [0, n) with starts[p] <= i, for non-decreasing starts with
 * starts[0] <= i: the segment (partition, slice) holding item i when segment p begins
 * at starts[p]. Among equal starts (empty segments) the last one wins, which is the
 * non-empty segment. */
template <typename I>
__device__ inline I last_at_or_below(const int64_t *starts, I n, int64_t i)
{
    I lo = 0, hi = n - 1;
    while (lo < hi) {
        I mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

} // namespace sl_search
