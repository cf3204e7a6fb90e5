/* Expression programs: a bound filter or project expression compiled on the host
 * (operators/expr/expr_prog.c) into a postfix program over a small value stack, and the
 * per-row interpreter that runs it. The interpreter is one function for C and CUDA
 * (`static inline SL_HD`, as sluice_k/gen_math.h), so the host test of the compiler
 * (tests/unit/expr/test_expr_prog.c) runs the very code the GPU kernel runs.
 *
 * Values are int64 (integers, booleans 0/1, dates in days, timestamps in microseconds),
 * double, int128 (decimals scaled by their type's scale, uint64), or strings (views of
 * utf8/large_utf8 bytes in the column or of literals in the program): the CPU
 * evaluator's kinds (operators/expr/expr.h), with its rules: int64 + - * overflow and
 * decimal results past their precision are errors (never a wrap) unless the row is NULL,
 * integer / and % by zero give NULL, floats order NaN above everything and equal to
 * itself, strings order by bytes, AND and OR are three-valued, every operand is
 * evaluated.
 *
 * The program travels as a kernel parameter (no upload; __grid_constant__, so that views
 * into its string bytes need no per-thread copy), so its size is bounded: the compiler
 * refuses larger expressions, which then stay on the CPU.
 *
 * This header includes no CUDA or sluice header (only <math.h>, <stdint.h> and, on the
 * host, <string.h>). Its LIKE matchers and character count are the CPU evaluator's too
 * (expr_str.c), so both devices answer alike by construction.
 */
#ifndef SLUICE_K_EXPR_PROG_H
#define SLUICE_K_EXPR_PROG_H

#include <math.h>
#include <stdint.h>
#ifndef __CUDA_ARCH__
#include <string.h> /* memcmp, memmem (with _GNU_SOURCE) */
#endif

#ifdef __CUDACC__
#define SL_XP_HD __host__ __device__
#else
#define SL_XP_HD
#endif

#ifdef __CUDA_ARCH__ /* never fused into an FMA: the host's results, bit for bit */
#define SL_XP_DMUL(a, b) __dmul_rn((a), (b))
#define SL_XP_DADD(a, b) __dadd_rn((a), (b))
#define SL_XP_DSUB(a, b) __dsub_rn((a), (b))
#else
#define SL_XP_DMUL(a, b) ((a) * (b))
#define SL_XP_DADD(a, b) ((a) + (b))
#define SL_XP_DSUB(a, b) ((a) - (b))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SL_XP_MAX_INS 96   /* instructions */
#define SL_XP_MAX_POOL 32  /* constants (literals, powers of ten, IN lists) */
#define SL_XP_MAX_COLS 16  /* input columns read */
#define SL_XP_STACK 16     /* value stack depth */
#define SL_XP_MAX_SBYTES 448 /* bytes of string literals and LIKE patterns */

/* Value kinds on the stack. S: a string, as a view of its bytes (pointer, length). */
enum sl_xp_kind { SL_XK_I = 0, SL_XK_F = 1, SL_XK_D = 2, SL_XK_S = 3 };

/* How a column is stored (SL_XP_COL's sub). */
enum sl_xp_store {
    SL_XS_I8, SL_XS_I16, SL_XS_I32, SL_XS_I64, SL_XS_U8, SL_XS_U16, SL_XS_U32,
    SL_XS_U64,   /* read as int128 (decimal(20,0)) */
    SL_XS_F32, SL_XS_F64, SL_XS_BOOL,
    SL_XS_D64, SL_XS_D128,  /* decimals, read as int128 */
    SL_XS_STR32, SL_XS_STR64 /* utf8, large_utf8: offsets (data) and bytes (chars) */
};

/* LIKE patterns (SL_XP_LIKE's sub): the CPU evaluator's fast paths (expr_int.h's
 * enum ex_like, in its order). */
enum { SL_XL_EXACT, SL_XL_PREFIX, SL_XL_SUFFIX, SL_XL_CONTAINS, SL_XL_SEGMENTS, SL_XL_GENERAL };

