/* Inside of expressions: the node array shared by the parser (expr_parse.c) and the
 * evaluator (expr_eval.c). */
#ifndef SLUICE_EXPR_INT_H
#define SLUICE_EXPR_INT_H

#include "expr.h"

enum ex_op {
    EX_COL, EX_INT, EX_FLOAT,
    EX_NEG, EX_ADD, EX_SUB, EX_MUL, EX_DIV, EX_MOD,
    EX_EQ, EX_NE, EX_LT, EX_LE, EX_GT, EX_GE,
    EX_AND, EX_OR, EX_NOT, EX_IN, EX_NOT_IN, EX_IS_NULL, EX_IS_NOT_NULL, EX_CAST
};

struct ex_node {
    enum ex_op op;
    int pos;                 /* 1-based position in the option text */
    int a, b;                /* children (node indices), -1 if none */
    enum sl__expr_vk vk;     /* value kind, set by bind */
    enum sl_type type;       /* stored type: column type, CAST target, INT64/FLOAT64 */
    bool int_lit;            /* an integer literal (may turn into a float literal) */
    int col;                 /* EX_COL: input column index after bind */
    char *name;              /* EX_COL: the name as written */
    int64_t ival;            /* EX_INT */
    double fval;             /* EX_FLOAT */
    int list, n_list;        /* EX_IN: literal nodes list[list .. list+n_list) */
};

struct sl__expr {
    struct ex_node *nodes;
    int n_nodes, cap_nodes;
    int *list;               /* IN-list node indices */
    int n_list, cap_list;
    int root;
    char *text;              /* copy of the whole option text, for messages */
};

#endif /* SLUICE_EXPR_INT_H */
