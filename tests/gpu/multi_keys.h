/* Keys for the multi-device tests (test_gpu_multi.c, test_gpu_multi_plan.c): a
 * splitmix64 stream and Zipf(1.0) ranks drawn from it. */
#ifndef SLUICE_TESTS_MULTI_KEYS_H
#define SLUICE_TESTS_MULTI_KEYS_H

#include <stdint.h>
#include <stdlib.h>

#include "sl_test.h"
#include "zipf.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Zipf(1.0) ranks over [0, k). */
static void zipf_keys(int64_t *out, int64_t n, int64_t k)
{
    assert_true(sl_test_zipf_ranks(out, n, k, 1.0, rnd));
}

#endif /* SLUICE_TESTS_MULTI_KEYS_H */
