/* Recognizing filter programs that are an OR of ANDs of simple tests
 * (sluice_k/expr_conj.h).
 *
 * The program is replayed on a stack of what each value is (a column, a constant, a run
 * of tests) instead of values; anything else refuses. The tests are appended in the
 * program's order, so every boolean value on the stack is a contiguous run of them: an
 * AND of two conjunctions joins their runs into one conjunction, an OR of two runs
 * keeps their conjunctions; an AND over an OR (which would need distributing) refuses.
 * A constant's conversion (I2D, D2D: an integer literal compared with a decimal column)
 * is folded here with the interpreter's own sl__xp_rescale; a constant that then does
 * not fit 64 bits (or whose conversion fails, which the interpreter must report)
 * refuses, as does a column that the program converts: the general path takes those. */
#include "expr_prog.h"

enum item_kind { IT_COL, IT_CONST, IT_BOOL };

struct item {
    enum item_kind kind;
    int slot, store; /* IT_COL */
    __int128 v;      /* IT_CONST */
    int first, ors;  /* IT_BOOL: its first test, its conjunctions */
};

/* The comparison `a op b` read as `b op' a`. */
static int swapped(int op)
{
    switch (op) {
    case SL_XC_LT: return SL_XC_GT;
    case SL_XC_LE: return SL_XC_GE;
    case SL_XC_GT: return SL_XC_LT;
    case SL_XC_GE: return SL_XC_LE;
    default: return op; /* EQ, NE */
    }
}

/* A test from the two operands of a CMP of kind `kind`; false when it is none. */
static bool term_of(int op, int kind, const struct item *x, const struct item *y,
                    struct sl_xj_term *t)
{
    if (kind != SL_XK_I && kind != SL_XK_D)
        return false;
    if (x->kind == IT_CONST && y->kind == IT_COL)
        return term_of(swapped(op), kind, y, x, t);
    if (x->kind != IT_COL || (y->kind != IT_COL && y->kind != IT_CONST))
        return false;
    *t = (struct sl_xj_term){.form = y->kind == IT_COL ? SL_XJ_COLS : SL_XJ_LIT,
                             .cmp = (uint8_t)op, .sa = (uint8_t)x->store, .a = x->slot};
    if (y->kind == IT_COL) {
        t->sb = (uint8_t)y->store;
        t->b = y->slot;
        return true;
    }
    if (y->v > INT64_MAX || y->v < INT64_MIN)
        return false;
    t->imm = (int64_t)y->v;
    return true;
}

bool sl__xj_from_prog(const struct sl_xp_prog *p, struct sl_xj_conj *j)
{
    struct item st[SL_XP_STACK];
    int sp = 0;
    j->n = 0;
    for (int k = 0; k < p->n_ins; k++) {
        const struct sl_xp_ins *in = &p->ins[k];
        switch (in->op) {
        case SL_XP_COL:
            if (sp == SL_XP_STACK || !sl__xj_store_ok(in->sub) ||
                (in->kind != SL_XK_I && in->kind != SL_XK_D))
                return false;
            st[sp++] = (struct item){.kind = IT_COL, .slot = in->a, .store = in->sub};
            break;
        case SL_XP_LIT:
            if (sp == SL_XP_STACK || (in->kind != SL_XK_I && in->kind != SL_XK_D))
                return false;
            st[sp++] = (struct item){.kind = IT_CONST, .v = in->kind == SL_XK_D
                                                                ? p->pool[in->a].d
                                                                : p->pool[in->a].i};
            break;
        case SL_XP_I2D: case SL_XP_D2D: /* only of a constant: folded */
            if (sp < 1 || st[sp - 1].kind != IT_CONST ||
                sl__xp_rescale(st[sp - 1].v, p->pool[in->a].d, p->pool[in->a + 1].d, in->sub,
                               &st[sp - 1].v))
                return false;
            break;
        case SL_XP_CMP:
            if (sp < 2 || j->n == SL_XJ_MAX_TERMS ||
                !term_of(in->sub, in->kind, &st[sp - 2], &st[sp - 1], &j->t[j->n]))
                return false;
            j->t[j->n].last = 1;
            st[--sp - 1] = (struct item){.kind = IT_BOOL, .first = j->n++, .ors = 1};
            break;
        case SL_XP_DICT:
            if (sp == SL_XP_STACK || j->n == SL_XJ_MAX_TERMS)
                return false;
            j->t[j->n] = (struct sl_xj_term){.form = SL_XJ_DICT, .last = 1, .a = in->a,
                                             .imm = in->imm};
            st[sp++] = (struct item){.kind = IT_BOOL, .first = j->n++, .ors = 1};
            break;
        case SL_XP_AND: case SL_XP_OR: {
            if (sp < 2)
                return false;
            struct item *x = &st[sp - 2], *y = &st[sp - 1];
            if (x->kind != IT_BOOL || y->kind != IT_BOOL)
                return false;
            if (in->op == SL_XP_AND) {
                if (x->ors != 1 || y->ors != 1)
                    return false;
                j->t[y->first - 1].last = 0; /* x's run goes on into y's */
            } else {
                x->ors += y->ors;
            }
            sp--;
            break;
        }
        default:
            return false;
        }
    }
    return sp == 1 && st[0].kind == IT_BOOL;
}
