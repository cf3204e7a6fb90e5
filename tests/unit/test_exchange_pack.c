/* The exchange operator's bulk packing (operators/exchange/exchange_pack.c): rows routed
 * to destinations, packed column by column into one run of packets per destination
 * (sl__xchg_pack_all) and unpacked from the runs (sl__xchg_inbox_add_run), against the
 * rows themselves: every destination gets its rows in input order, values and nulls,
 * in packets of at most the capacity, whether its columns are slices of the run
 * (aligned) or copies (a 4-byte column before an 8-byte one, odd row counts), and
 * nothing is left allocated. */
#include <string.h>

#include "exchange/exchange_int.h"
#include "sl_test.h"

#define N 1001
#define RANKS 3

/* Packs N rows (an int32 column with nulls, an int64 one) in packets of packet_bytes,
 * unpacks each destination's run and checks what arrives. */
static void round_trip(size_t packet_bytes)
{
    static int32_t a[N];
    static int64_t b[N];
    static uint8_t valid[(N + 7) / 8];
    static int32_t dest[N];
    memset(valid, 0, sizeof valid);
    for (int i = 0; i < N; i++) {
        a[i] = i * 3 - 500;
        b[i] = (int64_t)i << 33 | i;
        if (i % 5)
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        dest[i] = i < 100 ? 2 : (i * 7) % 2; /* destination 0 and 1, then 2 only at first */
    }
    sl_schema_t *schema = sl__schema_new(2);
    SL_ASSERT_OK(sl__schema_set(schema, 0, "a", SL_TYPE_INT32));
    SL_ASSERT_OK(sl__schema_set(schema, 1, "b", SL_TYPE_INT64));
    struct sl__rowsview cols[2] = {{.type = SL_TYPE_INT32, .data = a, .validity = valid},
                                   {.type = SL_TYPE_INT64, .data = b}};
    struct xchg_layout l;
    sl__xchg_layout_init(&l, schema, cols, packet_bytes);
    int64_t count[RANKS] = {0};
    for (int i = 0; i < N; i++)
        count[dest[i]]++;
    uint8_t *buf[RANKS];
    size_t bytes[RANKS];
    size_t planned[RANKS]; /* what the bulk exchange charges before packing */
    sl__xchg_run_sizes(&l, N, RANKS, count, planned);
    SL_ASSERT_OK(sl__xchg_pack_all(&l, dest, N, RANKS, count, buf, bytes));
    for (int d = 0; d < RANKS; d++)
        assert_int_equal(planned[d], bytes[d]);
    struct xchg_inbox in;
    SL_ASSERT_OK(sl__xchg_inbox_init(&in, RANKS));
    for (int d = 0; d < RANKS; d++) /* each run as if rank d had sent it */
        SL_ASSERT_OK(sl__xchg_inbox_add_run(&in, &l, schema, d, buf[d], bytes[d], NULL));
    assert_int_equal(in.rows, N);
    int64_t n_batches;
    sl_batch_t **got = sl__xchg_inbox_take(&in, &n_batches);
    assert_non_null(got);
    int64_t k = 0;
    int next[RANKS] = {0};
    for (int d = 0; d < RANKS; d++) { /* senders in order: d's rows, then d + 1's */
        int64_t seen = 0;
        for (; k < n_batches && seen < count[d]; k++) {
            sl_batch_t *bt = got[k];
            int64_t rows = sl_batch_num_rows(bt);
            assert_true(rows >= 1 && rows <= l.cap);
            const int32_t *ga = sl_batch_column_data(bt, 0);
            const int64_t *gb = sl_batch_column_data(bt, 1);
            const uint8_t *gv = sl_batch_column_validity(bt, 0);
            for (int64_t r = 0; r < rows; r++) {
                while (dest[next[d]] != d)
                    next[d]++;
                int i = next[d]++;
                assert_int_equal(ga[r], a[i]);
                assert_int_equal(gb[r], b[i]);
                assert_int_equal(gv[r >> 3] >> (r & 7) & 1, i % 5 != 0);
            }
            seen += rows;
        }
        assert_int_equal(seen, count[d]);
    }
    assert_int_equal(k, n_batches);
    for (int64_t i = 0; i < n_batches; i++)
        sl_batch_unref(got[i]);
    sl__free(got, 0);
    sl__xchg_inbox_fini(&in);
    sl__schema_free(schema);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

SL_TEST(runs_of_small_packets_arrive_in_order)
{
    (void)state;
    round_trip(16 + 14 * 17); /* 17 rows a packet: odd row counts, unaligned columns */
    round_trip(16 + 14 * 64); /* 64 rows a packet, but the last of each run */
}

SL_TEST(one_packet_per_destination)
{
    (void)state;
    round_trip(1 << 20);
}
