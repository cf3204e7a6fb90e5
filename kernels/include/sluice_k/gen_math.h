/* The generators' per-row math, shared by the CPU operators (operators/gen, C) and their
 * CUDA kernels (kernels/gen): one copy of every function, so the two cannot drift.
 *
 * Everything here is a pure function of (seed, stream, row index, options), and
 * `static inline SL_HD`: __host__ __device__ under nvcc, plain C elsewhere. Integer math
 * gives the same bits everywhere. Double arithmetic goes through SL__GEN_DMUL/DADD,
 * which under nvcc are the round-to-nearest intrinsics that are never fused into an FMA
 * (nvcc contracts a*b+c by default; the host build, without -march, does not), so it is
 * exact too. Only libm calls may differ in the last ulp between glibc and CUDA: Zipf
 * draws (log/exp, host only here) and the normal draws of gen.blobs (log/cos).
 *
 * This header includes no CUDA or sluice header: the C side compiles it with or without
 * CUDA (operators/gen/gen_int.h includes it).
 */
#ifndef SLUICE_K_GEN_MATH_H
#define SLUICE_K_GEN_MATH_H

#include <math.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __CUDACC__
#define SL_HD __host__ __device__
#else
#define SL_HD
#endif

#ifdef __CUDA_ARCH__
#define SL__GEN_DMUL(a, b) __dmul_rn((a), (b))
#define SL__GEN_DADD(a, b) __dadd_rn((a), (b))
#define SL__GEN_DSUB(a, b) __dsub_rn((a), (b))
#else
#define SL__GEN_DMUL(a, b) ((a) * (b))
#define SL__GEN_DADD(a, b) ((a) + (b))
#define SL__GEN_DSUB(a, b) ((a) - (b))
#endif

/* Stream constants of the built-in generators (any distinct 64-bit values work). */
enum {
    SL__GEN_S_KEY = 0x4b45,     /* key values, permutation keys */
    SL__GEN_S_MATCH = 0x4d41,   /* fk: does this row match the PK domain */
    SL__GEN_S_MISS = 0x4d49,    /* fk: the non-matching key */
    SL__GEN_S_ZIPF = 0x5a49,    /* Zipf draws (rank) */
    SL__GEN_S_RANK = 0x5241,    /* permutation mapping Zipf ranks to key values */
    SL__GEN_S_NULL = 0x4e55,    /* null flags */
    SL__GEN_S_VALUE = 0x5641,   /* gen.uniform values */
    SL__GEN_S_CENTRE = 0x4345,  /* gen.blobs centres */
    SL__GEN_S_CLASS = 0x434c,   /* gen.blobs class of a point */
    SL__GEN_S_NOISE = 0x4e4f    /* gen.blobs Gaussian noise */
};

/* Value types of generated columns (the kernels know nothing of enum sl_type). */
enum sl__gen_vtype { SL__GEN_I32 = 0, SL__GEN_I64 = 1, SL__GEN_F32 = 2, SL__GEN_F64 = 3 };

/* The splitmix64 finalizer: a bijection of 64-bit values with good avalanche. */
SL_HD static inline uint64_t sl__gen_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* The 64 random bits of index `i` in stream `stream` of generator seed `seed`:
 * mix64(mix64(seed ^ stream * golden) + i * golden). Different streams and seeds give
 * independent-looking sequences; equal arguments always give equal bits. */
SL_HD static inline uint64_t sl__gen_hash(uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t s = sl__gen_mix64(seed ^ (stream * 0x9e3779b97f4a7c15ull));
    return sl__gen_mix64(s + (i + 1) * 0x9e3779b97f4a7c15ull);
}

/* A uniform double in [0, 1) from the top 53 bits of h (exact: 53 bits fit a double). */
SL_HD static inline double sl__gen_unit(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-53;
}

/* A uniform double in (0, 1) (never 0: safe for log). */
SL_HD static inline double sl__gen_unit_open(uint64_t h)
{
    return ((double)(h >> 11) + 0.5) * 0x1.0p-53;
}

/* A uniform integer in [0, n) from h (n > 0), by multiply-high: bias below n / 2^64. */
SL_HD static inline uint64_t sl__gen_below(uint64_t h, uint64_t n)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(h, n);
#else
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
#endif
}

/* Whether row `row` is NULL at `rate` (stream SL__GEN_S_NULL). */
SL_HD static inline bool sl__gen_is_null(uint64_t seed, double rate, uint64_t row)
{
    return rate > 0 && sl__gen_unit(sl__gen_hash(seed, SL__GEN_S_NULL, row)) < rate;
}

/* A pseudo-random bijection of [0, n): a 4-round balanced Feistel network over the
 * smallest even number of bits covering n, with cycle walking (values that land
 * outside [0, n) are encrypted again until they fall inside; fewer than 4 rounds of
 * walking on average since the domain is below 4n). sl__gen_perm_init (gen_int.h,
 * host) fills it. */
