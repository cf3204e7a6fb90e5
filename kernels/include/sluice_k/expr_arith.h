/* Computed columns that are integer or decimal arithmetic, run with the stack in
 * registers.
 *
 * The interpreter (expr_prog.h) keeps its value stack in an array that a GPU thread can
 * only hold in local memory; at 60M rows the stack's traffic, not the columns', sets the
 * time (TPC-H Q1's l_extendedprice * (1 - l_discount) * (1 + l_tax)). A program made
 * only of integer-like and decimal columns, constants, their conversions (I2D, D2D),
 * + - * and unary minus, at most SL_XA_DEPTH values deep, runs here instead: the same
 * instructions with the interpreter's own arithmetic, conversions and overflow checks
 * (so the same values, NULLs and errors at the same instruction), on SL_XA_DEPTH named
 * values that stay in registers. The host test checks it against the interpreter row by
 * row.
 *
 * Like expr_prog.h, this header includes no CUDA or sluice header. */
#ifndef SLUICE_K_EXPR_ARITH_H
#define SLUICE_K_EXPR_ARITH_H

#include "sluice_k/expr_prog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_XA_DEPTH 4

/* Whether program p runs on sl__xa_eval_row: only COL (not float or string), LIT and
 * NEG (integer or decimal), I2D, D2D, and ARITH + - * (integer or decimal), its stack
 * never deeper than SL_XA_DEPTH. */
SL_XP_HD static inline int sl__xa_fits(const struct sl_xp_prog *p)
{
    int sp = 0;
    for (int k = 0; k < p->n_ins; k++) {
        const struct sl_xp_ins *in = &p->ins[k];
        int int_or_dec = in->kind == SL_XK_I || in->kind == SL_XK_D;
        switch (in->op) {
        case SL_XP_COL:
            if (!int_or_dec || in->sub == SL_XS_F32 || in->sub == SL_XS_F64 ||
                in->sub == SL_XS_STR32 || in->sub == SL_XS_STR64)
                return 0;
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

/* sl__xp_eval_row for a program that sl__xa_fits: the same value (integers in out->i,
 * decimals in out->d), nullness and error. Integers are held sign-extended. */
SL_XP_HD static inline int sl__xa_eval_row(const struct sl_xp_prog *p, const struct sl_xp_cols *c,
                                           int64_t r, sl_xp_val *out, int *out_null, int *bad)
{
    __int128 s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    unsigned nu = 0; /* bit k: value k is NULL */
    int sp = 0;
    for (int k = 0; k < p->n_ins; k++) {
        const struct sl_xp_ins *in = &p->ins[k];
        int err = 0;
        switch (in->op) {
        case SL_XP_COL: {
            sl_xp_val v = sl__xp_load(c, in->a, in->sub, r);
            unsigned n = (unsigned)sl__xp_null_at(c, in->a, r);
            SL__XA_SET(sp, in->kind == SL_XK_D ? v.d : (__int128)v.i);
            nu = (nu & ~(1u << sp)) | n << sp;
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

#undef SL__XA_GET
#undef SL__XA_SET

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_EXPR_ARITH_H */
