/* Tests every ready-made plan file (plans/files) with its pipelines forced onto the GPU
 * against the same plan on the CPU: every output the same multiset of rows (integers
 * exactly, floats within 1e-4 relative), and every pipeline with a CUDA implementation
 * shown by the query's measurements (sl_query_explain after the run) to have run its
 * tasks on the GPU, so a silent fallback cannot compare the CPU with itself. Host-only
 * operators (the generators) run inside GPU pipelines here, so this also checks the
 * batches crossing between them. Fails where a GPU is expected and unusable (gpu_test.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuda/cuda_int.h"
#include "gpu_test.h"
#include "sl_test.h"

#define MAX_COLS 32

/* An output as rows of numbers (row-major), sorted so that outputs compare as multisets. */
struct rows {
    int64_t n;
    int n_cols;
    int is_float[MAX_COLS];
    long double *v;
    unsigned char *null;
};

static long double value_at(const struct sl_column *col, int64_t r)
{
    const void *d = col->data;
    switch (SL_TYPE_ID(col->type)) {
    case SL_TYPE_INT32: case SL_TYPE_DATE32: return ((const int32_t *)d)[r];
    case SL_TYPE_INT64: case SL_TYPE_TIMESTAMP: return ((const int64_t *)d)[r];
    case SL_TYPE_FLOAT32: return ((const float *)d)[r];
    case SL_TYPE_FLOAT64: return ((const double *)d)[r];
    case SL_TYPE_BOOL: case SL_TYPE_UINT8: return ((const uint8_t *)d)[r];
    case SL_TYPE_INT8: return ((const int8_t *)d)[r];
    case SL_TYPE_INT16: return ((const int16_t *)d)[r];
    case SL_TYPE_UINT16: return ((const uint16_t *)d)[r];
    case SL_TYPE_UINT32: return ((const uint32_t *)d)[r];
    case SL_TYPE_UINT64: return ((const uint64_t *)d)[r];
    case SL_TYPE_DECIMAL:
        return sl_type_width(col->type) == 8 ? ((const int64_t *)d)[r]
                                             : (long double)((const __int128 *)d)[r];
    default:
        fail_msg("column of type %s: not compared here", sl_type_name(col->type));
        return 0;
    }
}

static void rows_read(sl_table_t *t, struct rows *out)
{
    memset(out, 0, sizeof *out);
    int64_t total = 0;
    for (int64_t b = 0; b < sl_table_num_batches(t); b++)
        total += sl_batch_num_rows(sl_table_batch(t, b));
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *batch = sl_table_batch(t, b);
        int nc = sl_batch_num_columns(batch);
        assert_true(nc <= MAX_COLS);
        if (!out->v) {
            out->n_cols = nc;
            out->v = calloc((size_t)(total ? total : 1) * nc, sizeof *out->v);
            out->null = calloc((size_t)(total ? total : 1) * nc, 1);
            assert_non_null(out->v);
            assert_non_null(out->null);
        }
        assert_int_equal(nc, out->n_cols);
        for (int c = 0; c < nc; c++) {
            struct sl_column col;
            SL_ASSERT_OK(sl_batch_column(batch, c, &col));
            out->is_float[c] = col.type == SL_TYPE_FLOAT32 || col.type == SL_TYPE_FLOAT64;
            for (int64_t i = 0; i < col.length; i++) {
                int64_t r = col.offset + i, at = (out->n + i) * nc + c;
                if (col.validity && !(col.validity[r >> 3] >> (r & 7) & 1))
                    out->null[at] = 1;
                else
                    out->v[at] = value_at(&col, r);
            }
        }
        out->n += sl_batch_num_rows(batch);
    }
}

static const struct rows *sorting; /* qsort's context */

/* Nulls first; exact columns before float ones, so float noise cannot reorder rows
 * whose exact columns differ. */
static int row_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    int nc = sorting->n_cols;
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < nc; c++) {
            if (sorting->is_float[c] != pass)
                continue;
            int nx = sorting->null[x * nc + c], ny = sorting->null[y * nc + c];
            if (nx != ny)
                return ny - nx;
            long double vx = sorting->v[x * nc + c], vy = sorting->v[y * nc + c];
            if (!nx && vx != vy)
                return vx < vy ? -1 : 1;
        }
    return 0;
}

static int64_t *rows_order(const struct rows *r)
{
    int64_t *ord = malloc((size_t)(r->n ? r->n : 1) * sizeof *ord);
    assert_non_null(ord);
    for (int64_t i = 0; i < r->n; i++)
        ord[i] = i;
    sorting = r;
    qsort(ord, (size_t)r->n, sizeof *ord, row_cmp);
    return ord;
}

