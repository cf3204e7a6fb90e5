/* The device-independent decisions of the multi-device join and sort
 * (operators/common/mgpu_plan.c): balanced partition ranges under skew, splitters that
 * never split equal keys, receive layouts, packet counts and the exchange estimate,
 * each against a brute-force reference; the pipelined exchange's moves per chunk; and when a plan's join or sort goes over several
 * devices (mgpu_choice.h): the option multi_gpu, the size rule and the devices'
 * memory budgets (which devices fit, and the fallback when too few do); and what
 * explain says of them (sl__mg_judge). */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "common/mgpu_choice.h"
#include "common/mgpu_plan.h"
#include "sl_test.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The best largest range over all cuts, by brute force over small cases. */
static int64_t best_max(const int64_t *sizes, int n_parts, int n_dev, int from)
{
    if (n_dev == 1) {
        int64_t s = 0;
        for (int p = from; p < n_parts; p++)
            s += sizes[p];
        return s;
    }
    int64_t best = INT64_MAX, s = 0;
    for (int cut = from; cut <= n_parts; cut++) {
        int64_t rest = best_max(sizes, n_parts, n_dev - 1, cut);
        int64_t m = s > rest ? s : rest;
        best = m < best ? m : best;
        if (cut < n_parts)
            s += sizes[cut];
    }
    return best;
}

SL_TEST(balance_ranges_near_best)
{
    (void)state;
    for (int trial = 0; trial < 300; trial++) {
        int n_parts = 1 + (int)(next() % 12), n_dev = 1 + (int)(next() % 4);
        int64_t sizes[12], total = 0, biggest = 0;
        bool skew = trial % 3 == 0;
        for (int p = 0; p < n_parts; p++) {
            sizes[p] = (int64_t)(next() % 100);
            if (skew && p == (int)(next() % (uint64_t)n_parts))
                sizes[p] *= 50; /* one hot partition */
            total += sizes[p];
            biggest = sizes[p] > biggest ? sizes[p] : biggest;
        }
        int first[5];
        sl__mg_balance_ranges(sizes, n_parts, n_dev, first);
        assert_int_equal(first[0], 0);
        assert_int_equal(first[n_dev], n_parts);
        int64_t worst = 0;
        for (int d = 0; d < n_dev; d++) {
            assert_true(first[d] <= first[d + 1]);
            int64_t s = 0;
            for (int p = first[d]; p < first[d + 1]; p++)
                s += sizes[p];
            worst = s > worst ? s : worst;
        }
        /* within one partition of the ideal share, and never below the best possible */
        assert_true(worst <= total / n_dev + 1 + biggest);
        assert_true(worst >= best_max(sizes, n_parts, n_dev, 0));
    }
}

SL_TEST(balance_ranges_uniform_is_even)
{
    (void)state;
    int64_t sizes[1024];
    for (int p = 0; p < 1024; p++)
        sizes[p] = 100;
    int first[9];
    sl__mg_balance_ranges(sizes, 1024, 8, first);
    for (int d = 0; d <= 8; d++)
        assert_int_equal(first[d], d * 128);
}

SL_TEST(splitters_cut_evenly_and_keep_equal_keys_together)
{
    (void)state;
    enum { NS = 1000 };
    int64_t samples[NS], split[7];
    for (int i = 0; i < NS; i++)
        samples[i] = (int64_t)(next() % 5000) - 2500;
    sl__mg_splitters_i64(samples, NS, 8, split);
    for (int i = 1; i < NS; i++)
        assert_true(samples[i - 1] <= samples[i]); /* sorted in place */
    for (int j = 0; j < 7; j++) {
        assert_int_equal(split[j], samples[(j + 1) * NS / 8]);
        if (j)
            assert_true(split[j - 1] <= split[j]);
    }
    /* all equal: every splitter the same key, so one device takes them all */
    for (int i = 0; i < NS; i++)
        samples[i] = 42;
    sl__mg_splitters_i64(samples, NS, 4, split);
    for (int j = 0; j < 3; j++)
        assert_int_equal(split[j], 42);
    sl__mg_splitters_i64(samples, 0, 4, split);
    for (int j = 0; j < 3; j++)
        assert_int_equal(split[j], INT64_MAX);
}

