/* The generators' host-only math: permutation set-up, Zipf rejection-inversion (the per-row
 * functions shared with the GPU are in sluice_k/gen_math.h). */
#include <math.h>

#include "gen_int.h"
#include "operators.h"

void sl__gen_perm_init(struct sl__gen_perm *p, uint64_t n, uint64_t seed)
{
    p->n = n;
    unsigned bits = 2;
    while (bits < 64 && (1ull << bits) < n)
        bits++;
    if (bits & 1)
        bits++;
    p->half_bits = bits / 2;
    p->half_mask = p->half_bits >= 64 ? ~0ull : (1ull << p->half_bits) - 1;
    for (int r = 0; r < 4; r++)
        p->keys[r] = sl__gen_hash(seed, SL__GEN_S_KEY, (uint64_t)r);
}

/* ---- Zipf (rejection-inversion) ---- */

/* log1p(x)/x, accurate near 0. */
static double helper1(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

/* expm1(x)/x, accurate near 0. */
static double helper2(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

/* h(x) = x^-s, H(x) its antiderivative (up to a constant), H^-1 the inverse. */
static double zh(double s, double x)
{
    return exp(-s * log(x));
}

static double zH(double s, double x)
{
    double lx = log(x);
    return helper2((1.0 - s) * lx) * lx;
}

static double zHinv(double s, double x)
{
    double t = x * (1.0 - s);
    if (t < -1.0)
        t = -1.0; /* guards rounding; H^-1 stays finite */
    return exp(helper1(t) * x);
}

int sl__gen_zipf_init(struct sl__gen_zipf *z, uint64_t n, double s)
{
    if (n < 1 || !(s > 0) || !isfinite(s))
        return SL_EINVAL;
    z->n = (double)n;
    z->s = s;
    z->h_x1 = zH(s, 1.5) - 1.0;
    z->h_n = zH(s, z->n + 0.5);
    z->thresh = 2.0 - zHinv(s, zH(s, 2.5) - zh(s, 2.0));
    return SL_OK;
}

uint64_t sl__gen_zipf_draw(const struct sl__gen_zipf *z, uint64_t seed, uint64_t stream,
                           uint64_t i)
{
    /* Attempt a uses index i * 64 + a of the stream; after 64 rejections (probability
     * far below 2^-64) the last candidate is taken. */
    double k = 1.0;
    for (uint64_t a = 0; a < 64; a++) {
        double u = z->h_n + sl__gen_unit(sl__gen_hash(seed, stream, i * 64 + a)) *
                                (z->h_x1 - z->h_n);
        double x = zHinv(z->s, u);
        k = floor(x + 0.5);
        if (k < 1.0)
            k = 1.0;
        else if (k > z->n)
            k = z->n;
        if (k - x <= z->thresh || u >= zH(z->s, k + 0.5) - zh(z->s, k))
            break;
    }
    uint64_t r = (uint64_t)k - 1;
    return r < (uint64_t)z->n ? r : (uint64_t)z->n - 1;
}

int sl__gen_keys_init(struct sl__gen_keys *k)
{
    k->miss_span = 0;
    if (k->kind == SL__GEN_UNIQUE) {
        sl__gen_perm_init(&k->perm, (uint64_t)(k->rows > 0 ? k->rows : 0), k->seed);
        return SL_OK;
    }
    if (k->kind == SL__GEN_FK && k->domain <= k->type_max)
        k->miss_span = (uint64_t)(k->type_max - k->domain) + 1;
    if (k->domain < 1)
        return SL_EINVAL;
    if (k->zipf > 0) {
        sl__gen_perm_init(&k->perm, (uint64_t)k->domain, k->seed ^ SL__GEN_S_RANK);
        return sl__gen_zipf_init(&k->zipf_s, (uint64_t)k->domain, k->zipf);
    }
    return SL_OK;
}
