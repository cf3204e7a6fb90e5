/* Keys for the multi-device tests (test_gpu_multi.c, test_gpu_multi_plan.c): a
 * splitmix64 stream and Zipf(1.0) ranks drawn from it. */
#ifndef SLUICE_TESTS_MULTI_KEYS_H
#define SLUICE_TESTS_MULTI_KEYS_H

#include <stdint.h>
#include <stdlib.h>

#include "sl_test.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Zipf(1.0) ranks over [0, k): the inverse of the CDF by binary search. */
static void zipf_keys(int64_t *out, int64_t n, int64_t k)
{
    double *cdf = malloc((size_t)k * sizeof *cdf), s = 0;
    assert_non_null(cdf);
    for (int64_t i = 0; i < k; i++)
        cdf[i] = (s += 1.0 / (double)(i + 1));
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
}

#endif /* SLUICE_TESTS_MULTI_KEYS_H */