SL_TEST(recv_layout_orders_senders)
{
    (void)state;
    int64_t count[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, base[9], total[3];
    sl__mg_recv_layout(count, 3, base, total);
    /* receiver 1 gets 2 (from 0), 5 (from 1), 8 (from 2) */
    assert_int_equal(base[0 * 3 + 1], 0);
    assert_int_equal(base[1 * 3 + 1], 2);
    assert_int_equal(base[2 * 3 + 1], 7);
    assert_int_equal(total[0], 1 + 4 + 7);
    assert_int_equal(total[1], 2 + 5 + 8);
    assert_int_equal(total[2], 3 + 6 + 9);
}

SL_TEST(packets_and_cost)
{
    (void)state;
    assert_int_equal(sl__mg_packet_rows((size_t)4 << 20, 8), 524288);
    assert_int_equal(sl__mg_packet_rows(4, 8), 1); /* never 0 */
    assert_int_equal(sl__mg_packets(0, 10), 0);
    assert_int_equal(sl__mg_packets(10, 10), 1);
    assert_int_equal(sl__mg_packets(11, 10), 2);
    int64_t count[4] = {100, 1000, 3000, 50}; /* 0->0, 0->1, 1->0, 1->1 */
    struct sl__mg_cost c;
    sl__mg_cost(count, 2, 16, 1.0, &c);
    assert_int_equal(c.link_bytes[0 * SL__MG_MAX_DEV + 1], 16000);
    assert_int_equal(c.link_bytes[1 * SL__MG_MAX_DEV + 0], 48000);
    assert_int_equal(c.link_bytes[0], 0); /* local rows do not cross a link */
    assert_int_equal(c.total_bytes, 64000);
    assert_true(c.seconds > 47999e-9 && c.seconds < 48001e-9); /* receiver 0, 1 GB/s */
    char text[256], tiny[8];
    int len = sl__mg_cost_text(&c, 2, text, sizeof text);
    assert_int_equal(len, (int)strlen(text));
    assert_non_null(strstr(text, "exchange: 0->1 0.0 MiB"));
    assert_non_null(strstr(text, "exchange: 1->0 0.0 MiB"));
    assert_non_null(strstr(text, "estimated 0.048 ms"));
    assert_int_equal(sl__mg_cost_text(&c, 2, tiny, sizeof tiny), len); /* truncated */
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

/* A join and a sort the multi-device path takes, on `n` devices. */
static struct sl__mg_shape good_shape(int n)
{
    return (struct sl__mg_shape){.n_devices = n, .n_keys = 1, .key_width = 8, .key_signed8 = 1,
                                 .kind_ok = 1, .cols_ok = 1, .in_gpu = 1, .rows = {1000, 10},
                                 .mode = SL__MG_MODE_ON, .n_fit = n};
}

SL_TEST(choice_takes_good_shapes)
{
    (void)state;
    for (int n = 2; n <= 8; n *= 2) {
        struct sl__mg_shape s = good_shape(n);
        assert_int_equal(sl__mg_join_choice(&s), SL__MG_YES);
        assert_int_equal(sl__mg_sort_choice(&s), SL__MG_YES);
        for (int w = 1; w <= 4; w *= 2) { /* narrower join keys widen; sorts need 8 */
            s.key_width = w;
            s.key_signed8 = 0;
            assert_int_equal(sl__mg_join_choice(&s), SL__MG_YES);
            assert_int_equal(sl__mg_sort_choice(&s), SL__MG_KEYS);
        }
        s.rows[0] = s.rows[1] = 0; /* empty sides are answered by the local joins */
        s.key_width = 8;
        assert_int_equal(sl__mg_join_choice(&s), SL__MG_YES);
    }
}

SL_TEST(choice_says_why_not)
{
    (void)state;
    struct sl__mg_shape s = good_shape(1);
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_ONE_DEVICE);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_ONE_DEVICE);
    s = good_shape(2), s.n_keys = 2;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_KEYS);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_KEYS);
    s = good_shape(2), s.key_width = 0; /* a string or float key */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_KEYS);
    s = good_shape(2), s.key_width = 16;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_KEYS);
    s = good_shape(2), s.kind_ok = 0;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_KIND);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_KIND);
    s = good_shape(4), s.cols_ok = 0;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_COLUMNS);
    s = good_shape(4), s.aggregate = 1;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_AGGREGATE);
    s = good_shape(4), s.rows[1] = ((int64_t)1 << 32) - 1;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_ROWS);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_YES); /* a sort has one side */
    s.rows[0] = s.rows[1];
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_ROWS);
    s = good_shape(8), s.in_gpu = 0;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_NOT_IN_GPU);
    for (int w = 0; w < SL__MG_N_WHY; w++)
        assert_true(strlen(sl__mg_why_text((enum sl__mg_why)w)) > 8);
    assert_string_equal(sl__mg_why_text(SL__MG_N_WHY), "?");
}

