/* Sort specifications ("a DESC NULLS FIRST, b"), shared by sort, sort.topk, partition
 * and merge, and the k64 sort items with their plain radix sort (radix_sort.c). */
#ifndef SLUICE_OPERATORS_SORT_SPEC_H
#define SLUICE_OPERATORS_SORT_SPEC_H

#include "operators.h"

/* A k64 sort item (op_common.h): a 64-bit code and a row index. */
struct sl__kv64 {
    uint64_t key;
    uint64_t idx;
};

/* Plain single-threaded stable LSD radix sort of n items by code (`tmp` as large as
 * `a`; radix_sort.c); skips digits where every item falls in one bucket. Returns a or
 * tmp, whichever holds the result. */
struct sl__kv64 *sl__rsort_k64(struct sl__kv64 *a, struct sl__kv64 *tmp, int64_t n);

/* ---------------- sort specifications ("a DESC NULLS FIRST, b") ---------------- */

#define SL__SORT_MAX_KEYS 16

struct sl__sort_key {
    int col;          /* input column */
    int desc;         /* 1 = descending */
    int nulls_first;  /* default: last for ASC, first for DESC (nulls compare as largest) */
};

struct sl__sort_spec {
    int n_keys;
    struct sl__sort_key keys[SL__SORT_MAX_KEYS];
};

/* Parses `text` against `schema`; on error records it with sl_bind_fail. */
int sl__sort_spec_parse(sl_bind_t *b, const sl_schema_t *schema, const char *text,
                        struct sl__sort_spec *out);

#endif /* SLUICE_OPERATORS_SORT_SPEC_H */
