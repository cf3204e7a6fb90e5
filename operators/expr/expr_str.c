/* Expressions: strings. Comparisons by bytes (SQL's default collation), LIKE with fast
 * paths for exact, prefix, suffix and contains patterns (the matchers of
 * sluice_k/expr_prog.h, which the GPU runs too), SUBSTRING and LENGTH counting UTF-8
 * characters as DuckDB does. Results are views into the input's bytes (SUBSTRING
 * copies nothing); bytes a node makes itself live in its scratch buffer. */
#include <string.h>

#include "expr_int.h"

char *ex_str_room(struct ex_ctx *c, int i, size_t bytes)
{
    struct ex_aux *x = &c->aux[i];
    if (bytes <= x->cap)
        return x->buf;
    size_t cap = x->cap ? x->cap : 256;
    while (cap < bytes)
        cap *= 2;
    char *nb = sl__realloc(x->buf, x->cap, cap);
    if (!nb)
        return NULL;
    x->buf = nb;
    x->cap = cap;
    return nb;
}

void ex_str_cmp(struct ex_ctx *c, int a, int b, enum ex_op op, uint8_t *o)
{
    const struct sl__expr_str *x = ex_vals(c, a), *y = ex_vals(c, b);
    for (int64_t r = 0; r < c->n; r++) {
        int cmp;
        if (op == EX_EQ || op == EX_NE) /* lengths first: most unequal strings stop there */
            cmp = x[r].n != y[r].n || (x[r].n && memcmp(x[r].p, y[r].p, (size_t)x[r].n));
        else
            cmp = sl__str_cmp(x[r].p, x[r].n, y[r].p, y[r].n);
        o[r] = ex_cmp_holds(op, cmp);
    }
}

enum ex_like ex_like_kind(const char *p, int64_t n)
{
    int64_t pct = 0;
    for (int64_t k = 0; k < n; k++) {
        if (p[k] == '_')
            return LIKE_GENERAL;
        pct += p[k] == '%';
    }
    if (pct == 0)
        return LIKE_EXACT;
    if (pct == 1 && p[n - 1] == '%')
        return LIKE_PREFIX;
    if (pct == 1 && p[0] == '%')
        return LIKE_SUFFIX;
    if (pct == 2 && n >= 2 && p[0] == '%' && p[n - 1] == '%')
        return LIKE_CONTAINS;
    return LIKE_SEGMENTS;
}

bool ex_like_match(const struct ex_node *n, const char *s, int64_t len)
{
    return sl__xp_like((int)n->like, n->str, n->slen, (struct sl_xp_str){s, len});
}

/* The first literal run of a '%'-led pattern without '_' ('%special%requests%':
 * "special"), which every matching string contains; false for other patterns. */
static bool like_needle(const struct ex_node *n, const char **w, int64_t *wn)
{
    if ((n->like != LIKE_CONTAINS && n->like != LIKE_SEGMENTS) || n->slen < 1 || n->str[0] != '%')
        return false;
    int64_t a = 1;
    while (a < n->slen && n->str[a] == '%')
        a++;
    int64_t b = a;
    while (b < n->slen && n->str[b] != '%')
        b++;
    *w = n->str + a;
    *wn = b - a;
    return *wn >= 2;
}

/* LIKE over strings that lie back to back in memory (a column's rows): the needle of
 * like_needle is searched once through all of their bytes, and only rows holding a
 * whole occurrence are matched against the pattern; every other row does not match.
 * One memmem over the vector instead of one call a row (TPC-H Q13's NOT LIKE
 * '%special%requests%' on 1.5M comments spent 40% of its CPU time in memmem calls). */
static bool like_contiguous(const struct ex_node *n, const struct sl__expr_str *x, int64_t len,
                            uint8_t *o, uint8_t want)
{
    const char *w;
    int64_t wn;
    if (len == 0 || !like_needle(n, &w, &wn))
        return false;
    for (int64_t r = 1; r < len; r++)
        if (x[r].p != x[r - 1].p + x[r - 1].n)
            return false;
    const char *base = x[0].p, *end = x[len - 1].p + x[len - 1].n;
    memset(o, !want, (size_t)len);
    int64_t r = 0;
    for (const char *at = base; at + wn <= end;) {
        const char *hit = memmem(at, (size_t)(end - at), w, (size_t)wn);
        if (!hit)
            break;
        while (x[r].p + x[r].n <= hit) /* the row holding the hit's first byte */
            r++;
        if (hit + wn <= x[r].p + x[r].n) { /* wholly inside row r: match the pattern */
            o[r] = ex_like_match(n, x[r].p, x[r].n) == want;
            if (++r == len)
                break;
            at = x[r].p;
        } else {
            at = hit + 1; /* spans two rows: look again from its next byte */
        }
    }
    return true;
}