SL_TEST(choice_follows_the_option_and_the_size)
{
    (void)state;
    struct sl__mg_shape s = good_shape(4);
    s.mode = SL__MG_MODE_OFF;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_OFF);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_OFF);
    s = good_shape(1), s.mode = SL__MG_MODE_OFF; /* one device says so first */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_ONE_DEVICE);
    s = good_shape(4), s.mode = SL__MG_AUTO; /* 1,010 rows: too few for auto */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_SMALL);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_SMALL);
    s.rows[0] = SL__MG_MIN_ROWS - 10; /* both sides of a join count */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_YES);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_SMALL);
    s.rows[0] = SL__MG_MIN_ROWS;
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_YES);
    s = good_shape(4), s.mode = SL__MG_MODE_ON, s.kind_ok = 0; /* on cannot force a shape */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_KIND);
}

SL_TEST(choice_falls_back_when_budgets_do_not_fit)
{
    (void)state;
    struct sl__mg_shape s = good_shape(4);
    s.n_fit = 1;
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_BUDGET);
    assert_int_equal(sl__mg_sort_choice(&s), SL__MG_BUDGET);
    s.n_fit = 0, s.mode = SL__MG_AUTO; /* memory before size: the reason that binds */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_BUDGET);
    s = good_shape(4), s.n_fit = 0, s.cols_ok = 0; /* the shape's reason first */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_COLUMNS);
    s = good_shape(4), s.n_fit = 2; /* fewer devices than the engine has still spread */
    assert_int_equal(sl__mg_join_choice(&s), SL__MG_YES);
}

/* Every device of use[0..k) has room for fixed + 2 * bytes / k, self among them. */
static void assert_fits(const int64_t *room, int self, int64_t bytes, int64_t fixed,
                        const int *use, int k)
{
    bool has_self = self < 0;
    for (int i = 0; i < k; i++) {
        assert_true(room[use[i]] >= fixed + 2 * (bytes / k + 1));
        assert_true(i == 0 || use[i - 1] < use[i]);
        has_self |= use[i] == self;
    }
    assert_true(has_self);
}

