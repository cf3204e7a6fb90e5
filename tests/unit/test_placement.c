/* Automatic placement's estimate (runtime/placement.c, sl__place_estimate) on made-up
 * costs, as a stubbed cost history would give them: a CPU pipeline of fewer tasks than
 * workers runs on that many only, a GPU task pays its fixed cost, copies overlap kernels
 * across morsels, and the two sides of `bench mixed`'s small join, summed as their sink's
 * inputs are, favour the GPU (issue 23: with the CPU's time divided by all 16 workers
 * they stayed on the CPU, and auto took up to 1.14x the forced GPU's time). */
#include <math.h>

#include "exec_int.h"
#include "internal.h"
#include "sl_test.h"

static struct sl__place_estimate est(double rows, double cpu_ns, double gpu_ns, int threads)
{
    struct sl__place_input in = {
        .rows = rows,
        .bytes = rows * 8, /* a key and a payload of 4 bytes */
        .cpu_ns_per_row = cpu_ns,
        .gpu_ns_per_row = gpu_ns,
        .morsel_rows_cpu = 122880,
        .morsel_rows_gpu = 16 << 20,
        .threads = threads,
        .link_gbps = 50,
    };
    struct sl__place_estimate e = {.known = false};
    sl__place_estimate(&in, &e);
    assert_true(e.known);
    return e;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-6 * fabs(b) + 1e-9;
}

SL_TEST(cpu_time_is_shared_by_the_tasks_workers_only)
{
    double task = sl__cost_task_ns(SL_DEVICE_CPU);
    /* one task: one worker, however many there are */
    struct sl__place_estimate one = est(16384, 24, 0.3, 16);
    assert_true(near(one.cpu_ns, 16384 * 24 + task));
    /* 9 morsels of up to 122,880 rows on 16 workers: 9 run at once */
    struct sl__place_estimate nine = est(1e6, 24, 0.3, 16);
    assert_true(near(nine.cpu_ns, (1e6 * 24 + 9 * task) / 9));
    /* 69 morsels on 16 workers: all 16 */
    struct sl__place_estimate many = est(8388608, 24, 0.3, 16);
    assert_true(near(many.cpu_ns, (8388608.0 * 24 + 69 * task) / 16));
    /* and with fewer workers than tasks, the workers */
    struct sl__place_estimate two = est(1e6, 24, 0.3, 2);
    assert_true(near(two.cpu_ns, (1e6 * 24 + 9 * task) / 2));
}

SL_TEST(gpu_time_has_a_fixed_cost_and_overlaps_copies)
{
    double task = sl__cost_task_ns(SL_DEVICE_CUDA);
    /* 1,024 rows: the fixed cost dominates; one morsel: copy then kernels */
    struct sl__place_estimate e = est(1024, 24, 0.3, 16);
    double xfer = 1024 * 8 / 50.0;
    assert_true(near(e.gpu_ns, 1024 * 0.3 + task + xfer));
    assert_true(near(e.gpu_ov, 1024 * 0.3 + task));
    /* 2^26 rows in 4 chunks of 16 Mi: the longer of copies and kernels + 1/4 the other */
    double rows = 67108864;
    struct sl__place_estimate big = est(rows, 24, 0.3, 16);
    double work = rows * 0.3 + 4 * task, copy = rows * 8 / 50.0;
    double lo = work < copy ? work : copy, hi = work < copy ? copy : work;
    assert_true(near(big.gpu_ns, hi + lo / 4));
    assert_true(near(big.gpu_ov, hi));
}

/* The sides of a sink go where their summed estimates are lower (placement.c,
 * sibling_sums); 1 when that is the GPU. */
static int join_on_gpu(double build_rows, double probe_rows, double cpu_ns, double gpu_ns)
{
    struct sl__place_estimate b = est(build_rows, cpu_ns, gpu_ns, 16);
    struct sl__place_estimate p = est(probe_rows, cpu_ns, gpu_ns, 16);
    return b.gpu_ns + p.gpu_ns < b.cpu_ns + p.cpu_ns;
}

SL_TEST(bench_mixed_small_join_goes_to_the_gpu)
{
    /* gen.keys>join: the cost functions' 24 ns a row on a CPU thread; on the H100 about
     * 0.3 ns a row measured on the large join. 2^22, 2^24 and 2^26 rows. */
    assert_true(join_on_gpu(1024, 16384, 24, 0.3));
    assert_true(join_on_gpu(4096, 65536, 24, 0.3));
    assert_true(join_on_gpu(16384, 262144, 24, 0.3));
    /* a 256-row build alone would go to the CPU (a GPU task's fixed cost), paired with
     * its probe it goes to the GPU */
    struct sl__place_estimate b = est(256, 24, 0.3, 16);
    assert_true(b.cpu_ns < b.gpu_ns);
    assert_true(join_on_gpu(256, 16384, 24, 0.3));
}

SL_TEST(cpu_wins_where_it_should)
{
    /* a few rows: a GPU task's fixed cost is more than the whole CPU work */
    assert_false(join_on_gpu(16, 100, 24, 0.3));
    /* a pipeline the GPU runs badly (ns a row above the CPU's / 16 workers) */
    struct sl__place_estimate e = est(1 << 24, 2, 1, 16);
    assert_true(e.cpu_ns < e.gpu_ns);
    /* and one bound by the copies: 8 bytes a row over 1 GB/s against 0.5 ns a row on 16 */
    struct sl__place_input in = {.rows = 1 << 24, .bytes = 8.0 * (1 << 24), .cpu_ns_per_row = 0.5,
                                 .gpu_ns_per_row = 0.01, .morsel_rows_cpu = 122880,
                                 .morsel_rows_gpu = 16 << 20, .threads = 16, .link_gbps = 1};
    sl__place_estimate(&in, &e);
    assert_true(e.cpu_ns < e.gpu_ns);
}

SL_TEST(gpu_morsels_fit_the_budget)
{
    /* TPC-H lineitem in pinned host memory: about 110 bytes a row by its schema, four GPU
     * tasks in flight (issue 18: 16 Mi-row morsels failed 12 of 22 queries at SF 10 with
     * gpu_mem=256Mi). */
    int64_t opt = (int64_t)16 << 20, row = 110, mib = (int64_t)1 << 20;
    int64_t m = sl__gpu_budget_morsel_rows(256 * mib, row, 4, opt);
    assert_true(m < opt);
    /* the tasks in flight, each with its input and what its stages make, fit ... */
    assert_true(m * row * SL__GPU_MORSEL_COPIES * 4 <= 256 * mib);
    /* ... and the morsels are no smaller than they must be */
    assert_true((m + 1) * row * SL__GPU_MORSEL_COPIES * 4 > 256 * mib);
    /* a larger budget, larger morsels; the default budget (90% of an H100's) leaves the
     * option's size alone */
    assert_true(sl__gpu_budget_morsel_rows(1024 * mib, row, 4, opt) > m);
    assert_int_equal(sl__gpu_budget_morsel_rows((int64_t)72 << 30, row, 4, opt), opt);
    /* nothing left, or no depth or row size known: the floor, never 0 rows */
    assert_int_equal(sl__gpu_budget_morsel_rows(0, row, 4, opt), SL__GPU_MORSEL_MIN);
    assert_int_equal(sl__gpu_budget_morsel_rows(-5, row, 4, opt), SL__GPU_MORSEL_MIN);
    assert_true(sl__gpu_budget_morsel_rows(256 * mib, 0, 0, opt) > 0);
    /* and never above the option, however small it is set */
    assert_int_equal(sl__gpu_budget_morsel_rows(256 * mib, row, 4, 1000), 1000);
}
