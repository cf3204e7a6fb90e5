/* Recognizing programs that run in registers (sluice_k/expr_reg.h).
 *
 * The program is replayed on its stack positions: each instruction the register form
 * takes becomes one writing the register at its stack position; anything else (floats,
 * strings, dictionary lookups, division, CASE, IN, a stack deeper than the four
 * registers, a constant or a rescale factor past 64 bits) refuses, and the interpreter
 * runs the whole program as before. */
#include "expr_prog.h"

/* |v| as an int64 limit: clamped to INT64_MAX (a bigger one never binds 64-bit values
 * but INT64_MIN's, which then goes to the interpreter). */
static int64_t limit_of(__int128 v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

bool sl__xr_from_prog(const struct sl_xp_prog *p, struct sl_xr_prog *x)
{
    int sp = 0;
    x->n = 0;
    if (p->n_ins > SL_XR_MAX_INS)
        return false;
    for (int k = 0; k < p->n_ins; k++) {
        const struct sl_xp_ins *in = &p->ins[k];
        struct sl_xr_ins o = {.sub = in->sub, .flag = in->flag, .a = in->a};
        int pops = 0, push = 1;
        switch (in->op) {
        case SL_XP_COL:
            if (!sl__xj_store_ok(in->sub) || (in->kind != SL_XK_I && in->kind != SL_XK_D))
                return false;
            o.op = SL_XR_COL;
            break;
        case SL_XP_LIT: {
            __int128 v = in->kind == SL_XK_D ? p->pool[in->a].d : p->pool[in->a].i;
            if ((in->kind != SL_XK_I && in->kind != SL_XK_D) || v > INT64_MAX || v < INT64_MIN)
                return false;
            o.op = SL_XR_LIT;
            o.imm = (int64_t)v;
            break;
        }
        case SL_XP_NULL:
            if (in->kind != SL_XK_I && in->kind != SL_XK_D)
                return false;
            o.op = SL_XR_NULL;
            break;
        case SL_XP_I2D: case SL_XP_D2D: {
            __int128 mul = p->pool[in->a].d, lim = p->pool[in->a + 1].d;
            if (mul > INT64_MAX || mul < 1 || lim < 0)
                return false;
            o.op = SL_XR_RESCALE;
            o.imm = (int64_t)mul;
            o.lim = limit_of(lim);
            pops = 1;
            break;
        }
        case SL_XP_ARITH:
            if ((in->kind != SL_XK_I && in->kind != SL_XK_D) ||
                (in->sub != SL_XA_ADD && in->sub != SL_XA_SUB && in->sub != SL_XA_MUL))
                return false;
            o.op = SL_XR_ARITH;
            if (in->kind == SL_XK_D) {
                __int128 lim = p->pool[in->a].d;
                if (lim <= 0)
                    return false;
                o.lim = lim > INT64_MAX ? 0 : (int64_t)lim; /* 0: int64 never reaches it */
            } else {
                o.lim = 0;
            }
            o.flag = in->kind == SL_XK_I ? in->flag : 0;
            pops = 2;
            break;
        case SL_XP_NEG: case SL_XP_CMP:
            if (in->kind != SL_XK_I && in->kind != SL_XK_D)
                return false;
            o.op = in->op == SL_XP_NEG ? SL_XR_NEG : SL_XR_CMP;
            pops = in->op == SL_XP_NEG ? 1 : 2;
            break;
        case SL_XP_AND: case SL_XP_OR:
            o.op = in->op == SL_XP_AND ? SL_XR_AND : SL_XR_OR;
            pops = 2;
            break;
        case SL_XP_NOT: o.op = SL_XR_NOT, pops = 1; break;
        case SL_XP_ISNULL: o.op = SL_XR_ISNULL, pops = 1; break;
        default:
            return false;
        }
        if (sp < pops)
            return false;
        sp -= pops;
        o.dst = (uint8_t)sp;
        sp += push;
        if (sp > SL_XR_REGS)
            return false;
        x->ins[x->n++] = o;
    }
    return sp == 1;
}
