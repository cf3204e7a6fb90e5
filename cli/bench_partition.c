/* sluice bench partition: radix-partitions N random keys (int32 or int64) carrying P
 * payload columns of the key's width into F partitions (--fanout, a power of two;
 * --passes 1|2, --hash). Input generated outside the timed span; each repeat times one
 * query (create, run, result) of table -> partition -> output. The result is checked
 * once (row count, one partition per batch, input values preserved); the checksum
 * covers every output value including the partition column. The floor: every row read
 * and written once in host memory (bench_floor.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int usage(void)
{
    printf("usage: sluice bench partition [--rows N] [--fanout F] [--passes 0|1|2] [--hash]\n"
           "                              [--key-bytes 4|8] [--payloads P] [--repeat R]\n"
           "                              [--threads N] [--placement cpu] [--json]\n"
           "Partitions N random keys with P payload columns of the key's width (defaults:\n"
           "2^24 rows, fanout 256, passes chosen from the cache size, 4-byte keys, 1 payload).\n");
    return 0;
}

/* 1 if every batch holds a single partition and the key values sum as in the input. */
static int check(sl_table_t *t, int key_bytes, uint64_t key_sum)
{
    uint64_t sum = 0;
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *bt = sl_table_batch(t, b);
        struct sl_column k, p;
        sl_batch_column(bt, 0, &k);
        sl_batch_column(bt, sl_batch_num_columns(bt) - 1, &p);
        const int32_t *pid = (const int32_t *)p.data + p.offset;
        for (int64_t i = 0; i < k.length; i++) {
            if (pid[i] != pid[0])
                return 0;
            sum += key_bytes == 4 ? ((const uint32_t *)k.data)[k.offset + i]
                                  : ((const uint64_t *)k.data)[k.offset + i];
        }
    }
    return sum == key_sum;
}

struct part_check {
    int64_t n;
    int key_bytes;
    uint64_t key_sum;
};

static int check_parts(void *user, sl_table_t *out, struct bench_result *res)
{
    const struct part_check *c = user;
    res->output_rows = sl_table_num_rows(out);
    res->checksum = bench_checksum_table(out);
    if (res->output_rows != c->n || !check(out, c->key_bytes, c->key_sum))
        return cli_fail("bench partition: wrong result (%" PRId64 " rows)", res->output_rows),
               SL_EINTERNAL;
    return SL_OK;
}

int bench_partition(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c);
    int64_t n = (int64_t)1 << 24, fanout = 256, passes = 0, key_bytes = 4, payloads = 1;
    int64_t repeat = 5, seed = 42;
    int hash = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help"))
            return usage();
        if (!strcmp(argv[i], "--hash")) {
            hash = 1;
            continue;
        }
        const struct bench_count_opt counts[] = {{"--rows", &n}, {"--fanout", &fanout},
            {"--passes", &passes}, {"--key-bytes", &key_bytes}, {"--payloads", &payloads},
            {"--repeat", &repeat}, {"--seed", &seed}};
        int r = bench_option(argc, argv, &i, counts, 7, &c, "partition");
        if (r != 0)
            return r;
    }
    if (n < 1 || (key_bytes != 4 && key_bytes != 8) || payloads < 0 || payloads > 8 ||
        repeat < 1 || repeat > BENCH_MAX_REPEAT)
        return cli_fail("bench partition: need --rows >= 1, --key-bytes 4 or 8, --payloads "
                        "0..8, --repeat 1..%d", BENCH_MAX_REPEAT);
    sl_table_t *in = bench_keys_table(n, (int)key_bytes, (int)payloads, (uint64_t)seed);
    if (!in)
        return cli_fail("bench partition: out of memory for the input");
    uint64_t key_sum = 0;
    {
        struct sl_column k;
        sl_batch_column(sl_table_batch(in, 0), 0, &k);
        for (int64_t i = 0; i < n; i++)
            key_sum += key_bytes == 4 ? ((const uint32_t *)k.data)[i]
                                      : ((const uint64_t *)k.data)[i];
    }
    sl_engine_t *eng = cli_open_engine(&c);
    if (!eng) {
        sl_table_unref(in);
        return 1;
    }
    char opts[128];
    snprintf(opts, sizeof opts, "key=k fanout=%" PRId64 " passes=%" PRId64 " hash=%s", fanout,
             passes, hash ? "true" : "false");
    sl_plan_t *plan;
    int src, s, rc = sl_plan_create(&plan);
    if (rc == SL_OK)
        rc = sl_plan_add_table(plan, in, &src);
    if (rc == SL_OK)
        rc = sl_plan_add(plan, "partition", &src, 1, opts, &s);
    if (rc == SL_OK)
        rc = sl_plan_output(plan, s, "parts");
    if (rc != SL_OK)
        cli_fail("bench partition: %s", sl_plan_errmsg(plan));
    struct bench_result res;
    bench_result_init(&res, n);
    bench_device_name(eng, c.placement, res.device, sizeof res.device);
    struct part_check chk = {n, (int)key_bytes, key_sum};
    if (rc == SL_OK)
        rc = bench_run_plan(eng, plan, "parts", repeat, "partition", &res, check_parts, &chk);
    if (rc == SL_OK) {
        int threads = sl_engine_num_threads(eng);
        double med = bench_median(res.ms, res.n);
        double bytes = (double)n * (double)key_bytes * (double)(payloads + 1);
        struct bench_floor fl; /* every row read and written once in host memory */
        bench_floor_measure(eng, BENCH_ON_CPU, bytes, bytes, &fl);
        char extra[512];
        int len = snprintf(extra, sizeof extra,
                 ",\"rows\":%" PRId64 ",\"fanout\":%" PRId64 ",\"passes\":%" PRId64
                 ",\"hash\":%s,\"key_bytes\":%" PRId64 ",\"payloads\":%" PRId64
                 ",\"threads\":%d,\"data_gb_per_s\":%.3f",
                 n, fanout, passes, hash ? "true" : "false", key_bytes, payloads, threads,
                 bytes / (med * 1e6));
        bench_floor_json(&fl, med, extra + len, sizeof extra - (size_t)len);
        bench_print_json("partition", &res, extra);
    }
    sl_plan_destroy(plan);
    sl_table_unref(in);
    sl_engine_close(eng);
    return rc == SL_OK ? 0 : 1;
}
