/* Arithmetic programs run in registers (issue 18): a fast path of the GPU project.
 *
 * Most computed columns of scans (TPC-H's l_extendedprice * (1 - l_discount) * (1 +
 * l_tax), l_extendedprice * l_discount, date or integer arithmetic) are programs of
 * column loads, constants, decimal rescales, + - *, comparisons and AND/OR/NOT over
 * integer-like values whose every intermediate fits 64 bits. The interpreter
 * (sluice_k/expr_prog.h) runs them on a stack of 16-byte values in local memory with
 * 128-bit arithmetic; here the same program, recognized once on the host
 * (operators/expr/expr_reg.c), runs on four int64 registers and a null mask. The stack
 * position of each instruction is known when the program is compiled, so each
 * instruction names the register it writes (a binary one reads it and the next).
 *
 * A row whose evaluation leaves this fast path's certainty (an int64 overflow, a
 * decimal result at or past its precision, a rescale past its limit, a date result
 * outside int32: either a wide intermediate or an error the interpreter must report
 * with its instruction) returns SL_XR_UNSURE, and the caller runs the interpreter on
 * that row; so the answers, errors included, are the interpreter's by construction. The
 * host test (tests/unit/expr/test_expr_prog.c) checks every row it answers against the
 * interpreter.
 *
 * Like expr_prog.h, this header includes no CUDA or sluice header. */
#ifndef SLUICE_K_EXPR_REG_H
#define SLUICE_K_EXPR_REG_H

#include "sluice_k/expr_prog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SL_XR_MAX_INS 32
#define SL_XR_REGS 4

enum sl_xr_op {
    SL_XR_COL,     /* R[dst] = column slot a (sub: enum sl_xp_store, integer-like or D64) */
    SL_XR_LIT,     /* R[dst] = imm */
    SL_XR_NULL,    /* R[dst] = NULL */
    SL_XR_RESCALE, /* R[dst] *= imm where |R[dst]| <= lim (I2D, D2D); NULL -> 0 */
    SL_XR_ARITH,   /* R[dst] = R[dst] (sub: SL_XA_ADD/SUB/MUL) R[dst + 1]; lim > 0: the
                    * |result| must stay below it (10^precision); flag 1: a date (int32) */
    SL_XR_NEG,
    SL_XR_CMP,     /* sub: SL_XC_* */
    SL_XR_AND, SL_XR_OR, SL_XR_NOT,
    SL_XR_ISNULL   /* sub 1: IS NULL, 0: IS NOT NULL */
};

struct sl_xr_ins {
    uint8_t op, dst, sub, flag;
    int32_t a;
    int64_t imm;
    int64_t lim;
};

struct sl_xr_prog {
    int32_t n;
    struct sl_xr_ins ins[SL_XR_MAX_INS];
};

enum { SL_XR_OK = 0, SL_XR_UNSURE = 1 };

/* The four registers as values, not an array in local memory: selected by index. */
SL_XP_HD static inline int64_t sl__xr_get(int64_t r0, int64_t r1, int64_t r2, int64_t r3, int i)
{
    return i == 0 ? r0 : i == 1 ? r1 : i == 2 ? r2 : r3;
}

/* Runs program x (recognized by sl__xr_from_prog) on row r of cols: *out and *out_null,
 * or SL_XR_UNSURE when the interpreter must answer for the row. */
SL_XP_HD static inline int sl__xr_row(const struct sl_xr_prog *x, const struct sl_xp_cols *c,
                                      int64_t r, int64_t *out, int *out_null)
{
    int64_t r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    unsigned nm = 0; /* bit i: register i is NULL */
    for (int k = 0; k < x->n; k++) {
        const struct sl_xr_ins *in = &x->ins[k];
        const int d = in->dst;
        int64_t v = sl__xr_get(r0, r1, r2, r3, d);
        int64_t y = sl__xr_get(r0, r1, r2, r3, d + 1);
        unsigned n = (nm >> d) & 1, yn = (nm >> (d + 1)) & 1;
        switch (in->op) {
        case SL_XR_COL:
            n = (unsigned)sl__xp_null_at(c, in->a, r);
            v = (int64_t)sl__xp_load(c, in->a, in->sub, r).d;
            break;
        case SL_XR_LIT: v = in->imm, n = 0; break;
        case SL_XR_NULL: v = 0, n = 1; break;
        case SL_XR_RESCALE:
            if (n) {
                v = 0;
                break;
            }
            if (v > in->lim || v < -in->lim)
                return SL_XR_UNSURE;
            {
                __int128 p = (__int128)v * in->imm;
                if (p != (__int128)(int64_t)p)
                    return SL_XR_UNSURE;
                v = (int64_t)p;
            }
            break;
        case SL_XR_ARITH: {
            __int128 p = in->sub == SL_XA_ADD   ? (__int128)v + y
                         : in->sub == SL_XA_SUB ? (__int128)v - y
                                                : (__int128)v * y;
            if (p != (__int128)(int64_t)p)
                return SL_XR_UNSURE;
            v = (int64_t)p;
            if (in->lim > 0 && (v >= in->lim || v <= -in->lim))
                return SL_XR_UNSURE;
            if (in->flag && (v < INT32_MIN || v > INT32_MAX))
                return SL_XR_UNSURE;
            n |= yn;
            break;
        }
        case SL_XR_NEG:
            if (v == INT64_MIN)
                return SL_XR_UNSURE;
            v = -v;
            break;
        case SL_XR_CMP:
            v = sl__xp_cmp_holds(in->sub, (v > y) - (v < y));
            n |= yn;
            break;
        case SL_XR_AND: case SL_XR_OR: {
            int64_t dec = in->op == SL_XR_OR; /* the deciding value */
            if ((!n && v == dec) || (!yn && y == dec))
                v = dec, n = 0;
            else if (n || yn)
                v = 0, n = 1;
            else
                v = !dec;
            break;
        }
        case SL_XR_NOT: v = !v; break;
        case SL_XR_ISNULL: v = n == in->sub, n = 0; break;
        default: return SL_XR_UNSURE;
        }
        r0 = d == 0 ? v : r0;
        r1 = d == 1 ? v : r1;
        r2 = d == 2 ? v : r2;
        r3 = d == 3 ? v : r3;
        nm = (nm & ~(1u << d)) | (n << d);
    }
    *out = r0;
    *out_null = (int)(nm & 1);
    return SL_XR_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_EXPR_REG_H */
