/* The 8-row table of every kind of column that the typed group-by, sort and top-k tests
 * share; the expectations in those tests come from DuckDB on the same rows. */
#ifndef SLUICE_TEST_TYPED_TABLE_H
#define SLUICE_TEST_TYPED_TABLE_H

#include "internal.h"
#include "typed_rows.h"

#define TT_COLS 8
#define TT_ROWS 8
static const char *const tt_names[TT_COLS] = {"k", "d", "dt", "p", "w", "bo", "f", "u8"};
static const char *const tt_k[] = {"b", "a", "b", "NULL", "a", "b", "NULL", "c"};
static const char *const tt_d[] = {"x", "y", "x", "y", "NULL", "x", "x", "z"};
static const char *const tt_dt[] = {"19000", "19001", "19000", "NULL", "19002", "18999", "19001", "19000"};
static const char *const tt_p[] = {"150", "250", "-100", "999", "NULL", "1", "2", "3"};
static const char *const tt_w[] = {"9000000000000000000", "5", "9000000000000000000", "NULL",
                                   "-7", "1", "2", "3"};
static const char *const tt_bo[] = {"1", "0", "1", "NULL", "1", "0", "0", "1"};
static const char *const tt_f[] = {"1.5", "nan", "2.0", "NULL", "-1", "nan", "3", "0"};
static const char *const tt_u8[] = {"255", "1", "2", "3", "4", "5", "6", "7"};

/* k utf8, d dict (codes against string order), dt date32, p decimal(15,2), w
 * decimal(30,3) (int128), bo bool, f float64 (NaNs), u8 uint8; nulls in all but u8. */
static inline sl_table_t *tt_table(void)
{
    const enum sl_type types[TT_COLS] = {SL_TYPE_UTF8, SL_TYPE_DICT, SL_TYPE_DATE32,
                                         sl_type_decimal(15, 2), sl_type_decimal(30, 3),
                                         SL_TYPE_BOOL, SL_TYPE_FLOAT64, SL_TYPE_UINT8};
    const char *const *const cols[TT_COLS] = {tt_k, tt_d, tt_dt, tt_p, tt_w, tt_bo, tt_f, tt_u8};
    return tr_table(TT_COLS, tt_names, types, cols, TT_ROWS);
}

static inline sl_engine_t *tt_engine(int threads, int64_t morsel)
{
    struct sl_engine_config cfg;
    sl_engine_config_init(&cfg);
    cfg.n_threads = threads;
    cfg.morsel_rows_cpu = morsel;
    cfg.n_gpus = 0;
    sl_engine_t *e;
    SL_ASSERT_OK(sl_engine_open(&e, &cfg));
    return e;
}

/* Every allocation of the library was freed (engines closed, tables dropped). */
static inline void tt_assert_no_leaks(void)
{
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    assert_int_equal(c.live_allocs, 0);
}

#endif /* SLUICE_TEST_TYPED_TABLE_H */