int ex_like(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct sl__expr_str *x = ex_vals(c, n->a);
    uint8_t *o = ex_vals(c, i);
    ex_merge_nulls(c, i, n->a, -1);
    uint8_t want = n->op == EX_LIKE;
    if (like_contiguous(n, x, c->n, o, want))
        return SL_OK;
    for (int64_t r = 0; r < c->n; r++)
        o[r] = ex_like_match(n, x[r].p, x[r].n) == want;
    return SL_OK;
}

/* Characters of a UTF-8 string (bytes that do not continue a character). */
static int64_t char_count(const char *s, int64_t n)
{
    return sl__xp_char_count((struct sl_xp_str){s, n});
}

/* Byte offset of character `ch` (0 <= ch <= chars) of s. */
static int64_t char_offset(const char *s, int64_t n, int64_t ch)
{
    int64_t b = 0;
    while (ch-- > 0 && b < n)
        b += sl__xp_char_bytes((unsigned char)s[b]);
    return b < n ? b : n;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* SUBSTRING(s, from[, count]) as DuckDB: from > 0 counts characters from 1, 0 is just
 * before the first, from < 0 counts from the end; a negative count takes the characters
 * before `from`; the range is clipped to the string. */
int ex_substr(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const int *list = c->e->list + n->list;
    int rc;
    for (int k = 0; k < n->n_list; k++)
        if ((rc = ex_eval_node(c, list[k])) < 0)
            return rc;
    const struct sl__expr_str *x = ex_vals(c, n->a);
    const int64_t *from = ex_vals(c, list[0]);
    const int64_t *cnt = n->n_list > 1 ? ex_vals(c, list[1]) : NULL;
    struct sl__expr_str *o = ex_vals(c, i);
    ex_merge_nulls(c, i, n->a, list[0]);
    uint8_t *nu = ex_nulls(c, i);
    bool hn = *ex_has_null(c, i);
    for (int64_t r = 0; r < c->n; r++) {
        if (cnt && ex_null_at(c, list[1], r)) {
            nu[r] = 1;
            hn = true;
        }
        if (hn && nu[r]) {
            o[r] = (struct sl__expr_str){"", 0};
            continue;
        }
        int64_t len = char_count(x[r].p, x[r].n);
        int64_t f = from[r], start = f > 0 ? f - 1 : f == 0 ? -1 : sat_add(len, f), end = len;
        if (cnt) {
            end = sat_add(start, cnt[r]);
            if (cnt[r] < 0) {
                int64_t t = start;
                start = end;
                end = t;
            }
        }
        start = start < 0 ? 0 : start > len ? len : start;
        end = end < 0 ? 0 : end > len ? len : end;
        if (start >= end) {
            o[r] = (struct sl__expr_str){"", 0};
            continue;
        }
        if (len == x[r].n) { /* ASCII: characters are bytes */
            o[r] = (struct sl__expr_str){x[r].p + start, end - start};
            continue;
        }
        int64_t bs = char_offset(x[r].p, x[r].n, start);
        int64_t be = bs + char_offset(x[r].p + bs, x[r].n - bs, end - start);
        o[r] = (struct sl__expr_str){x[r].p + bs, be - bs};
    }
    *ex_has_null(c, i) = hn;
    return SL_OK;
}

void ex_length(struct ex_ctx *c, int i, const struct ex_node *n)
{
    const struct sl__expr_str *x = ex_vals(c, n->a);
    int64_t *o = ex_vals(c, i);
    ex_merge_nulls(c, i, n->a, -1);
    for (int64_t r = 0; r < c->n; r++)
        o[r] = char_count(x[r].p, x[r].n);
}
