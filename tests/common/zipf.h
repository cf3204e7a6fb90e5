/* Zipf-distributed ranks for tests: the inverse of the CDF over [0, k) by binary search,
 * each draw from the caller's random stream (so each test keeps its own seed). */
#ifndef SLUICE_TESTS_ZIPF_H
#define SLUICE_TESTS_ZIPF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* n ranks in [0, k), rank i drawn with weight 1 / (i + 1)^z; 0 if out of memory. */
static inline int sl_test_zipf_ranks(int64_t *out, int64_t n, int64_t k, double z,
                                     uint64_t (*rnd)(void))
{
    double *cdf = malloc((size_t)k * sizeof *cdf), s = 0;
    if (!cdf)
        return 0;
    for (int64_t i = 0; i < k; i++)
        cdf[i] = (s += z == 1.0 ? 1.0 / (double)(i + 1) : 1.0 / pow((double)(i + 1), z));
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(rnd() >> 11) / 9007199254740992.0 * s;
        int64_t lo = 0, hi = k - 1;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (cdf[mid] < u)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[i] = lo;
    }
    free(cdf);
    return 1;
}

#endif