SL_TEST(fit_devices_takes_the_most_that_fit)
{
    (void)state;
    const int64_t mib = (int64_t)1 << 20, fixed = 64 * mib;
    int64_t room[8];
    int use[8];
    for (int d = 0; d < 8; d++)
        room[d] = 1000 * mib;
    /* 8 devices with room for a 3,000 MiB spread: each needs 64 + 750 MiB */
    assert_int_equal(sl__mg_fit_devices(room, 8, 0, 3000 * mib, fixed, use), 8);
    assert_fits(room, 0, 3000 * mib, fixed, use, 8);
    /* 6,000 MiB: 1,564 MiB each over 8 does not fit; over 7 or fewer neither */
    assert_int_equal(sl__mg_fit_devices(room, 8, 0, 6000 * mib, fixed, use), 0);
    /* a full device (another query's memory) is left out; self 5 stays */
    room[2] = 100 * mib;
    int k = sl__mg_fit_devices(room, 8, 5, 3000 * mib, fixed, use);
    assert_int_equal(k, 7);
    assert_fits(room, 5, 3000 * mib, fixed, use, k);
    for (int i = 0; i < k; i++)
        assert_int_not_equal(use[i], 2);
    /* self without room: no spread at all (its rows would have nowhere to go first) */
    room[5] = 10 * mib;
    assert_int_equal(sl__mg_fit_devices(room, 8, 5, 3000 * mib, fixed, use), 0);
    /* uneven rooms: the roomiest devices with self, as many as hold the share */
    int64_t uneven[4] = {900 * mib, 2000 * mib, 300 * mib, 1500 * mib};
    k = sl__mg_fit_devices(uneven, 4, 0, 1000 * mib, fixed, use);
    assert_int_equal(k, 3); /* 4 need 564 MiB each (device 2 lacks it), 3 need 731 */
    assert_fits(uneven, 0, 1000 * mib, fixed, use, k);
    assert_int_equal(use[0], 0);
    assert_int_equal(use[1], 1);
    assert_int_equal(use[2], 3);
    /* no self (a test's own devices): 1,300 MiB over 3 needs 930 MiB (device 0 lacks
     * it), over 2 1,364 MiB: devices 1 and 3 */
    k = sl__mg_fit_devices(uneven, 4, -1, 1300 * mib, fixed, use);
    assert_int_equal(k, 2);
    assert_fits(uneven, -1, 1300 * mib, fixed, use, k);
    assert_int_equal(use[0], 1);
    assert_int_equal(use[1], 3);
    /* self with the least room still comes first in the choice */
    k = sl__mg_fit_devices(uneven, 4, 2, 100 * mib, fixed, use);
    assert_int_equal(k, 4); /* 64 + 50 MiB each */
    assert_fits(uneven, 2, 100 * mib, fixed, use, k);
}

/* explain's verdict (sl__mg_judge) for 4 devices of `room` MiB each, the first the
 * pipeline's own. */
static struct sl__mg_verdict judge(int sides, int mode, int64_t rows0, int64_t rows1,
                                   int64_t room_mib)
{
    struct sl__mg_env env = {.n_devices = 4, .self = 0, .mode = mode, .rows = {rows0, rows1}};
    for (int d = 0; d < 4; d++)
        env.room[d] = room_mib << 20;
    struct sl__mg_shape s = good_shape(4);
    struct sl__mg_verdict v;
    sl__mg_judge(&s, sides, &env, &v);
    return v;
}

SL_TEST(judge_says_what_the_finalize_will_do)
{
    (void)state;
    const int64_t m = SL__MG_MIN_ROWS;
    /* 2^22 + 2^24 rows of a join over 4 devices with room: every device, the estimate
     * for an even spread: (rows / 16) x 16 bytes per link, 3 links into each device */
    struct sl__mg_verdict v = judge(2, SL__MG_AUTO, 4 * m, 16 * m, 64 << 10);
    assert_int_equal(v.devices, 4);
    assert_int_equal(v.why, SL__MG_YES);
    assert_int_equal(v.rows, 20 * m);
    assert_int_equal(v.link_bytes, 20 * m / 16 * 16);
    assert_int_equal(v.device_bytes, 3 * v.link_bytes);
    assert_true(fabs(v.seconds - (double)v.device_bytes / (SL__MG_LINK_GBPS * 1e9)) < 1e-12);
    /* the option and the 2^20-row rule */
    assert_int_equal(judge(2, SL__MG_MODE_OFF, 4 * m, 16 * m, 64 << 10).why, SL__MG_OFF);
    v = judge(2, SL__MG_AUTO, m / 4, m / 2, 64 << 10);
    assert_int_equal(v.why, SL__MG_SMALL);
    assert_int_equal(v.devices, 1);
    assert_int_equal(v.link_bytes, -1);
    assert_int_equal(judge(1, SL__MG_MODE_ON, m / 4, -1, 64 << 10).devices, 4);
    /* rows unknown: over every device as far as memory goes, bytes unknown */
    v = judge(1, SL__MG_AUTO, -1, -1, 64 << 10);
    assert_int_equal(v.devices, 4);
    assert_int_equal(v.rows, -1);
    assert_int_equal(v.link_bytes, -1);
    /* the budgets: 2^24 sort rows need 64 + 2 x 80 x 2^24 / k MiB on each of k devices
     * (and 40 x 2^24 on the own one besides): 2,000 MiB each holds a spread over 4,
     * 1,000 MiB none (over 4: 704 + 640 on the own; fewer need more) */
    assert_int_equal(judge(1, SL__MG_AUTO, 16 * m, -1, 2000).devices, 4);
    v = judge(1, SL__MG_AUTO, 16 * m, -1, 1000);
    assert_int_equal(v.devices, 1);
    assert_int_equal(v.why, SL__MG_BUDGET);
    /* over the own device's budget altogether: not in GPU memory */
    assert_int_equal(judge(1, SL__MG_AUTO, 16 * m, -1, 500).why, SL__MG_NOT_IN_GPU);
    /* saturated estimates (INT64_MAX rows): too many rows, no overflow on the way */
    assert_int_equal(judge(2, SL__MG_AUTO, INT64_MAX, INT64_MAX, 64 << 10).why, SL__MG_ROWS);
}