/* Prints up to 5 differing rows; returns how many differ. */
static int64_t rows_diff(const char *what, const struct rows *want, const struct rows *got)
{
    if (want->n != got->n || want->n_cols != got->n_cols) {
        printf("MISMATCH %s: %lld rows x %d columns on the GPU, %lld x %d on the CPU\n", what,
               (long long)got->n, got->n_cols, (long long)want->n, want->n_cols);
        return 1;
    }
    int64_t *ow = rows_order(want), *og = rows_order(got), bad = 0;
    int nc = want->n_cols;
    for (int64_t i = 0; i < want->n; i++)
        for (int c = 0; c < nc; c++) {
            int64_t a = ow[i] * nc + c, b = og[i] * nc + c;
            long double w = want->v[a], g = got->v[b];
            long double tol = want->is_float[c] ? 1e-4L * (fabsl(w) + 1) : 0;
            if (want->null[a] == got->null[b] && (want->null[a] || fabsl(g - w) <= tol))
                continue;
            if (bad++ < 5)
                printf("MISMATCH %s sorted row %lld column %d: GPU %s%.17Lg, CPU %s%.17Lg\n",
                       what, (long long)i, c, got->null[b] ? "NULL " : "", g,
                       want->null[a] ? "NULL " : "", w);
            break;
        }
    free(ow);
    free(og);
    return bad;
}

static void rows_free(struct rows *r)
{
    free(r->v);
    free(r->null);
}

static const char *plans_dir(void)
{
    struct stat st;
    return stat(SL_PLANS_DIR, &st) == 0 ? SL_PLANS_DIR : "plans/files";
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

/* Every pipeline that has a CUDA implementation ran its tasks on the GPU (the run's
 * measurements), and at least one pipeline has one. */
static void assert_ran_on_gpu(sl_query_t *q, const char *file)
{
    const struct sl_explain *ex;
    SL_ASSERT_OK(sl_query_explain(q, &ex));
    assert_int_equal(ex->measured, 1);
    int capable = 0;
    for (int i = 0; i < ex->n_pipelines; i++) {
        const struct sl_explain_pipeline *p = &ex->pipelines[i];
        if (!p->gpu_capable)
            continue;
        capable++;
        printf("%s pipeline %d: device %d, %lld of %lld tasks on the GPU (%s)\n", file, p->id,
               p->device_measured, (long long)p->gpu_tasks_measured,
               (long long)p->tasks_measured, p->why);
        /* A source that finalized on the host hands its tasks to the CPU workers. */
        if (strstr(p->why, "source finalized on the host"))
            continue;
        if (p->device_measured < 0 || (p->tasks_measured > 0 && p->gpu_tasks_measured == 0))
            fail_msg("%s: pipeline %d has a CUDA implementation but ran on the CPU (%s)", file,
                     p->id, p->why);
    }
    if (!capable)
        fail_msg("%s: no pipeline can run on the GPU; nothing compared", file);
}

/* Runs the plan file on e; reads each output (in node order) into out[]; on the GPU
 * engine, checks that the GPU ran it. */
static int run_file(sl_engine_t *e, int on_gpu, const char *file, struct rows *out,
                    int max_out, char names[][32])
{
    char path[512];
    if (strchr(file, '/')) /* a plan of these tests, from the repository root */
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "%s/%s", plans_dir(), file);
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    if (sl_plan_parse(p, sl_test_read_text(path), path) != SL_OK)
        fail_msg("%s", sl_plan_errmsg(p));
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    if (sl_query_run(q) != SL_OK)
        fail_msg("%s: %s", file, sl_query_errmsg(q));
    if (on_gpu)
        assert_ran_on_gpu(q, file);
    int n = 0;
    for (int i = 0; i < sl_plan_num_outputs(p) && n < max_out; i++) {
        const char *name = sl_plan_output_at(p, i, NULL);
        sl_table_t *t, *h;
        SL_ASSERT_OK(sl_query_result(q, name, &t));
        SL_ASSERT_OK(sl_table_to_host(t, &h));
        rows_read(h, &out[n]);
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
    struct rows want[8], got[8];
    char wn[8][32], gn[8][32];
    int nw = run_file(cpu, 0, file, want, 8, wn), ng = run_file(gpu, 1, file, got, 8, gn);
    assert_int_equal(ng, nw);
    assert_true(nw > 0);
    int64_t bad = 0;
    for (int o = 0; o < nw; o++) {
        assert_string_equal(gn[o], wn[o]);
        printf("%s %s: %lld rows on the CPU, %lld on the GPU\n", file, wn[o],
               (long long)want[o].n, (long long)got[o].n);
        char what[96];
        snprintf(what, sizeof what, "%s output %s", file, wn[o]);
        bad += rows_diff(what, &want[o], &got[o]);
        rows_free(&want[o]);
        rows_free(&got[o]);
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
    NEED_GPU();
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
/* Cross joins with one- and two-row right sides, a NULL scalar among them. */
SL_TEST(cross_join) { plan_case("tests/gpu/cross_join.plan"); }
