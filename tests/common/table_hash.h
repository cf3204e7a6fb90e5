/* A fingerprint of a table's rows as a multiset (row order ignored): the row count and
 * the sum of a hash of each row's formatted values. Tests compare a run's result with a
 * reference run's this way (allocation sweeps, the soak test). */
#ifndef SLUICE_TEST_TABLE_HASH_H
#define SLUICE_TEST_TABLE_HASH_H

#include <stdint.h>

#include <sluice/sluice.h>

struct sl_test_rows {
    int64_t rows;
    uint64_t hash;
};

static inline uint64_t sl_test_text_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static inline void sl_test_table_hash(const sl_table_t *t, struct sl_test_rows *out)
{
    *out = (struct sl_test_rows){0, 0};
    for (int64_t b = 0; b < sl_table_num_batches(t); b++) {
        sl_batch_t *batch = sl_table_batch(t, b);
        for (int64_t i = 0; i < sl_batch_num_rows(batch); i++) {
            uint64_t h = 0;
            for (int c = 0; c < sl_batch_num_columns(batch); c++) {
                char cell[64];
                int null;
                sl_batch_value_format(batch, c, i, cell, sizeof cell, &null);
                h = h * 31 + (null ? 7 : sl_test_text_hash(cell));
            }
            out->hash += h;
            out->rows++;
        }
    }
}

/* Folds table t into *acc, a fingerprint of a query's outputs in their order. */
static inline void sl_test_rows_add(struct sl_test_rows *acc, const sl_table_t *t)
{
    struct sl_test_rows r;
    sl_test_table_hash(t, &r);
    acc->rows += r.rows;
    acc->hash = acc->hash * 1000003u + r.hash;
}

#endif /* SLUICE_TEST_TABLE_HASH_H */