SL_TEST(judge_spreads_over_the_devices_that_fit)
{
    (void)state;
    struct sl__mg_env env = {.n_devices = 4, .self = 0, .mode = SL__MG_AUTO,
                             .rows = {(int64_t)16 << 20, -1}};
    for (int d = 0; d < 4; d++) /* devices 1 and 2 nearly full (another query's memory) */
        env.room[d] = (d == 1 || d == 2 ? 100 : 4000) * ((int64_t)1 << 20);
    struct sl__mg_shape s = good_shape(4);
    struct sl__mg_verdict v;
    sl__mg_judge(&s, 1, &env, &v);
    assert_int_equal(v.devices, 2);
    assert_int_equal(v.why, SL__MG_BUDGET); /* as the profile: multi_device 2, fallback 9 */
    assert_int_equal(v.link_bytes, ((int64_t)16 << 20) / 4 * 16);
    /* a shape the path does not take stays on one whatever the memory */
    s = good_shape(4);
    s.key_signed8 = 0;
    sl__mg_judge(&s, 1, &env, &v);
    assert_int_equal(v.devices, 1);
    assert_int_equal(v.why, SL__MG_KEYS);
    assert_non_null(strstr(v.why_text, "key"));
}

/* A chunk's rows, stable-sorted by partition, cut by sl__mg_chunk_moves: receiver d's
 * rows are exactly those of its partitions, at off[d], and the cuts cover the chunk. */
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

SL_TEST(chunk_moves_cut_partitioned_chunks)
{
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        int fanout = 1 + (int)(next() % 64), n_dev = 1 + (int)(next() % 8);
        int rows = (int)(next() % 500); /* 0 included */
        uint32_t pid[500], hist[64] = {0};
        int64_t sizes[64];
        for (int i = 0; i < rows; i++) {
            pid[i] = trial % 4 == 0 && next() % 2 ? 3u % (uint32_t)fanout /* a hot one */
                                                   : (uint32_t)(next() % (uint64_t)fanout);
            hist[pid[i]]++;
        }
        for (int p = 0; p < fanout; p++)
            sizes[p] = hist[p] + (int64_t)(next() % 3); /* other chunks' rows too */
        int first[9];
        sl__mg_balance_ranges(sizes, fanout, n_dev, first);
        int64_t cnt[8], off[8], sum = 0;
        sl__mg_chunk_moves(hist, first, n_dev, cnt, off);
        qsort(pid, (size_t)rows, sizeof *pid, cmp_u32);
        for (int d = 0; d < n_dev; d++) {
            assert_int_equal(off[d], sum);
            for (int64_t i = off[d]; i < off[d] + cnt[d]; i++)
                assert_true((int)pid[i] >= first[d] && (int)pid[i] < first[d + 1]);
            int64_t want = 0;
            for (int i = 0; i < rows; i++)
                want += (int)pid[i] >= first[d] && (int)pid[i] < first[d + 1];
            assert_int_equal(cnt[d], want);
            sum += cnt[d];
        }
        assert_int_equal(sum, rows);
    }
}
