/* Shared by the out-of-core join tests (test_gpu_join_ooc.c, test_gpu_join_smj_ooc.c): a
 * side's specification and the host table made from it (int32/int64 key "k" and payloads
 * "<side>1".., in batches of 2^18 rows). */
#ifndef SLUICE_TESTS_JOIN_OOC_TABLES_H
#define SLUICE_TESTS_JOIN_OOC_TABLES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sl_test.h"

struct spec {
    int64_t rows;
    int key64, n_pay, pay64;
    int64_t key_range;                  /* keys drawn from [0, key_range); 0 = a permutation */
    int64_t key_offset;                 /* added to every key (no-match cases) */
    int skew;                           /* 1: 90% of rows take key 7 */
    int nulls;                          /* 1: every 10th key is null */
    int huge;                           /* int64 payloads up to 2^50 (sums overflow int64) */
    int zipf;                           /* keys Zipf-distributed (s = 1) over key_range */
    int sorted;                         /* 1: the permutation in ascending order */
    int64_t last_key;                   /* nonzero: the last row's key (before key_offset) */
    uint64_t seed;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static sl_table_t *make(const struct spec *sp, const char *side)
{
    sl_table_t *t;
    SL_ASSERT_OK(sl_table_create(&t));
    char names[5][16];
    const char *np[5];
    enum sl_type ty[5];
    int nc = 1 + sp->n_pay;
    for (int c = 0; c < nc; c++) {
        snprintf(names[c], sizeof names[c], c ? "%s%d" : "k", side, c);
        np[c] = names[c];
        ty[c] = c == 0 ? (sp->key64 ? SL_TYPE_INT64 : SL_TYPE_INT32)
                       : (sp->pay64 ? SL_TYPE_INT64 : SL_TYPE_INT32);
    }
    uint64_t s = sp->seed * 0x9E3779B97F4A7C15ull + 1;
    int64_t *keys = malloc((size_t)(sp->rows + 1) * sizeof *keys);
    for (int64_t i = 0; i < sp->rows; i++)
        keys[i] = i;
    for (int64_t i = sp->rows - 1; i > 0 && !sp->key_range && !sp->sorted; i--) {
        int64_t j = (int64_t)(rnd(&s) % (uint64_t)(i + 1)), x = keys[i];
        keys[i] = keys[j];
        keys[j] = x;
    }
    for (int64_t i = 0; i < sp->rows; i++) {
        if (sp->key_range)
            keys[i] = (int64_t)(rnd(&s) % (uint64_t)sp->key_range);
        if (sp->zipf) /* rank r with probability ~ 1/r: r = range^u - 1 */
            keys[i] = (int64_t)pow((double)sp->key_range, (double)(rnd(&s) >> 11) / 9007199254740992.0) - 1;
        if (sp->skew && rnd(&s) % 10 < 9)
            keys[i] = 7;
        if (sp->last_key && i == sp->rows - 1)
            keys[i] = sp->last_key;
        keys[i] += sp->key_offset;
    }
    const int64_t chunk = 1 << 18; /* several batches, and batches of other sizes than morsels */
    for (int64_t lo = 0; lo < sp->rows || lo == 0; lo += chunk) {
        int64_t m = sp->rows - lo < chunk ? sp->rows - lo : chunk;
        sl_batch_t *b;
        SL_ASSERT_OK(sl_batch_create(&b, nc, np, ty, m));
        for (int c = 0; c < nc; c++) {
            void *d = sl_batch_column_data(b, c);
            for (int64_t i = 0; i < m; i++) {
                int64_t v = c == 0 ? keys[lo + i]
                                   : (int64_t)(rnd(&s) % 2000001) - 1000000 +
                                         (sp->pay64 ? (int64_t)(rnd(&s) % 1000) << (sp->huge ? 40 : 20) : 0);
                if (ty[c] == SL_TYPE_INT64)
                    ((int64_t *)d)[i] = v;
                else
                    ((int32_t *)d)[i] = (int32_t)v;
            }
        }
        if (sp->nulls) {
            uint8_t *valid = sl_batch_column_validity(b, 0);
            for (int64_t i = 0; i < m; i += 10)
                valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        SL_ASSERT_OK(sl_table_append(t, b));
        sl_batch_unref(b);
        if (m == 0)
            break;
    }
    free(keys);
    return t;
}

#endif /* SLUICE_TESTS_JOIN_OOC_TABLES_H */