struct sl__gen_perm {
    uint64_t n;
    unsigned half_bits;   /* bits of each Feistel half */
    uint64_t half_mask;
    uint64_t keys[4];     /* round keys, from the seed */
};

SL_HD static inline uint64_t sl__gen_feistel(const struct sl__gen_perm *p, uint64_t x)
{
    uint64_t l = x >> p->half_bits, r = x & p->half_mask;
    for (int k = 0; k < 4; k++) {
        uint64_t f = sl__gen_mix64(r ^ p->keys[k]) & p->half_mask;
        uint64_t nl = r;
        r = l ^ f;
        l = nl;
    }
    return (l << p->half_bits) | r;
}

/* The image of i (i < n) under the permutation. */
SL_HD static inline uint64_t sl__gen_perm_apply(const struct sl__gen_perm *p, uint64_t i)
{
    if (p->n <= 1)
        return 0;
    /* Cycle walking: the Feistel network permutes [0, 2^bits); following the cycle of i
     * until it re-enters [0, n) gives a permutation of [0, n). */
    uint64_t x = i;
    do
        x = sl__gen_feistel(p, x);
    while (x >= p->n);
    return x;
}

/* Zipf sampling over the ranks 1..n with P(k) proportional to 1/k^s, s > 0, by
 * rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate
 * variates from monotone discrete distributions", 1996), as Apache Commons RNG's
 * RejectionInversionZipfSampler. O(1) per draw, about 1.1 uniforms on average, no
 * table; s = 1 included. Host only (gen_int.h): its log/exp would differ on a GPU. */
struct sl__gen_zipf {
    double n, s;
    double h_x1;        /* H(1.5) - 1 */
    double h_n;         /* H(n + 0.5) */
    double thresh;      /* 2 - H^-1(H(2.5) - h(2)) */
};

#ifndef __CUDA_ARCH__
#ifdef __cplusplus
extern "C" {
#endif
/* A rank in [0, n) (0 the most frequent) for index i of stream `stream`; each rejection
 * attempt uses the next hash of (seed, stream, i, attempt). In gen_math.c. */
uint64_t sl__gen_zipf_draw(const struct sl__gen_zipf *z, uint64_t seed, uint64_t stream,
                           uint64_t i);
#ifdef __cplusplus
}
#endif
#endif

/* A standard normal variate for index i of a stream (Box–Muller on two hashed
 * uniforms; the cosine branch only, so one variate per index). libm's log and cos:
 * the GPU's may differ from glibc's in the last ulp. */
SL_HD static inline double sl__gen_normal(uint64_t seed, uint64_t stream, uint64_t i)
{
    double u1 = sl__gen_unit_open(sl__gen_hash(seed, stream, 2 * i));
    double u2 = sl__gen_unit(sl__gen_hash(seed, stream, 2 * i + 1));
    return sqrt(-2.0 * log(u1)) * cos(SL__GEN_DMUL(2.0 * 3.14159265358979323846, u2));
}

/* ---- gen.keys, row by row (for references in tests and benchmarks too) ---- */

enum sl__gen_keys_kind { SL__GEN_UNIQUE = 0, SL__GEN_FK = 1, SL__GEN_M2M = 2 };

/* What gen.keys generates, by its options. Fill the first block (as the operator's
 * options: domain = pk_rows for FK, distinct for M2M, unused for UNIQUE) and call
 * sl__gen_keys_init (gen_int.h); then sl__gen_keys_at gives exactly the operator's value
 * of a row.
 *   UNIQUE  offset + perm(row), perm a Feistel permutation of [0, rows) keyed by seed;
 *   FK      if unit(hash(seed, MATCH, row)) < match (tested only when match < 1):
 *             uniform: below(hash(seed, KEY, row), domain), or
 *             Zipf:    rank_perm(zipf_draw(seed, ZIPF, row)), rank_perm a permutation of
 *                      [0, domain) keyed by seed ^ SL__GEN_S_RANK;
 *           else domain + below(hash(seed, MISS, row), type max - domain + 1);
 *   M2M     as a matching FK row over [0, distinct).
 * A row is NULL when unit(hash(seed, NULL, row)) < null_rate (its stored value is 0). */
struct sl__gen_keys {
    enum sl__gen_keys_kind kind;
    uint64_t seed;
    int64_t rows, domain, offset;
    double match, zipf, null_rate;
    int64_t type_max;            /* INT32_MAX or INT64_MAX */
    /* filled by sl__gen_keys_init */
    uint64_t miss_span;
    struct sl__gen_perm perm;
    struct sl__gen_zipf zipf_s;
};

