/* Tests the sort's GPU sink rule for host batches (operators/sort/sort_sink.c,
 * sl__sort_sink_upload), plain C: a sink is simulated over k morsels of b bytes each,
 * its uploads taking the budget they use. By default (auto) an input that could not
 * sort in the budget (3 x its bytes + 16 MiB) uploads nothing, at every budget, so the
 * out-of-core plan does not depend on what the sink uploaded (issue 23); one that fits
 * uploads every batch, as before. The old rule (upload) uploads while 3 x what went up
 * fits, so its uploads grow with the budget (what made 1/2 slower than 1/4). */
#include "sl_test.h"
#include "sort/sort_op.h"

#define MIB ((int64_t)1 << 20)

/* Bytes the sink uploads of k batches of b bytes under `budget`; *first_host: the batch
 * that stopped the uploads (k: none did). After a refusal every later batch stays on
 * the host (the sink's sink_host flag). */
static int64_t simulate(int64_t b, int64_t k, int64_t budget, int mode, int64_t *first_host)
{
    int64_t up = 0;
    *first_host = k;
    for (int64_t i = 0; i < k; i++) {
        if (!sl__sort_sink_upload(b, k, budget - up, up, mode)) {
            *first_host = i;
            break;
        }
        up += b;
    }
    return up;
}

SL_TEST(sink_auto_keeps_host_when_input_cannot_fit)
{
    int64_t fh;
    /* the ooc.sort benchmarks: 2^28 pairs, 256 morsels of 8 MiB, at 1/2, 1/4 and 1/16 */
    const int64_t budgets[] = {1024 * MIB, 512 * MIB, 128 * MIB};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(simulate(8 * MIB, 256, budgets[i], SL__SORT_SINK_AUTO, &fh), 0);
        assert_int_equal(fh, 0);
    }
    /* the old rule: uploads grow with the budget (about a third of it) */
    int64_t up1 = simulate(8 * MIB, 256, 1024 * MIB, SL__SORT_SINK_UPLOAD, &fh);
    int64_t up2 = simulate(8 * MIB, 256, 512 * MIB, SL__SORT_SINK_UPLOAD, &fh);
    int64_t up16 = simulate(8 * MIB, 256, 128 * MIB, SL__SORT_SINK_UPLOAD, &fh);
    assert_true(up1 > up2 && up2 > up16 && up16 > 0);
    assert_true(3 * up1 + 16 * MIB <= 1024 * MIB && 3 * (up1 + 8 * MIB) + 16 * MIB > 1024 * MIB);
}

SL_TEST(sink_uploads_what_fits)
{
    int64_t fh;
    /* 64 batches of 1 MiB: 3 x 64 + 16 = 208 MiB; both rules upload all at 256 MiB */
    for (int mode = 0; mode < 2; mode++) {
        assert_int_equal(simulate(MIB, 64, 256 * MIB, mode, &fh), 64 * MIB);
        assert_int_equal(fh, 64);
        assert_int_equal(simulate(MIB, 64, 208 * MIB, mode, &fh), 64 * MIB);
    }
    /* one MiB short: auto uploads nothing, upload all but the last batch */
    assert_int_equal(simulate(MIB, 64, 207 * MIB, SL__SORT_SINK_AUTO, &fh), 0);
    assert_int_equal(simulate(MIB, 64, 207 * MIB, SL__SORT_SINK_UPLOAD, &fh), 63 * MIB);
    assert_int_equal(fh, 63);
    /* one morsel (or a count of 0): the batch alone decides */
    assert_int_equal(sl__sort_sink_upload(MIB, 0, 19 * MIB, 0, SL__SORT_SINK_AUTO), 1);
    assert_int_equal(sl__sort_sink_upload(MIB, 1, 18 * MIB, 0, SL__SORT_SINK_AUTO), 0);
}

/* Never more uploaded at a larger budget once the input cannot fit there (auto): what
 * the out-of-core sort reads from the GPU is the same (none) at every such budget; and
 * an input that fits uploads all of it. Budgets 1..4096 MiB, inputs of 1..512 batches. */
SL_TEST(sink_auto_monotone)
{
    const int64_t sizes[] = {64 * 1024, MIB, 3 * MIB, 8 * MIB};
    for (int s = 0; s < 4; s++)
        for (int64_t k = 1; k <= 512; k = k * 3 / 2 + 1)
            for (int64_t m = 1; m <= 4096; m = m * 5 / 4 + 1) {
                int64_t fh, budget = m * MIB, b = sizes[s];
                int64_t up = simulate(b, k, budget, SL__SORT_SINK_AUTO, &fh);
                int fits = 3 * b * k + 16 * MIB <= budget;
                assert_int_equal(up, fits ? b * k : 0);
                assert_int_equal(fh, fits ? k : 0);
                /* the old rule: at least as much, and the same when it all fits */
                int64_t old = simulate(b, k, budget, SL__SORT_SINK_UPLOAD, &fh);
                assert_true(old >= up);
                if (fits)
                    assert_int_equal(old, up);
            }
}

/* A morsel count that underestimates the input (more batches than morsels, or later
 * batches larger than the first): auto's estimate lets each batch through, and the old
 * rule's bound, 3 x up + 16 MiB within the budget, is what stops the uploads. */
SL_TEST(sink_bound_holds_when_estimate_is_low)
{
    int64_t up = 0, budget = 100 * MIB, stop = -1;
    /* 2 morsels counted, 8 batches: 3 x 8 x 2 + 16 = 64 MiB fits, so the estimate never
     * refuses one; 3 x 32 + 16 = 112 MiB does not, so the fourth batch stays */
    const int64_t sizes[] = {8 * MIB, 8 * MIB, 8 * MIB, 8 * MIB, MIB, MIB, MIB, MIB};
    for (int i = 0; i < 8; i++) {
        assert_true(3 * sizes[i] * 2 + 16 * MIB <= budget); /* the estimate passes */
        if (!sl__sort_sink_upload(sizes[i], 2, budget - up, up, SL__SORT_SINK_AUTO)) {
            stop = i;
            break;
        }
        up += sizes[i];
    }
    assert_int_equal(stop, 3);
    assert_int_equal(up, 24 * MIB);
    assert_true(3 * up + 16 * MIB <= budget);
    /* batches growing past the first's estimate: 1 MiB x 6 morsels passes, then 4 MiB x 6
     * (88 MiB) too, then 8 MiB x 6 (160 MiB) refuses: the estimate stops it there */
    const int64_t grow[] = {MIB, 4 * MIB, 8 * MIB, 8 * MIB, 8 * MIB, 8 * MIB};
    up = 0;
    stop = -1;
    for (int i = 0; i < 6; i++) {
        if (!sl__sort_sink_upload(grow[i], 6, budget - up, up, SL__SORT_SINK_AUTO)) {
            stop = i;
            break;
        }
        up += grow[i];
    }
    assert_int_equal(stop, 2);
    assert_int_equal(up, 5 * MIB);
    assert_true(3 * up + 16 * MIB <= budget);
}
