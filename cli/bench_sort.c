/* sluice bench sort: sorts N random keys (int32 or int64) carrying P payload columns
 * of the key's width (docs/BENCH_PROTOCOL.md, "Sort"). --resident device copies the
 * input to GPU 0 before timing and leaves the result there (the check reads it back after
 * the timed span); GPU runs report the operator's phases (gpu_concat, gpu_sort,
 * gpu_gather: CUDA events) and peak_device_bytes. Keys and payloads are generated outside
 * the timed span; each repeat times one query (create, run, result) of table ->
 * sort(by=k) -> output from the same input table. The checksum covers every output
 * value; the output is checked to be sorted within each batch and to hold the input's
 * values. The floor (bench_floor.c) is that of the residency: every row read and written
 * once in host memory (CPU), in device memory (--resident device), or sent up and back
 * down the link (host-resident GPU runs). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int usage(void)
{
    printf("usage: sluice bench sort [--rows N] [--key-bytes 4|8] [--payloads P] [--desc]\n"
           "                         [--repeat R] [--seed S] [--threads N]\n"
           "                         [--placement cpu|gpu|auto] [--resident host|device]\n"
           "                         [--pageable] [--gpu-mem BYTES] [--engine-time] [--json]\n"
           "Sorts N random keys with P payload columns of the key's width (defaults: 2^24,\n"
           "4, 1, 5 repeats after one warm-up) and prints the protocol's JSON line. GPU runs\n"
           "on host-resident input pin it first (unless --pageable) and print the transfer\n"
           "floor (bytes up and down over the link bandwidths measured in the same run);\n"
           "--gpu-mem below the data sorts out of core (docs/OUT_OF_CORE.md). --engine-time\n"
           "adds the host's time in query creation, run and result as phases and prints the\n"
           "last repeat's query profile on stderr.\n");
    return 0;
}

/* 1 if every batch of t is sorted by column 0 (ascending unless desc). */
static int batches_sorted(sl_table_t *t, int desc)
{
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        struct sl_column c;
        sl_batch_column(sl_table_batch(t, b), 0, &c);
        for (int64_t i = 1; i < c.length; i++) {
            int64_t x, y;
            if (c.type == SL_TYPE_INT32) {
                x = ((const int32_t *)c.data)[c.offset + i - 1];
                y = ((const int32_t *)c.data)[c.offset + i];
            } else {
                x = ((const int64_t *)c.data)[c.offset + i - 1];
                y = ((const int64_t *)c.data)[c.offset + i];
            }
            if (desc ? x < y : x > y)
                return 0;
        }
    }
    return 1;
}

struct sort_check {
    int64_t n;
    uint64_t in_sum;
    int desc;
};

static int check_host(const struct sort_check *c, sl_table_t *out, struct bench_result *res);

/* The output has every input row (by count and checksum) and is in order. */
static int check_sorted(void *user, sl_table_t *out, struct bench_result *res)
{
    const struct sort_check *c = user;
    sl_table_t *host;
    if (sl_table_to_host(out, &host) != SL_OK) /* a device result (--resident device) */
        return cli_fail("bench sort: %s", sl_last_errmsg()), SL_EINTERNAL;
    int rc = check_host(c, host, res);
    sl_table_unref(host);
    return rc;
}

static int check_host(const struct sort_check *c, sl_table_t *out, struct bench_result *res)
{
    res->output_rows = sl_table_num_rows(out);
    res->checksum = bench_checksum_table(out);
    if (res->output_rows != c->n || res->checksum != c->in_sum || !batches_sorted(out, c->desc))
        return cli_fail("bench sort: wrong result (%" PRId64 " rows)", res->output_rows),
               SL_EINTERNAL;
    return SL_OK;
}

