/* The sort's GPU sink's rule for host batches (sort_cuda.c, sl__sort_gpu_sink_can_run),
 * as a function of what the sink knows: plain C, every build, so that its rule is
 * unit-tested on the CPU (tests/unit/sort/test_sort_sink.c). */
#include "sort_op.h"

#define MARGIN ((int64_t)16 << 20) /* what the in-GPU sort's small buffers may take */

/* Issue 23: with the input known not to fit (auto), nothing goes up, whatever the
 * budget: the out-of-core sort then reads every row from the host at every budget, so
 * its plan (the runs' size, the buckets) is a function of the budget alone, non-
 * decreasing in it. Uploading while 3 x up fits (upload, as before session 20) made
 * the bytes on the GPU before the finalize grow with the budget, alone on the link:
 * 2^28 pairs ran 2 to 4 ms slower at 1 GiB than at 512 MiB, the same plan otherwise. */
int sl__sort_sink_upload(int64_t bytes, int64_t morsels, int64_t left, int64_t up, int mode)
{
    int64_t budget = left + up; /* the budget before the sink's uploads */
    if (mode == SL__SORT_SINK_AUTO && 3 * bytes * (morsels > 1 ? morsels : 1) + MARGIN > budget)
        return 0;
    /* both: in, out and CUB's scratch for what went up, this batch included, must fit
     * (a morsel count that underestimates the input: past it, later batches stay) */
    return 3 * (up + bytes) + MARGIN <= budget;
}
