/* Filter programs that are an OR of ANDs of simple tests, run without the interpreter.
 *
 * Most scan filters (TPC-H's date ranges, discounts and quantities, l_commitdate <
 * l_receiptdate, dictionary string predicates, Q19's three brand/container/size cases)
 * are ORs of conjunctions of tests that each compare one integer-like column with a
 * constant or with another such column, or look a dictionary code up in its
 * predicate's table. A row passes such a predicate exactly when every test of some
 * conjunction is TRUE (SQL's OR is TRUE only when an operand is, AND only when all are;
 * FALSE and NULL rows are both dropped), and none of these tests can fail, so each row
 * needs only its stored values compared as int64: no value stack, no 128-bit values, and
 * a FALSE test ends its conjunction. operators/expr/expr_conj.c recognizes such programs
 * (sluice_k/expr_prog.h) and folds their constants' conversions once; the GPU filter
 * then runs sl__xj_row per row (kernels/expr), and the host test checks it against the
 * interpreter.
 *
 * Like expr_prog.h, this header includes no CUDA or sluice header. */
#ifndef SLUICE_K_EXPR_CONJ_H
#define SLUICE_K_EXPR_CONJ_H

#include "sluice_k/expr_prog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_XJ_MAX_TERMS 16

/* A test's form: column a against the constant imm, against column b, or column a's
 * dictionary code looked up in the 0/1 table at offset imm. */
enum { SL_XJ_LIT, SL_XJ_COLS, SL_XJ_DICT };

struct sl_xj_term {
    uint8_t form, cmp, sa, sb; /* form, SL_XC_* (a CMP b), stores (enum sl_xp_store) */
    uint8_t last;              /* 1: the last test of its conjunction */
    int32_t a, b;              /* column slots of the program (struct sl_xp_cols) */
    int64_t imm;
};

struct sl_xj_conj {
    int32_t n;
    struct sl_xj_term t[SL_XJ_MAX_TERMS];
};

/* Whether store s is read here: integers, booleans, dates and 64-bit decimals, whose
 * stored integers compare as the interpreter compares their values. */
SL_XP_HD static inline int sl__xj_store_ok(int s)
{
    return s == SL_XS_I8 || s == SL_XS_I16 || s == SL_XS_I32 || s == SL_XS_I64 ||
           s == SL_XS_U8 || s == SL_XS_U16 || s == SL_XS_U32 || s == SL_XS_BOOL ||
           s == SL_XS_D64;
}

SL_XP_HD static inline int64_t sl__xj_load(const void *p, int store, int64_t r)
{
    switch (store) {
    case SL_XS_I8: return ((const int8_t *)p)[r];
    case SL_XS_I16: return ((const int16_t *)p)[r];
    case SL_XS_I32: return ((const int32_t *)p)[r];
    case SL_XS_U8: case SL_XS_BOOL: return ((const uint8_t *)p)[r];
    case SL_XS_U16: return ((const uint16_t *)p)[r];
    case SL_XS_U32: return ((const uint32_t *)p)[r];
    default: return ((const int64_t *)p)[r]; /* I64, D64 */
    }
}

/* 1 when test t is TRUE on row r, else 0 (FALSE or NULL). */
SL_XP_HD static inline int sl__xj_test(const struct sl_xj_term *t, const struct sl_xp_cols *c,
                                       const uint8_t *tables, int64_t r)
{
    if (sl__xp_null_at(c, t->a, r))
        return 0;
    if (t->form == SL_XJ_DICT)
        return tables[t->imm + ((const int32_t *)c->data[t->a])[r]] != 0;
    int64_t x = sl__xj_load(c->data[t->a], t->sa, r), y = t->imm;
    if (t->form == SL_XJ_COLS) {
        if (sl__xp_null_at(c, t->b, r))
            return 0;
        y = sl__xj_load(c->data[t->b], t->sb, r);
    }
    return sl__xp_cmp_holds(t->cmp, (x > y) - (x < y));
}

/* 1 when every test of some conjunction of j (runs of tests, each ended by `last`) is
 * TRUE on row r, else 0. */
SL_XP_HD static inline int sl__xj_row(const struct sl_xj_conj *j, const struct sl_xp_cols *c,
                                      const uint8_t *tables, int64_t r)
{
    int ok = 1;
    for (int k = 0; k < j->n; k++) {
        const struct sl_xj_term *t = &j->t[k];
        if (ok)
            ok = sl__xj_test(t, c, tables, r);
        if (t->last) {
            if (ok)
                return 1;
            ok = 1;
        }
    }
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_EXPR_CONJ_H */