/* The key of row `row` (valid set to false for a NULL key, whose value is 0). On a GPU,
 * Zipf keys are not available (the CUDA implementation's can_run refuses them). */
SL_HD static inline int64_t sl__gen_keys_at(const struct sl__gen_keys *k, uint64_t row, bool *valid)
{
    if (sl__gen_is_null(k->seed, k->null_rate, row)) {
        *valid = false;
        return 0;
    }
    *valid = true;
    if (k->kind == SL__GEN_UNIQUE)
        return k->offset + (int64_t)sl__gen_perm_apply(&k->perm, row);
    if (k->kind == SL__GEN_FK && k->match < 1.0 &&
        !(sl__gen_unit(sl__gen_hash(k->seed, SL__GEN_S_MATCH, row)) < k->match))
        return k->domain + (int64_t)sl__gen_below(sl__gen_hash(k->seed, SL__GEN_S_MISS, row),
                                                  k->miss_span);
    if (k->zipf > 0) {
#ifdef __CUDA_ARCH__
        return 0;
#else
        return (int64_t)sl__gen_perm_apply(
            &k->perm, sl__gen_zipf_draw(&k->zipf_s, k->seed, SL__GEN_S_ZIPF, row));
#endif
    }
    return (int64_t)sl__gen_below(sl__gen_hash(k->seed, SL__GEN_S_KEY, row), (uint64_t)k->domain);
}

/* Payload column p_j (j from 1) of a row, before truncation to the payload type:
 * row*31 + j (wrapping in 64 bits). int32 payloads keep the low 32 bits; float payloads
 * are this value converted. */
SL_HD static inline int64_t sl__gen_payload(int64_t row, int j)
{
    return (int64_t)((uint64_t)row * 31u + (uint64_t)j);
}

/* ---- gen.uniform ---- */

/* Options of gen.uniform as its values need them. */
struct sl__gen_uni {
    uint64_t seed;
    enum sl__gen_vtype type;
    int64_t imin;
    uint64_t ispan;       /* max - min + 1 (0 = the whole 64-bit range) */
    double fmin, fmax;
    double null_rate;
};

/* Integer value of a row (int32 columns keep the low 32 bits) from its hash h. */
SL_HD static inline int64_t sl__gen_uni_int(const struct sl__gen_uni *u, uint64_t h)
{
    if (u->type == SL__GEN_I32)
        return u->imin + (int64_t)sl__gen_below(h, u->ispan);
    return (int64_t)((uint64_t)u->imin + (u->ispan ? sl__gen_below(h, u->ispan) : h));
}

/* min + unit * (max - min), in [min, max). */
SL_HD static inline double sl__gen_uni_f64(const struct sl__gen_uni *u, uint64_t h)
{
    double v = SL__GEN_DADD(u->fmin, SL__GEN_DMUL(sl__gen_unit(h), SL__GEN_DSUB(u->fmax, u->fmin)));
    if (v >= u->fmax && u->fmax > u->fmin)
        v = nextafter(u->fmax, -(double)INFINITY); /* rounding reached max */
    return v;
}

SL_HD static inline float sl__gen_uni_f32(const struct sl__gen_uni *u, uint64_t h)
{
    float v = (float)SL__GEN_DADD(u->fmin,
                                  SL__GEN_DMUL(sl__gen_unit(h), SL__GEN_DSUB(u->fmax, u->fmin)));
    if (v >= (float)u->fmax && u->fmax > u->fmin)
        v = nextafterf((float)u->fmax, -INFINITY); /* rounding reached max */
    return v;
}

/* ---- gen.blobs ---- */

/* Centre c, dimension j: uniform in [-10, 10). */
SL_HD static inline double sl__gen_centre(uint64_t seed, int64_t c, int dims, int j)
{
    uint64_t h = sl__gen_hash(seed, SL__GEN_S_CENTRE, (uint64_t)c * (uint64_t)dims + (uint64_t)j);
    return SL__GEN_DADD(-10.0, SL__GEN_DMUL(20.0, sl__gen_unit(h)));
}

/* The class (true centre) of point `row` among k. */
SL_HD static inline int64_t sl__gen_blob_class(uint64_t seed, int64_t k, uint64_t row)
{
    return (int64_t)sl__gen_below(sl__gen_hash(seed, SL__GEN_S_CLASS, row), (uint64_t)k);
}

/* Coordinate j of point `row` whose centre has coordinate `centre` there. */
SL_HD static inline double sl__gen_blob_coord(uint64_t seed, int dims, double spread,
                                              double centre, uint64_t row, int j)
{
    double n = sl__gen_normal(seed, SL__GEN_S_NOISE, row * (uint64_t)dims + (uint64_t)j);
    return SL__GEN_DADD(centre, SL__GEN_DMUL(spread, n));
}

#endif /* SLUICE_K_GEN_MATH_H */