enum sl_xp_op {
    SL_XP_COL,      /* push column a (sub: enum sl_xp_store; slot a of the columns) */
    SL_XP_DICT,     /* push table[imm + code of column a] (0/1); NULL where the row is */
    SL_XP_LIT,      /* push pool[a] */
    SL_XP_NULL,     /* push NULL */
    SL_XP_I2F,      /* top: int64 -> double */
    SL_XP_D2F,      /* top: int128 of pool[a] = 10^scale -> double (one rounding) */
    SL_XP_I2D,      /* top: int64 -> int128 * pool[a] (10^k); |v| > pool[a+1]: sub 1
                     * saturates to +-(10^38 + 1), else an error */
    SL_XP_D2D,      /* top: int128 rescaled, as I2D */
    SL_XP_D2TS,     /* top: days -> microseconds */
    SL_XP_ARITH,    /* sub: SL_XA_*, kind; D: |result| < pool[a] (10^precision); flag 1:
                     * the int64 result is a date (must fit int32) */
    SL_XP_NEG,
    SL_XP_CMP,      /* sub: SL_XC_*, kind of both operands */
    SL_XP_AND, SL_XP_OR, SL_XP_NOT,
    SL_XP_ISNULL,   /* sub 1: IS NULL, 0: IS NOT NULL */
    SL_XP_IN,       /* top IN pool[a .. a + imm) (kind); sub 1: NOT IN */
    SL_XP_CASE,     /* a WHEN/THEN pairs then, with sub 1, an ELSE value, all on the stack */
    SL_XP_COALESCE, /* the first non-NULL of the top a values */
    SL_XP_EXTRACT,  /* sub: 0 year, 1 month, 2 day; flag 1: of a timestamp */
    SL_XP_STR,      /* push the string sbytes[a .. a + imm) */
    SL_XP_LIKE,     /* top (a string) LIKE the pattern sbytes[a .. a + imm); sub: SL_XL_*;
                     * flag bit 0: NOT LIKE (NULL stays NULL); bit 1: a GPU searches a byte
                     * at a time (debug_gpu_generic) */
    SL_XP_LENGTH    /* top (a string) -> its UTF-8 characters */
};
enum { SL_XA_ADD, SL_XA_SUB, SL_XA_MUL, SL_XA_DIV, SL_XA_MOD };
enum { SL_XC_EQ, SL_XC_NE, SL_XC_LT, SL_XC_LE, SL_XC_GT, SL_XC_GE };

struct sl_xp_ins {
    uint8_t op, kind, sub, flag;
    int32_t a;
    int64_t imm;
};

/* A string on the stack: a view of bytes in the column or in the program. */
struct sl_xp_str {
    const char *p;
    int64_t n;
};

typedef union sl_xp_val {
    int64_t i;
    double f;
    __int128 d;
    struct sl_xp_str s;
} sl_xp_val;

/* String constants of IN lists are pool entries holding (offset in sbytes << 32) | length. */
struct sl_xp_prog {
    int32_t n_ins;
    int32_t n_cols;                 /* column slots read */
    int32_t n_pool;                 /* constants */
    int32_t n_sbytes;               /* string bytes used */
    int32_t col[SL_XP_MAX_COLS];    /* slot -> input column index (host side) */
    struct sl_xp_ins ins[SL_XP_MAX_INS];
    sl_xp_val pool[SL_XP_MAX_POOL];
    char sbytes[SL_XP_MAX_SBYTES];  /* string literals and patterns */
};

/* The columns a program reads, by slot: values (offset applied; strings: their offsets),
 * validity bytes (NULL: no nulls), the validity's bit offset, and strings' bytes. */
struct sl_xp_cols {
    const void *data[SL_XP_MAX_COLS];
    const uint8_t *valid[SL_XP_MAX_COLS];
    int64_t voff[SL_XP_MAX_COLS];
    const char *chars[SL_XP_MAX_COLS];
};

/* ---------------- strings, by the CPU evaluator's rules (expr_str.c) ---------------- */

/* Byte order (memcmp's, unsigned), then the shorter first: -1, 0 or 1. */
SL_XP_HD static inline int sl__xp_str_cmp(struct sl_xp_str x, struct sl_xp_str y)
{
    int64_t n = x.n < y.n ? x.n : y.n;
    for (int64_t k = 0; k < n; k++) {
        unsigned char a = (unsigned char)x.p[k], b = (unsigned char)y.p[k];
        if (a != b)
            return a < b ? -1 : 1;
    }
    return (x.n > y.n) - (x.n < y.n);
}

