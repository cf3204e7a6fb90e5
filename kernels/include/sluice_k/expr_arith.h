/* Computed columns that are integer or decimal arithmetic, run with the stack in
 * registers.
 *
 * The interpreter (expr_prog.h) keeps its value stack in an array that a GPU thread can
 * only hold in local memory; at 60M rows the stack's traffic, not the columns', sets the
 * time (TPC-H Q1's l_extendedprice * (1 - l_discount) * (1 + l_tax)). A program made
 * only of integer-like and 64-bit decimal columns (at most SL_XA_DEPTH of them),
 * constants, their conversions (I2D, D2D), + - * and unary minus, at most SL_XA_DEPTH
 * values deep, runs here instead: the same instructions with the interpreter's own
 * arithmetic, conversions and overflow checks (so the same values, NULLs and errors at
 * the same instruction), on SL_XA_DEPTH named values that stay in registers. A row's
 * columns are fetched before it is evaluated (sl__xa_fetch), so that a kernel can have
 * the loads of several rows in flight at once. The host test checks it against the
 * interpreter row by row.
 *
 * Like expr_prog.h, this header includes no CUDA or sluice header. */
#ifndef SLUICE_K_EXPR_ARITH_H
#define SLUICE_K_EXPR_ARITH_H

#include "sluice_k/expr_conj.h" /* sl__xj_load, sl__xj_store_ok */
#include "sluice_k/expr_prog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_XA_DEPTH 4

/* The columns a program reads, by slot: their stores (enum sl_xp_store). */
struct sl_xa_slots {
    int32_t n;
    uint8_t store[SL_XA_DEPTH];
};

/* Whether program p runs on sl__xa_eval_row (its slots into *sl): only COL (integer-like
 * or 64-bit decimal, sl__xj_store_ok; at most SL_XA_DEPTH columns), LIT and NEG
 * (integer or decimal), I2D, D2D, and ARITH + - * (integer or decimal), its stack never
 * deeper than SL_XA_DEPTH. */
SL_XP_HD static inline int sl__xa_fits(const struct sl_xp_prog *p, struct sl_xa_slots *sl)
{
    int sp = 0;
    if (p->n_cols > SL_XA_DEPTH)
        return 0;
    sl->n = p->n_cols;
    for (int k = 0; k < p->n_ins; k++) {
        const struct sl_xp_ins *in = &p->ins[k];
        int int_or_dec = in->kind == SL_XK_I || in->kind == SL_XK_D;
        switch (in->op) {
        case SL_XP_COL:
            if (!int_or_dec || !sl__xj_store_ok(in->sub))
                return 0;
            sl->store[in->a] = in->sub;
            sp++;
            break;
        case SL_XP_LIT:
            if (!int_or_dec)
                return 0;
            sp++;
            break;
        case SL_XP_I2D: case SL_XP_D2D:
            break;
        case SL_XP_NEG:
            if (!int_or_dec)
                return 0;
            break;
        case SL_XP_ARITH:
            if (!int_or_dec || (in->sub != SL_XA_ADD && in->sub != SL_XA_SUB &&
                                in->sub != SL_XA_MUL))
                return 0;
            sp--;
            break;
        default:
            return 0;
        }
        if (sp > SL_XA_DEPTH || sp < 1)
            return 0;
    }
    return sp == 1;
}

/* A row's columns by slot (stored integers as int64) and their nulls (bit s). Read
 * only by constant indices, so that they stay in registers. */
struct sl_xa_row {
    int64_t v[SL_XA_DEPTH];
    unsigned null;
};

#ifdef __CUDA_ARCH__
#define SL__XA_UNROLL _Pragma("unroll")
#else
#define SL__XA_UNROLL
#endif

/* Row r's columns: loads only, none of them waited for here. */
SL_XP_HD static inline void sl__xa_fetch(const struct sl_xa_slots *sl, const struct sl_xp_cols *c,
                                         int64_t r, struct sl_xa_row *o)
{
    o->null = 0;
    SL__XA_UNROLL
    for (int s = 0; s < SL_XA_DEPTH; s++) {
        o->v[s] = 0;
        if (s < sl->n) {
            o->v[s] = sl__xj_load(c->data[s], sl->store[s], r);
            o->null |= (unsigned)sl__xp_null_at(c, s, r) << s;
        }
    }
}

/* The stack's value k (0 <= k < SL_XA_DEPTH), read and written by name so that it stays
 * in registers (an array indexed at run time would not). */
