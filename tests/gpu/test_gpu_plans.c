/* Tests every ready-made plan file (plans/files) with its pipelines forced onto the GPU
 * against the same plan on the CPU: the same outputs (row counts and per-column sums:
 * integers exactly, floats within 1e-4 relative). Host-only operators (the generators)
 * run inside GPU pipelines here, so this also checks the batches crossing between them.
 * Skipped without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuda/cuda_int.h"
#include "sl_test.h"

#define MAX_COLS 32

struct summary {
    int64_t rows;
    int n_cols;
    long double sums[MAX_COLS];
    int is_float[MAX_COLS];
};

static void summarize(sl_table_t *t, struct summary *s)
{
    memset(s, 0, sizeof *s);
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *batch = sl_table_batch(t, b);
        s->n_cols = sl_batch_num_columns(batch);
        assert_true(s->n_cols <= MAX_COLS);
        for (int c = 0; c < s->n_cols; c++) {
            struct sl_column col;
            SL_ASSERT_OK(sl_batch_column(batch, c, &col));
            s->is_float[c] = col.type == SL_TYPE_FLOAT32 || col.type == SL_TYPE_FLOAT64;
            for (int64_t i = 0; i < col.length; i++) {
                int64_t r = col.offset + i;
                if (col.validity && !(col.validity[r >> 3] >> (r & 7) & 1))
                    continue;
                s->sums[c] += col.type == SL_TYPE_INT32   ? ((const int32_t *)col.data)[r]
                              : col.type == SL_TYPE_INT64 ? ((const int64_t *)col.data)[r]
                              : col.type == SL_TYPE_FLOAT32
                                  ? ((const float *)col.data)[r]
                                  : ((const double *)col.data)[r];
            }
        }
        s->rows += sl_batch_num_rows(batch);
    }
}

static const char *plans_dir(void)
{
    struct stat st;
    return stat(SL_PLANS_DIR, &st) == 0 ? SL_PLANS_DIR : "plans/files";
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static sl_engine_t *engine(enum sl_placement pl)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = 2;
    cfg.placement = pl;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_test_engine_open(&e, &cfg));
    return e;
}

/* Runs the plan file on e; fills one summary per output (in the order they were added). */
static int run_file(sl_engine_t *e, const char *file, struct summary *out, int max_out,
                    char names[][32])
{
    char path[512];
    if (strchr(file, '/')) /* a plan of these tests, from the repository root */
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "%s/%s", plans_dir(), file);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    if (sl_plan_parse(p, read_text(path), path) != SL_OK)
        fail_msg("%s", sl_plan_errmsg(p));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    if (sl_query_run(q) != SL_OK)
        fail_msg("%s: %s", file, sl_query_errmsg(q));
    int n = 0;
    for (int i = 0; i < sl_plan_num_outputs(p) && n < max_out; i++) {
        const char *name = sl_plan_output_at(p, i, NULL);
        sl_table_t *t, *h;
        SL_ASSERT_OK(sl_query_result(q, name, &t));
        SL_ASSERT_OK(sl_table_to_host(t, &h));
        summarize(h, &out[n]);
        snprintf(names[n], 32, "%s", name);
        sl_table_unref(h);
        sl_table_unref(t);
        n++;
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return n;
}

/* Every mismatch is printed before the case fails, to show which output went wrong. */
static void same_on_gpu(const char *file)
{
    sl_engine_t *cpu = engine(SL_PLACE_CPU), *gpu = engine(SL_PLACE_GPU);
    struct summary want[8], got[8];
    char wn[8][32], gn[8][32];
    int nw = run_file(cpu, file, want, 8, wn), ng = run_file(gpu, file, got, 8, gn);
    assert_int_equal(ng, nw);
    assert_true(nw > 0);
    int bad = 0;
    for (int o = 0; o < nw; o++) {
        assert_string_equal(gn[o], wn[o]);
        printf("%s %s: %lld rows on the CPU, %lld on the GPU\n", file, wn[o],
               (long long)want[o].rows, (long long)got[o].rows);
        bad += got[o].rows != want[o].rows || got[o].n_cols != want[o].n_cols;
        for (int c = 0; c < want[o].n_cols && c < got[o].n_cols; c++) {
            long double w = want[o].sums[c], g = got[o].sums[c];
            long double tol = want[o].is_float[c] ? 1e-4L * (fabsl(w) + 1) : 0;
            if (fabsl(g - w) > tol) {
                printf("MISMATCH %s output %s column %d: GPU sums to %.17Lg, CPU to %.17Lg\n",
                       file, wn[o], c, g, w);
                bad++;
            }
        }
    }
    assert_int_equal(bad, 0);
    struct sl_mem_stats ms = SL_MEM_STATS_INIT;
    sl_engine_mem_stats(gpu, &ms);
    assert_int_equal(ms.gpu_in_use, 0);
    sl_engine_close(cpu);
    sl_engine_close(gpu);
}

static void plan_case(const char *file)
{
    sl_test_trap_crashes();
    if (sl__cuda_device_count() == 0)
        SL_SKIP("no GPU");
    same_on_gpu(file);
}

SL_TEST(demo) { plan_case("demo.plan"); }
SL_TEST(join_narrow) { plan_case("join_narrow.plan"); }
SL_TEST(join_wide) { plan_case("join_wide.plan"); }
SL_TEST(join_skew) { plan_case("join_skew.plan"); }
SL_TEST(join_match_ratio) { plan_case("join_match_ratio.plan"); }
SL_TEST(join_8byte) { plan_case("join_8byte.plan"); }
SL_TEST(star_join) { plan_case("star_join.plan"); }
SL_TEST(groupby) { plan_case("groupby.plan"); }
SL_TEST(sort) { plan_case("sort.plan"); }
SL_TEST(kmeans) { plan_case("kmeans.plan"); }
SL_TEST(sequence_sum) { plan_case("sequence_sum.plan"); }
SL_TEST(star_join_step1) { plan_case("tests/gpu/star_j1.plan"); }
SL_TEST(star_join_step2) { plan_case("tests/gpu/star_j2.plan"); }
SL_TEST(star_join_step3) { plan_case("tests/gpu/star_j3.plan"); }
/* Shared nodes: kept on the host, read back by GPU pipelines. */
SL_TEST(shared_nodes) { plan_case("tests/gpu/shared_nodes.plan"); }