/* The host (the CPU evaluator, which shares these matchers) uses the C library's
 * memcmp and memmem; a GPU thread compares byte by byte. */
SL_XP_HD static inline int sl__xp_bytes_eq(const char *a, const char *b, int64_t n)
{
#ifdef __CUDA_ARCH__
    for (int64_t k = 0; k < n; k++)
        if (a[k] != b[k])
            return 0;
    return 1;
#else
    return n <= 0 || memcmp(a, b, (size_t)n) == 0;
#endif
}

/* An aligned 8-byte word of string bytes as the GPU reads it (__ldg: the columns do not
 * change while a kernel runs); the host test reads it with memcpy. */
#ifdef __CUDA_ARCH__
#define SL_XP_LDW(a) __ldg((const unsigned long long *)(a))
#else
#define SL_XP_LDW(a) sl__xp_ldw_host((const void *)(a))
static inline unsigned long long sl__xp_ldw_host(const void *a)
{
    unsigned long long w;
    memcpy(&w, a, 8);
    return w;
}
#endif

/* The aligned 8-byte word at wa (little-endian: byte k of it is bits 8k..8k+7), reading
 * only its bytes inside [lo, hi) (the others 0): a whole word when it lies inside, so no
 * read leaves the string. */
SL_XP_HD static inline unsigned long long sl__xp_word(uintptr_t wa, uintptr_t lo, uintptr_t hi)
{
    if (wa >= lo && wa + 8 <= hi)
        return SL_XP_LDW(wa);
    unsigned long long x = 0;
    for (int b = 0; b < 8; b++)
        if (wa + (uintptr_t)b >= lo && wa + (uintptr_t)b < hi)
            x |= (unsigned long long)*(const unsigned char *)(wa + (uintptr_t)b) << (8 * b);
    return x;
}

/* sl__xp_find as a GPU thread runs it: the candidates' first bytes looked for in aligned
 * 8-byte words, a load per word instead of one per byte (a warp's threads each read their
 * own string: byte loads cost as many L1 wavefronts as word loads, eight times as often;
 * TPC-H Q13's NOT LIKE '%special%requests%' over 15M comments took 3.4 ms so), the rest
 * of a candidate compared byte by byte. Same answers as the host's memmem
 * (tests/unit/expr/test_expr_prog.c). */
SL_XP_HD static inline int64_t sl__xp_find_words(const char *s, int64_t sn, int64_t from,
                                                 const char *w, int64_t wn)
{
    if (wn == 0)
        return from <= sn ? from : -1;
    if (from + wn > sn)
        return -1;
    const uintptr_t lo = (uintptr_t)s, hi = lo + (uintptr_t)sn;
    const uintptr_t first = lo + (uintptr_t)from, last = lo + (uintptr_t)(sn - wn);
    const unsigned c0 = (unsigned char)w[0];
    for (uintptr_t wa = first & ~(uintptr_t)7; wa <= last; wa += 8) {
        const unsigned long long x = sl__xp_word(wa, lo, hi);
        for (int b = 0; b < 8; b++) {
            const uintptr_t a = wa + (uintptr_t)b;
            if (a < first || a > last || ((x >> (8 * b)) & 0xFF) != c0)
                continue;
            int64_t k = 1;
            while (k < wn && *(const unsigned char *)(a + (uintptr_t)k) == (unsigned char)w[k])
                k++;
            if (k == wn)
                return (int64_t)(a - lo);
        }
    }
    return -1;
}

/* The same, a byte at a time (a GPU program's LIKE with debug_gpu_generic: the search as
 * it was before the word search, for A/B runs). */
SL_XP_HD static inline int64_t sl__xp_find_bytes(const char *s, int64_t sn, int64_t from,
                                                 const char *w, int64_t wn)
{
    for (int64_t at = from; at + wn <= sn; at++)
        if (wn == 0 || (s[at] == w[0] && sl__xp_bytes_eq(s + at + 1, w + 1, wn - 1)))
            return at;
    return -1;
}

/* The first place at or after `from` (<= sn) where w (wn bytes) occurs in s (sn bytes),
 * or -1: the leftmost match. by_bytes: the GPU's byte-at-a-time search. */