#define SL__XA_GET(k) ((k) == 0 ? s0 : (k) == 1 ? s1 : (k) == 2 ? s2 : s3)
#define SL__XA_SET(k, v)                                                                   \
    do {                                                                                   \
        __int128 v_ = (v);                                                                 \
        switch (k) {                                                                       \
        case 0: s0 = v_; break;                                                            \
        case 1: s1 = v_; break;                                                            \
        case 2: s2 = v_; break;                                                            \
        default: s3 = v_; break;                                                           \
        }                                                                                  \
    } while (0)

/* sl__xp_eval_row for a program that sl__xa_fits, on its row's fetched columns: the
 * same value (integers in out->i, decimals in out->d), nullness and error. Integers are
 * held sign-extended. */
SL_XP_HD static inline int sl__xa_eval(const struct sl_xp_prog *p, const struct sl_xa_row *row,
                                       sl_xp_val *out, int *out_null, int *bad)
{
    __int128 s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    unsigned nu = 0; /* bit k: value k is NULL */
    int sp = 0;
    for (int k = 0; k < p->n_ins; k++) {
        const struct sl_xp_ins *in = &p->ins[k];
        int err = 0;
        switch (in->op) {
        case SL_XP_COL: {
            int s = in->a;
            int64_t v = s == 0 ? row->v[0] : s == 1 ? row->v[1] : s == 2 ? row->v[2] : row->v[3];
            SL__XA_SET(sp, (__int128)v);
            nu = (nu & ~(1u << sp)) | (row->null >> s & 1) << sp;
            sp++;
            break;
        }
        case SL_XP_LIT:
            SL__XA_SET(sp, in->kind == SL_XK_D ? p->pool[in->a].d : (__int128)p->pool[in->a].i);
            nu &= ~(1u << sp);
            sp++;
            break;
        case SL_XP_I2D: case SL_XP_D2D: {
            __int128 y;
            err = sl__xp_rescale(SL__XA_GET(sp - 1), p->pool[in->a].d, p->pool[in->a + 1].d,
                                 in->sub, &y);
            if (nu >> (sp - 1) & 1) {
                y = 0;
                err = 0;
            }
            SL__XA_SET(sp - 1, y);
            break;
        }
        case SL_XP_NEG: {
            __int128 x = SL__XA_GET(sp - 1);
            if (in->kind == SL_XK_D) {
                x = -x;
            } else {
                err = (int64_t)x == INT64_MIN && !(nu >> (sp - 1) & 1);
                x = (int64_t)x == INT64_MIN ? 0 : -x;
            }
            SL__XA_SET(sp - 1, x);
            break;
        }
        default: { /* SL_XP_ARITH: + - * */
            __int128 x = SL__XA_GET(sp - 2), y = SL__XA_GET(sp - 1), o = 0;
            int n = (nu >> (sp - 2) & 1) | (nu >> (sp - 1) & 1);
            if (in->kind == SL_XK_I) {
                int64_t o64;
                err = sl__xp_arith_i(in->sub, (int64_t)x, (int64_t)y, &o64, &n);
                if (in->flag && !err)
                    err = o64 < INT32_MIN || o64 > INT32_MAX;
                o = o64;
            } else {
                err = sl__xp_arith_d(in->sub, x, y, p->pool[in->a].d, &o);
            }
            if (n)
                err = 0;
            sp--;
            SL__XA_SET(sp - 1, o);
            nu = (nu & ~(1u << (sp - 1))) | (unsigned)n << (sp - 1);
            break;
        }
        }
        if (err) {
            *bad = k;
            return SL_XP_EOVERFLOW;
        }
    }
    out->d = 0;
    if (p->ins[p->n_ins - 1].kind == SL_XK_D)
        out->d = s0;
    else
        out->i = (int64_t)s0;
    *out_null = (int)(nu & 1);
    return SL_XP_OK;
}

/* Fetch and evaluate row r. */
SL_XP_HD static inline int sl__xa_eval_row(const struct sl_xp_prog *p, const struct sl_xa_slots *sl,
                                           const struct sl_xp_cols *c, int64_t r, sl_xp_val *out,
                                           int *out_null, int *bad)
{
    struct sl_xa_row row;
    sl__xa_fetch(sl, c, r, &row);
    return sl__xa_eval(p, &row, out, out_null, bad);
}

#undef SL__XA_GET
#undef SL__XA_SET

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_EXPR_ARITH_H */