int bench_sort(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t n = (int64_t)1 << 24, key_bytes = 4, payloads = 1, repeat = 5, seed = 42;
    int desc = 0, pageable = 0, engine_time = 0;
    const char *resident = "host";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage();
        if (!strcmp(argv[i], "--resident") && i + 1 < argc) {
            resident = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--desc")) {
            desc = 1;
            continue;
        }
        if (!strcmp(argv[i], "--pageable")) {
            pageable = 1;
            continue;
        }
        if (!strcmp(argv[i], "--engine-time")) {
            engine_time = 1;
            continue;
        }
        const struct bench_count_opt counts[] = {{"--rows", &n}, {"--key-bytes", &key_bytes},
            {"--payloads", &payloads}, {"--repeat", &repeat}, {"--seed", &seed}};
        int r = bench_option(argc, argv, &i, counts, 5, &c, "sort");
        if (r != 0)
            return r;
    }
    if (n < 1 || (key_bytes != 4 && key_bytes != 8) || payloads < 0 || payloads > 8 ||
        repeat < 1 || repeat > BENCH_MAX_REPEAT)
        return cli_fail("bench sort: need --rows >= 1, --key-bytes 4 or 8, --payloads 0..8, "
                        "--repeat 1..%d", BENCH_MAX_REPEAT);
    sl_table_t *in = bench_keys_table(n, (int)key_bytes, (int)payloads, (uint64_t)seed);
    if (!in)
        return cli_fail("bench sort: out of memory for the input");
    uint64_t in_sum = bench_checksum_table(in);
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng) {
        sl_table_unref(in);
        return 1;
    }
    int on_device = !strcmp(resident, "device");
    if (on_device && bench_to_device(eng, &in, "sort") < 0) {
        sl_engine_close(eng);
        sl_table_unref(in);
        return 1;
    }
    /* Host-resident GPU runs: pinned input (pinning is not timed); the floor is the
     * link's (docs/BENCH_PROTOCOL.md). */
    int host_gpu = !on_device && c.placement == SL_PLACE_GPU;
    if (host_gpu && !pageable && sl_table_pin(in) < 0)
        fprintf(stderr, "bench sort: cannot pin the input (%s); it stays pageable\n",
                sl_last_errmsg());
    sl_plan_t *plan;
    int src, s, rc = sl_plan_create(&plan);
    if (rc == SL_OK)
        rc = sl_plan_add_table(plan, in, &src);
    if (rc == SL_OK)
        rc = sl_plan_add(plan, "sort", &src, 1, desc ? "by=\"k DESC\"" : "by=k", &s);
    if (rc == SL_OK)
        rc = on_device ? sl_plan_output_device(plan, s, "sorted")
                       : sl_plan_output(plan, s, "sorted");
    struct bench_result res;
    bench_result_init(&res, n);
    res.engine_time = engine_time;
    bench_device_name(eng, c.placement, res.device, sizeof res.device);
    struct sort_check chk = {n, in_sum, desc};
    if (rc == SL_OK)
        rc = bench_run_plan(eng, plan, "sorted", repeat, "sort", &res, check_sorted, &chk);
    if (rc == SL_OK) {
        int threads = sl_engine_num_threads(eng);
        double med = bench_median(res.ms, res.n);
        double bytes = (double)n * (double)key_bytes * (double)(payloads + 1);
        /* The floor for the residency: every row read once and written once; over the
         * link, up and then down (the first sorted row needs the last input row). */
        struct bench_floor fl;
        bench_floor_measure(eng, on_device ? BENCH_ON_GPU
                                 : host_gpu ? BENCH_LINK_SERIAL
                                            : BENCH_ON_CPU,
                            bytes, bytes, &fl);
        char extra[800];
        int len = snprintf(extra, sizeof extra,
                           ",\"rows\":%" PRId64 ",\"key_bytes\":%" PRId64 ",\"payloads\":%" PRId64
                           ",\"threads\":%d,\"data_gb_per_s\":%.3f,\"resident\":\"%s\"",
                           n, key_bytes, payloads, threads, bytes / (med * 1e6), resident);
        len += bench_floor_json(&fl, med, extra + len, sizeof extra - (size_t)len);
        if (host_gpu)
            snprintf(extra + len, sizeof extra - (size_t)len, ",\"pinned\":%d,\"gpu_mem\":%lld",
                     !pageable, (long long)c.gpu_mem);
        bench_print_run(eng, on_device || c.placement == SL_PLACE_GPU, "sort", &res, extra);
    }
    sl_plan_destroy(plan);
    sl_table_unref(in);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