SL_XP_HD static inline int64_t sl__xp_find_by(const char *s, int64_t sn, int64_t from,
                                              const char *w, int64_t wn, int by_bytes)
{
#ifdef __CUDA_ARCH__
    return by_bytes ? sl__xp_find_bytes(s, sn, from, w, wn) : sl__xp_find_words(s, sn, from, w, wn);
#else
    (void)by_bytes;
    if (wn == 0)
        return from;
    const char *hit = (const char *)memmem(s + from, (size_t)(sn - from), w, (size_t)wn);
    return hit ? hit - s : -1;
#endif
}

SL_XP_HD static inline int64_t sl__xp_find(const char *s, int64_t sn, int64_t from, const char *w,
                                           int64_t wn)
{
    return sl__xp_find_by(s, sn, from, w, wn, 0);
}

/* Bytes of the UTF-8 character starting with byte b (1 for a stray byte). */
SL_XP_HD static inline int64_t sl__xp_char_bytes(unsigned char b)
{
    return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/* '%' any run of characters, '_' one character; iterative with one backtrack point (the
 * last '%'), which is enough because '%' absorbs any run. The CPU evaluator's matcher
 * too (expr_str.c). */
SL_XP_HD static inline int sl__xp_like_general(const char *p, int64_t pn, const char *s, int64_t sn)
{
    int64_t pi = 0, si = 0, star = -1, mark = 0;
    while (si < sn) {
        if (pi < pn && p[pi] == '%') {
            star = ++pi;
            mark = si;
        } else if (pi < pn && p[pi] == '_') {
            pi++;
            si += sl__xp_char_bytes((unsigned char)s[si]);
        } else if (pi < pn && p[pi] == s[si]) {
            pi++;
            si++;
        } else if (star >= 0) {
            pi = star;
            mark += sl__xp_char_bytes((unsigned char)s[mark]);
            si = mark;
        } else {
            return 0;
        }
    }
    while (pi < pn && p[pi] == '%')
        pi++;
    return pi == pn && si == sn;
}

/* '%' and literal runs only ('%special%requests%'): the first run a prefix, the last a
 * suffix, each run between found leftmost after the one before it (expr_str.c). */
SL_XP_HD static inline int sl__xp_like_segments_by(const char *p, int64_t pn, const char *s,
                                                   int64_t sn, int by_bytes)
{
    int64_t head = 0, tail = 0;
    while (head < pn && p[head] != '%')
        head++;
    while (tail < pn - head && p[pn - 1 - tail] != '%')
        tail++;
    if (head + tail > sn || !sl__xp_bytes_eq(s, p, head) ||
        !sl__xp_bytes_eq(s + sn - tail, p + pn - tail, tail))
        return 0;
    int64_t si = head, end = sn - tail;
    for (int64_t pi = head; pi < pn - tail;) {
        if (p[pi] == '%') {
            pi++;
            continue;
        }
        int64_t q = pi;
        while (p[q] != '%')
            q++;
        int64_t hit = sl__xp_find_by(s, end, si, p + pi, q - pi, by_bytes);
        if (hit < 0)
            return 0;
        si = hit + (q - pi);
        pi = q;
    }
    return 1;
}

SL_XP_HD static inline int sl__xp_like_segments(const char *p, int64_t pn, const char *s,
                                                int64_t sn)
{
    return sl__xp_like_segments_by(p, pn, s, sn, 0);
}

/* s LIKE pattern p (pn bytes) of fast path `kind` (SL_XL_*): 1 or 0. by_bytes: the GPU
 * searches a byte at a time (sl__xp_find_by). */
SL_XP_HD static inline int sl__xp_like_by(int kind, const char *p, int64_t pn, struct sl_xp_str s,
                                          int by_bytes)
{
    switch (kind) {
    case SL_XL_EXACT: return s.n == pn && sl__xp_bytes_eq(s.p, p, pn);
    case SL_XL_PREFIX: return s.n >= pn - 1 && sl__xp_bytes_eq(s.p, p, pn - 1);
    case SL_XL_SUFFIX: return s.n >= pn - 1 && sl__xp_bytes_eq(s.p + s.n - (pn - 1), p + 1, pn - 1);
    case SL_XL_CONTAINS: return sl__xp_find_by(s.p, s.n, 0, p + 1, pn - 2, by_bytes) >= 0;
    case SL_XL_SEGMENTS: return sl__xp_like_segments_by(p, pn, s.p, s.n, by_bytes);
    default: return sl__xp_like_general(p, pn, s.p, s.n);
    }
}

SL_XP_HD static inline int sl__xp_like(int kind, const char *p, int64_t pn, struct sl_xp_str s)
{
    return sl__xp_like_by(kind, p, pn, s, 0);
}

/* Characters of a UTF-8 string: the bytes that do not continue one (expr_str.c). */
SL_XP_HD static inline int64_t sl__xp_char_count(struct sl_xp_str s)
{
    int64_t k = 0;
    for (int64_t b = 0; b < s.n; b++)
        k += ((unsigned char)s.p[b] & 0xC0) != 0x80;
    return k;
}

/* The string constant `packed` ((offset << 32) | length) of program p. */
SL_XP_HD static inline struct sl_xp_str sl__xp_sconst(const struct sl_xp_prog *p, int64_t packed)
{
    struct sl_xp_str v;
    v.p = p->sbytes + (packed >> 32);
    v.n = packed & 0xFFFFFFFF;
    return v;
}

/* ---------------- conversions, shared by the interpreter and the compiler ---------------- */

/* A decimal of scale 10^k (p) as the nearest double: one rounding while exact below 2^53;
 * above, the integer part rounds once and the fraction cannot change it (expr_eval.c). */
SL_XP_HD static inline double sl__xp_d2f(__int128 v, __int128 p)
{
    double scale = (double)p;
    if (v < ((__int128)1 << 53) && v > -((__int128)1 << 53))
        return (double)v / scale;
    return SL_XP_DADD((double)(v / p), (double)(v % p) / scale);
}

/* v * mul where |v| <= lim, else saturated (sat) or an overflow (returns 1). */
SL_XP_HD static inline int sl__xp_rescale(__int128 v, __int128 mul, __int128 lim, int sat,
                                         __int128 *out)
{
    if (v > lim || v < -lim) {
        __int128 big = (__int128)10000000000000000000ull * (__int128)10000000000000000000ull + 1;
        *out = v > 0 ? big : -big;
        return !sat;
    }
    *out = v * mul;
    return 0;
}

SL_XP_HD static inline int sl__xp_cmp_holds(int op, int c)
{
    switch (op) {
    case SL_XC_EQ: return c == 0;
    case SL_XC_NE: return c != 0;
    case SL_XC_LT: return c < 0;
    case SL_XC_LE: return c <= 0;
    case SL_XC_GT: return c > 0;
    default: return c >= 0;
    }
}

/* Three-way comparison of two values of one kind (floats: NaN largest, equal to itself). */
SL_XP_HD static inline int sl__xp_cmp(int kind, sl_xp_val x, sl_xp_val y)
{
    if (kind == SL_XK_I)
        return (x.i > y.i) - (x.i < y.i);
    if (kind == SL_XK_D)
        return (x.d > y.d) - (x.d < y.d);
    if (kind == SL_XK_S)
        return sl__xp_str_cmp(x.s, y.s);
    int an = x.f != x.f, bn = y.f != y.f;
    if (an || bn)
        return an - bn;
    return (x.f > y.f) - (x.f < y.f);
}

/* The civil date of a day number (Howard Hinnant's algorithm; expr_date.c uses it too). */
SL_XP_HD static inline void sl__xp_civil(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* unit 0: the year, 1: the month, 2: the day of a day number. */
SL_XP_HD static inline int64_t sl__xp_extract(int64_t z, int unit)
{
    int64_t y;
    unsigned m, d;
    sl__xp_civil(z, &y, &m, &d);
    return unit == 0 ? y : unit == 1 ? (int64_t)m : (int64_t)d;
}

/* ---------------- the interpreter ---------------- */

/* Errors of a row (returned; the instruction that failed goes to *bad). */
enum { SL_XP_OK = 0, SL_XP_EOVERFLOW = 1, SL_XP_EBAD = 2 };

SL_XP_HD static inline sl_xp_val sl__xp_load(const struct sl_xp_cols *c, int slot, int store,
                                             int64_t r)
{
    sl_xp_val v;
    const void *p = c->data[slot];
    v.d = 0;
    switch (store) {
    case SL_XS_I8: v.i = ((const int8_t *)p)[r]; break;
    case SL_XS_I16: v.i = ((const int16_t *)p)[r]; break;
    case SL_XS_I32: v.i = ((const int32_t *)p)[r]; break;
    case SL_XS_U8: case SL_XS_BOOL: v.i = ((const uint8_t *)p)[r]; break;
    case SL_XS_U16: v.i = ((const uint16_t *)p)[r]; break;
    case SL_XS_U32: v.i = ((const uint32_t *)p)[r]; break;
    case SL_XS_U64: v.d = (__int128)((const uint64_t *)p)[r]; break;
    case SL_XS_F32: v.f = (double)((const float *)p)[r]; break;
    case SL_XS_F64: v.f = ((const double *)p)[r]; break;
    case SL_XS_D64: v.d = (__int128)((const int64_t *)p)[r]; break;
    case SL_XS_D128: v.d = ((const __int128 *)p)[r]; break;
    case SL_XS_STR32: {
        const int32_t *o = (const int32_t *)p;
        v.s.p = c->chars[slot] + o[r];
        v.s.n = o[r + 1] - o[r];
        break;
    }
    case SL_XS_STR64: {
        const int64_t *o = (const int64_t *)p;
        v.s.p = c->chars[slot] + o[r];
        v.s.n = o[r + 1] - o[r];
        break;
    }
    default: v.i = ((const int64_t *)p)[r]; break; /* I64 */
    }
    return v;
}

SL_XP_HD static inline int sl__xp_null_at(const struct sl_xp_cols *c, int slot, int64_t r)
{
    const uint8_t *v = c->valid[slot];
    if (!v)
        return 0;
    int64_t bit = c->voff[slot] + r;
    return !((v[bit >> 3] >> (bit & 7)) & 1);
}

/* int64 arithmetic with the CPU's overflow and division rules; 1 on overflow. */
SL_XP_HD static inline int sl__xp_arith_i(int op, int64_t x, int64_t y, int64_t *o, int *null)
{
    uint64_t u;
    switch (op) {
    case SL_XA_ADD:
        u = (uint64_t)x + (uint64_t)y;
        *o = (int64_t)u;
        return ((x ^ *o) & (y ^ *o)) < 0;
    case SL_XA_SUB:
        u = (uint64_t)x - (uint64_t)y;
        *o = (int64_t)u;
        return ((x ^ y) & (x ^ *o)) < 0;
    case SL_XA_MUL: {
        __int128 p = (__int128)x * y;
        *o = (int64_t)p;
        return p != (__int128)*o;
    }
    default: /* DIV, MOD */
        if (y == 0) {
            *o = 0;
            *null = 1;
            return 0;
        }
        if (y == -1) {
            *o = op == SL_XA_DIV ? (int64_t)(0 - (uint64_t)x) : 0;
            return op == SL_XA_DIV && x == INT64_MIN;
        }
        *o = op == SL_XA_DIV ? x / y : x % y;
        return 0;
    }
}

/* Decimal + - * (operands already at the result's scales); 1 when the result leaves
 * 128 bits or reaches lim (10^precision). */
SL_XP_HD static inline int sl__xp_arith_d(int op, __int128 x, __int128 y, __int128 lim,
                                          __int128 *o)
{
    unsigned __int128 u;
    int bad = 0;
    if (op == SL_XA_ADD) {
        u = (unsigned __int128)x + (unsigned __int128)y;
        *o = (__int128)u;
        bad = ((x ^ *o) & (y ^ *o)) < 0;
    } else if (op == SL_XA_SUB) {
        u = (unsigned __int128)x - (unsigned __int128)y;
        *o = (__int128)u;
        bad = ((x ^ y) & (x ^ *o)) < 0;
    } else if ((int64_t)x == x && (int64_t)y == y) {
        *o = (__int128)(int64_t)x * (int64_t)y;
    } else {
        __int128 ax = x < 0 ? -x : x, ay = y < 0 ? -y : y; /* |operands| < 2^127 */
        __int128 max = (__int128)(((unsigned __int128)1 << 127) - 1);
        bad = ax != 0 && ay > max / ax;
        *o = bad ? 0 : x * y;
    }
    return bad || *o >= lim || *o <= -lim;
}

/* Runs program p on row r: the value and nullness of the expression, or an error code
 * with the failing instruction in *bad. A NULL row never fails. */
SL_XP_HD static inline int sl__xp_eval_row(const struct sl_xp_prog *p, const struct sl_xp_cols *c,
                                           const uint8_t *tables, int64_t r, sl_xp_val *out,
                                           int *out_null, int *bad)
{
    sl_xp_val st[SL_XP_STACK];
    unsigned char nu[SL_XP_STACK];
    int sp = 0; /* entries in use */
    for (int k = 0; k < p->n_ins; k++) {
        const struct sl_xp_ins *in = &p->ins[k];
        int err = 0;
        switch (in->op) {
        case SL_XP_COL:
            nu[sp] = (unsigned char)sl__xp_null_at(c, in->a, r);
            st[sp++] = sl__xp_load(c, in->a, in->sub, r);
            break;
        case SL_XP_DICT: {
            int32_t code = ((const int32_t *)c->data[in->a])[r];
            nu[sp] = (unsigned char)sl__xp_null_at(c, in->a, r);
            st[sp].d = 0;
            st[sp].i = nu[sp] ? 0 : tables[in->imm + code];
            sp++;
            break;
        }
        case SL_XP_LIT: nu[sp] = 0; st[sp++] = p->pool[in->a]; break;
        case SL_XP_NULL: nu[sp] = 1; st[sp++].d = 0; break;
        case SL_XP_I2F: st[sp - 1].f = (double)st[sp - 1].i; break;
        case SL_XP_D2F: st[sp - 1].f = sl__xp_d2f(st[sp - 1].d, p->pool[in->a].d); break;
        case SL_XP_I2D: case SL_XP_D2D: {
            __int128 v = in->op == SL_XP_I2D ? (__int128)st[sp - 1].i : st[sp - 1].d;
            err = sl__xp_rescale(v, p->pool[in->a].d, p->pool[in->a + 1].d, in->sub,
                                 &st[sp - 1].d);
            if (nu[sp - 1]) {
                st[sp - 1].d = 0;
                err = 0;
            }
            break;
        }
        case SL_XP_D2TS: st[sp - 1].i *= 86400000000LL; break;
        case SL_XP_ARITH: {
            sl_xp_val x = st[sp - 2], y = st[sp - 1], o;
            int n = nu[sp - 2] | nu[sp - 1];
            o.d = 0;
            if (in->kind == SL_XK_I) {
                err = sl__xp_arith_i(in->sub, x.i, y.i, &o.i, &n);
                if (in->flag && !err)
                    err = o.i < INT32_MIN || o.i > INT32_MAX;
            } else if (in->kind == SL_XK_D) {
                err = sl__xp_arith_d(in->sub, x.d, y.d, p->pool[in->a].d, &o.d);
            } else {
                switch (in->sub) {
                case SL_XA_ADD: o.f = SL_XP_DADD(x.f, y.f); break;
                case SL_XA_SUB: o.f = SL_XP_DSUB(x.f, y.f); break;
                case SL_XA_MUL: o.f = SL_XP_DMUL(x.f, y.f); break;
                case SL_XA_DIV: o.f = x.f / y.f; break;
                default: o.f = fmod(x.f, y.f); break;
                }
            }
            if (n)
                err = 0;
            sp--;
            st[sp - 1] = o;
            nu[sp - 1] = (unsigned char)n;
            break;
        }
        case SL_XP_NEG:
            if (in->kind == SL_XK_F) {
                /* the sign bit flipped, as the host's negation does: the GPU's neg.f64
                 * may turn a NaN into another NaN (PTX leaves it unspecified) */
                st[sp - 1].i = (int64_t)((uint64_t)st[sp - 1].i ^ (uint64_t)1 << 63);
            } else if (in->kind == SL_XK_D) {
                st[sp - 1].d = -st[sp - 1].d;
            } else {
                err = st[sp - 1].i == INT64_MIN && !nu[sp - 1];
                st[sp - 1].i = st[sp - 1].i == INT64_MIN ? 0 : -st[sp - 1].i;
            }
            break;
        case SL_XP_CMP: {
            int h = sl__xp_cmp_holds(in->sub, sl__xp_cmp(in->kind, st[sp - 2], st[sp - 1]));
            sp--;
            nu[sp - 1] |= nu[sp];
            st[sp - 1].d = 0;
            st[sp - 1].i = h;
            break;
        }
        case SL_XP_AND: case SL_XP_OR: {
            int dec = in->op == SL_XP_OR; /* the deciding value */
            int an = nu[sp - 2], bn = nu[sp - 1];
            int64_t x = st[sp - 2].i, y = st[sp - 1].i;
            sp--;
            if ((!an && x == dec) || (!bn && y == dec)) {
                st[sp - 1].i = dec;
                nu[sp - 1] = 0;
            } else if (an || bn) {
                st[sp - 1].i = 0;
                nu[sp - 1] = 1;
            } else {
                st[sp - 1].i = !dec;
                nu[sp - 1] = 0;
            }
            break;
        }
        case SL_XP_NOT: st[sp - 1].i = !st[sp - 1].i; break;
        case SL_XP_ISNULL:
            st[sp - 1].d = 0;
            st[sp - 1].i = nu[sp - 1] == in->sub;
            nu[sp - 1] = 0;
            break;
        case SL_XP_IN: {
            int hit = 0;
            for (int64_t j = 0; j < in->imm; j++) {
                sl_xp_val y = p->pool[in->a + j];
                if (in->kind == SL_XK_S)
                    y.s = sl__xp_sconst(p, y.i);
                hit |= sl__xp_cmp(in->kind, st[sp - 1], y) == 0;
            }
            st[sp - 1].d = 0;
            st[sp - 1].i = hit ^ in->sub;
            break;
        }
        case SL_XP_CASE: {
            int m = 2 * in->a + in->sub, base = sp - m, pick = -1;
            for (int j = 0; j < in->a && pick < 0; j++)
                if (!nu[base + 2 * j] && st[base + 2 * j].i)
                    pick = base + 2 * j + 1;
            if (pick < 0 && in->sub)
                pick = sp - 1;
            sl_xp_val v;
            v.d = 0;
            unsigned char vn = 1;
            if (pick >= 0) {
                v = st[pick];
                vn = nu[pick];
            }
            sp = base + 1;
            st[base] = v;
            nu[base] = vn;
            break;
        }
        case SL_XP_COALESCE: {
            int base = sp - in->a, pick = -1;
            for (int j = base; j < sp && pick < 0; j++)
                if (!nu[j])
                    pick = j;
            sl_xp_val v;
            v.d = 0;
            if (pick >= 0)
                v = st[pick];
            sp = base + 1;
            st[base] = v;
            nu[base] = pick < 0;
            break;
        }
        case SL_XP_EXTRACT: {
            int64_t x = st[sp - 1].i, day = x;
            if (in->flag) { /* floor division by a day */
                day = x / 86400000000LL;
                day -= (x % 86400000000LL) < 0;
            }
            st[sp - 1].i = sl__xp_extract(day, in->sub);
            break;
        }
        case SL_XP_STR:
            nu[sp] = 0;
            st[sp].d = 0;
            st[sp].s.p = p->sbytes + in->a;
            st[sp++].s.n = in->imm;
            break;
        case SL_XP_LIKE: { /* a NULL row is not matched: its answer is NULL anyway */
            int h = !nu[sp - 1] && sl__xp_like_by(in->sub, p->sbytes + in->a, in->imm,
                                                  st[sp - 1].s, in->flag & 2);
            st[sp - 1].d = 0;
            st[sp - 1].i = h ^ (in->flag & 1);
            break;
        }
        case SL_XP_LENGTH: {
            int64_t len = sl__xp_char_count(st[sp - 1].s);
            st[sp - 1].d = 0;
            st[sp - 1].i = len;
            break;
        }
        default:
            *bad = k;
            return SL_XP_EBAD;
        }
        if (err) {
            *bad = k;
            return SL_XP_EOVERFLOW;
        }
    }
    *out = st[0];
    *out_null = nu[0];
    return SL_XP_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_K_EXPR_PROG_H */
