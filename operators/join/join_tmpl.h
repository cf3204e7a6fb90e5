/* Hot loops of the join for one tuple layout, included once per layout by join_part.c and
 * join_nopart.c with:
 *   TUP   the tuple struct (struct join_t8 or struct join_t16)
 *   SVAL  the signed type an inline val is stored as (int32_t or int64_t)
 *   FN(x) the name of x for this layout
 *   TUP_WORDS 1 when the tuple carries a short string key's words (struct join_t32: the
 *         radix join only, so the sort-merge and no-partitioning loops are left out)
 * Long flat loops here are on purpose: they are the join's inner loops. */

/* A loaded val as the emitter wants it: inline payloads sign-extended, row ids as is. */
#define VAL_OUT(e, v) ((e)->vinl ? (uint64_t)(int64_t)(SVAL)(v) : (uint64_t)(v))

/* One probe row's sum of its matches' inline vals in the fused aggregate: int64 holds the
 * int32 vals of fewer than 2^32 matches; int64 vals sum at 128 bits, since one row's
 * matches may pass int64 where the total does not (the total errs only if it does not
 * fit, docs/TYPES.md). */
typedef __typeof__(_Generic((SVAL)0, int32_t: (int64_t)0, default: (__int128)0)) FN(rowsum_t);

/* ---------------- partitioning ---------------- */

static inline uint32_t FN(pid)(uint64_t k, int bits)
{
    return (uint32_t)(join_hash(k) >> (64 - bits));
}

/* Whether tuples a and b hold equal keys. */
static inline int FN(key_eq)(const TUP *a, const TUP *b)
{
#if TUP_WORDS
    return a->k == b->k && a->w[0] == b->w[0] && a->w[1] == b->w[1];
#else
    return a->k == b->k;
#endif
}

#if !TUP_WORDS
typedef __typeof__(((TUP *)0)->k) FN(key_t);
typedef __typeof__(((TUP *)0)->v) FN(val_t);

/* The common case of the partitioning passes: a key column without nulls whose values are the tuple's
 * key as they are (a 4-byte key in 8-byte tuples, an 8-byte one in 16-byte tuples), and
 * vals that are a payload column of the tuple's val width without nulls, no payload or
 * row ids. Sets *kp and *vp (NULL: the vals are row ids or zeros) for batch b; 0 if the
 * rows must go through join_load. */
static inline int FN(scatter_direct)(const struct join_state *st, const struct join_side *sd,
                                     const sl_batch_t *b, const FN(key_t) **kp,
                                     const FN(val_t) **vp)
{
    const struct sl__col *kc = &b->cols[sd->key[0]];
    enum join_key_mode m = st->shape.kmode[0];
    if (st->shape.n_keys != 1 || kc->validity ||
        m != (sizeof(FN(key_t)) == 4 ? JOIN_KEY_BITS4 : JOIN_KEY_BITS8))
        return 0;
    *kp = sl__col_values(b, sd->key[0]);
    *vp = NULL;
    if (sd->inline_val && sd->val_col >= 0) {
        const struct sl__col *vc = &b->cols[sd->val_col];
        if (vc->validity || sl_type_width(vc->type) != sizeof(FN(val_t)))
            return 0;
        *vp = sl__col_values(b, sd->val_col);
    }
    return 1;
}
#endif

/* Histogram of the rows [lo, hi) (global row numbers) of side s into h[fanout + 1]
 * (the last entry counts null keys). */
TMPL_FN void FN(part_hist)(const struct join_state *st, int s, int64_t lo, int64_t hi, int64_t *h)
{
    const struct join_side *sd = &st->side[s];
    uint64_t k[JOIN_CHUNK];
    uint8_t nul[JOIN_CHUNK];
    int bits = st->bits;
    int64_t bi = join_first_batch(sd, lo);
    for (int64_t r = lo; r < hi;) {
        int64_t in, n = join_next_load(sd, r, hi, &bi, &in);
#if !TUP_WORDS
        const FN(key_t) *kp;
        const FN(val_t) *vp;
        if (FN(scatter_direct)(st, sd, sd->batches[bi], &kp, &vp)) {
            kp += in;
            for (int64_t i = 0; i < n; i++)
                h[FN(pid)(kp[i], bits)]++;
            r += n;
            continue;
        }
#endif
        int64_t nulls = join_load(st, s, bi, in, n, k, NULL, nul, NULL);
        if (nulls == 0) {
            for (int64_t i = 0; i < n; i++)
                h[FN(pid)(k[i], bits)]++;
        } else {
            for (int64_t i = 0; i < n; i++)
                h[nul[i] ? st->fanout : FN(pid)(k[i], bits)]++;
        }
        r += n;
    }
}

#define LINE_TUPS (64 / (int)sizeof(TUP))


/* Tuple t into partition p's write-combining buffer of wl tuples (whole cache lines);
 * a full buffer goes out to dst at pos[p] (streamed). */
static inline void FN(wc_put)(TUP *buf, uint8_t *fill, int64_t *pos, TUP *dst, uint32_t p, TUP t,
                              int wl)
{
    TUP *line = buf + (int64_t)p * wl;
    int f = fill[p];
    line[f] = t;
    if (++f == wl) {
        for (int q = 0; q < wl; q += LINE_TUPS)
            join_stream_line(dst + pos[p] + q, line + q);
        pos[p] += wl;
        f = 0;
    }
    fill[p] = (uint8_t)f;
}

/* Scatters rows [lo, hi) of side s to dst at positions pos[p]++ through software
 * write-combining buffers: `lines` cache lines of tuples per partition, written out whole
 * (buf holds fanout + 1 of them). */
TMPL_FN void FN(part_scatter)(const struct join_state *st, int s, int64_t lo, int64_t hi,
                             int64_t *pos, TUP *dst, TUP *buf, uint8_t *fill, int lines)
{
    const int wl = lines * LINE_TUPS;
    const struct join_side *sd = &st->side[s];
    uint64_t k[JOIN_CHUNK], v[JOIN_CHUNK];
    uint8_t nul[JOIN_CHUNK];
#if TUP_WORDS
    uint64_t w[2 * JOIN_CHUNK];
#else
    uint64_t *w = NULL;
    uint32_t pid[JOIN_CHUNK];
    FN(val_t) vrow[JOIN_CHUNK];
#endif
    int bits = st->bits;
    int64_t fanout = st->fanout;
    memset(fill, 0, (size_t)fanout + 1);
    int64_t bi = join_first_batch(sd, lo);
    for (int64_t r = lo; r < hi;) {
        int64_t in, n = join_next_load(sd, r, hi, &bi, &in);
#if !TUP_WORDS
        const FN(key_t) *kp;
        const FN(val_t) *vp;
        if (FN(scatter_direct)(st, sd, sd->batches[bi], &kp, &vp)) {
            /* Keys and vals read in place; partitions of the chunk first (a vector loop). */
            kp += in;
            if (vp) {
                vp += in;
            } else {
                uint64_t base = sd->inline_val ? 0 : (uint64_t)bi << sd->shift | (uint64_t)in;
                for (int64_t i = 0; i < n; i++)
                    vrow[i] = (FN(val_t))(sd->inline_val ? 0 : base + (uint64_t)i);
                vp = vrow;
            }
            for (int64_t i = 0; i < n; i++) {
                join_prefetch(kp + i, 4096); /* the next chunk's, a line at a time */
                pid[i] = FN(pid)(kp[i], bits);
            }
            for (int64_t i = 0; i < n; i++) {
                join_prefetch(vp + i, 1024 * sizeof *vp);
                FN(wc_put)(buf, fill, pos, dst, pid[i], (TUP){.k = kp[i], .v = vp[i]}, wl);
            }
            r += n;
            continue;
        }
#endif
        int64_t nulls = join_load(st, s, bi, in, n, k, v, nul, w);
        for (int64_t i = 0; i < n; i++) {
            uint32_t p = nulls && nul[i] ? (uint32_t)fanout : FN(pid)(k[i], bits);
            TUP t = {.k = (__typeof__(t.k))k[i], .v = (__typeof__(t.v))v[i]};
#if TUP_WORDS
            t.w[0] = w[2 * i];
            t.w[1] = w[2 * i + 1];
#endif
            FN(wc_put)(buf, fill, pos, dst, p, t, wl);
        }
        r += n;
    }
    for (int64_t p = 0; p <= fanout; p++) {
        memcpy(dst + pos[p], buf + p * wl, (size_t)fill[p] * sizeof(TUP));
        pos[p] += fill[p];
    }
}

#if !TUP_WORDS
/* ---------------- sorting a partition (sort-merge join) ---------------- */

/* LSD radix sort of a[0, n) by key, 8-bit digits, skipping digits every key shares.
 * The result ends up in a (tmp is as large). */
TMPL_FN void FN(sort_part)(TUP *a, TUP *tmp, int64_t n)
{
    enum { DIGITS = sizeof(((TUP *)0)->k) };
    if (n < 2)
        return;
    int64_t h[DIGITS][256];
    memset(h, 0, sizeof h);
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = a[i].k;
        for (int d = 0; d < DIGITS; d++)
            h[d][(k >> (8 * d)) & 255]++;
    }
    TUP *src = a, *dst = tmp;
    for (int d = 0; d < DIGITS; d++) {
        if (h[d][(src[0].k >> (8 * d)) & 255] == n)
            continue;
        int64_t pos[256], sum = 0;
        for (int b = 0; b < 256; b++) {
            pos[b] = sum;
            sum += h[d][b];
        }
        for (int64_t i = 0; i < n; i++)
            dst[pos[(src[i].k >> (8 * d)) & 255]++] = src[i];
        TUP *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, (size_t)n * sizeof(TUP));
}

#endif /* !TUP_WORDS */

/* ---------------- probing ---------------- */

/* One probe row against its candidates: the kind decides what is output. `first` and
 * `next` walk the candidates with equal keys. Shared by all three algorithms through
 * the PROBE_ROW macro below. */
#define PROBE_ROW(e, st, pk, pvraw, CAND_LOOP, bvraw_of)                                     \
    do {                                                                                     \
        int matched_ = 0;                                                                    \
        uint64_t pv_ = VAL_OUT(e, pvraw);                                                    \
        CAND_LOOP                                                                            \
        {                                                                                    \
            uint64_t bv_ = VAL_OUT(e, bvraw_of);                                             \
            if (!(st)->shape.exact &&                                                        \
                !((e)->swap ? join_keys_equal(st, bv_, pv_) : join_keys_equal(st, pv_, bv_))) \
                continue;                                                                    \
            if ((st)->d->n_resid && !((e)->swap ? join_residual_ok(st, bv_, pv_)              \
                                                : join_residual_ok(st, pv_, bv_)))            \
                continue;                                                                    \
            matched_ = 1;                                                                    \
            if (kind == JOIN_SEMI || kind == JOIN_ANTI)                                      \
                break;                                                                       \
            join_emit_match(e, pk, pv_, bv_);                                                \
        }                                                                                    \
        if ((kind == JOIN_SEMI && matched_) || (join_kind_alone(kind) && !matched_))         \
            join_emit_alone(e, pk, pv_);                                                     \
    } while (0)

/* Hash join of one partition pair: a chained table over B (heads + next, in cache),
 * then the probe tuples P. */
TMPL_FN void FN(probe_hash)(struct join_emit *e, const TUP *B, int64_t nb, const TUP *P,
                           int64_t np, uint32_t *heads, uint32_t *next)
{
    const struct join_state *st = e->st;
    const int kind = st->d->kind;
    int pbits = st->bits;
    /* 2 to 4 heads a build tuple: most chains end after their first tuple (at 1 to 2 a
     * probe walked about 2; a one-thread model of 512 partitions of 2^15 unique keys:
     * 75 -> 36 ms for 2^24 probes). */
    int hb = join_log2_ceil(nb < 2 ? 2 : nb) + 1;
    if (hb > 64 - pbits)
        hb = 64 - pbits;
    int rs = 64 - hb;
    memset(heads, 0, ((size_t)1 << hb) * sizeof *heads);
    for (int64_t i = 0; i < nb; i++) {
        /* The partitions were streamed out to memory: fetch the tuples ahead. */
        join_prefetch(B + i, 1024);
        uint32_t b = (uint32_t)((join_hash(B[i].k) << pbits) >> rs);
        next[i] = heads[b];
        heads[b] = (uint32_t)(i + 1);
    }
    if (kind == JOIN_INNER && e->inl) {
        /* Fused count + sums of an inner join: the benchmark's loop. Sums of 32-bit vals
         * over fewer than 2^32 matches (np * nb bounds them) fit int64 accumulators,
         * which cost less a probe than 128-bit ones. */
#define FUSED_AGG(ACC)                                                                  \
    do {                                                                                \
        ACC cnt = 0, sp = 0, sb = 0;                                                    \
        for (int64_t i = 0; i < np; i++) {                                              \
            join_prefetch(P + i, 1024);                                                 \
            uint64_t k = P[i].k;                                                        \
            uint32_t b = (uint32_t)((join_hash(k) << pbits) >> rs);                     \
            int64_t m = 0;                                                              \
            FN(rowsum_t) s = 0;                                                         \
            for (uint32_t j = heads[b]; j; j = next[j - 1]) {                           \
                if (FN(key_eq)(&B[j - 1], &P[i])) {                                     \
                    m++;                                                                \
                    s += (SVAL)B[j - 1].v;                                              \
                }                                                                       \
            }                                                                           \
            cnt += m;                                                                   \
            sp += (ACC)m * (SVAL)P[i].v;                                                \
            sb += s;                                                                    \
        }                                                                               \
        e->acc->count += cnt;                                                           \
        e->acc->isum[e->ip] += sp;                                                      \
        e->acc->isum[e->ib] += sb;                                                      \
    } while (0)
        if (sizeof(SVAL) == 4 && (uint64_t)np * (uint64_t)nb < ((uint64_t)1 << 32))
            FUSED_AGG(int64_t);
        else
            FUSED_AGG(__int128);
#undef FUSED_AGG
        return;
    }
    if (kind == JOIN_INNER && e->minl && !st->d->n_resid && !st->bmatch) {
        /* Fused materialized inner join from inline vals: matches gathered in local
         * arrays, written to the output columns a chunk at a time. */
        uint64_t ok[JOIN_OUT_CHUNK], opv[JOIN_OUT_CHUNK], obv[JOIN_OUT_CHUNK];
        int m = 0;
        for (int64_t i = 0; i < np && e->rc >= 0; i++) {
            join_prefetch(P + i, 1024);
            uint64_t k = P[i].k, pv = (uint64_t)(int64_t)(SVAL)P[i].v;
            uint32_t b = (uint32_t)((join_hash(k) << pbits) >> rs);
            for (uint32_t j = heads[b]; j; j = next[j - 1]) {
                if (FN(key_eq)(&B[j - 1], &P[i]))
                    m = join_chunk_add(e, ok, opv, obv, m, k, pv,
                                       (uint64_t)(int64_t)(SVAL)B[j - 1].v);
            }
        }
        join_emit_rows(e, ok, opv, obv, m);
        return;
    }
    for (int64_t i = 0; i < np && e->rc >= 0; i++) {
        uint64_t k = P[i].k;
        uint32_t b = (uint32_t)((join_hash(k) << pbits) >> rs);
        PROBE_ROW(e, st, k, P[i].v,
                  for (uint32_t j = heads[b]; j; j = next[j - 1])
                      if (FN(key_eq)(&B[j - 1], &P[i])),
                  B[j - 1].v);
    }
}

#if !TUP_WORDS
/* Merge join of one sorted partition pair (P may be a chunk of a sorted partition). */
TMPL_FN void FN(probe_merge)(struct join_emit *e, const TUP *B, int64_t nb, const TUP *P,
                            int64_t np)
{
    const struct join_state *st = e->st;
    const int kind = st->d->kind;
    int64_t j = 0;
    if (np > 0) {
        int64_t lo = 0, hi = nb; /* first B with key >= P[0].k */
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (B[mid].k < P[0].k)
                lo = mid + 1;
            else
                hi = mid;
        }
        j = lo;
    }
    int64_t run_end = j;
    uint64_t run_key = 0;
    int have_run = 0;
    for (int64_t i = 0; i < np && e->rc >= 0; i++) {
        uint64_t k = P[i].k;
        if (!have_run || k != run_key) {
            while (j < nb && B[j].k < k)
                j++;
            run_end = j;
            while (run_end < nb && B[run_end].k == k)
                run_end++;
            run_key = k;
            have_run = 1;
        }
        PROBE_ROW(e, st, k, P[i].v, for (int64_t m = j; m < run_end; m++), B[m].v);
    }
}

/* ---------------- no-partitioning table ---------------- */

/* Inserts (k, v) into an open-addressing table of 2^tbits slots whose empty slots hold
 * the key EMPTY; keys equal to EMPTY go to the state's side list instead. Lock-free: a
 * slot is claimed by a compare-and-swap of its key; its val is written by the claimer
 * and read only after the build phase has completed (the phase boundary orders it). */
TMPL_FN void FN(np_insert)(struct join_state *st, TUP *tab, int tbits, uint64_t k, uint64_t v,
                          uint64_t empty)
{
    if (k == empty) {
        while (atomic_exchange_explicit(&st->side_lock, 1, memory_order_acquire))
            ;
        if (st->n_side == st->cap_side) {
            int64_t nc = st->cap_side ? st->cap_side * 2 : 64;
            uint64_t *nv = sl__realloc(st->side_v, (size_t)st->cap_side * 8, (size_t)nc * 8);
            if (nv) {
                st->side_v = nv;
                st->cap_side = nc;
            }
        }
        if (st->n_side < st->cap_side)
            st->side_v[st->n_side++] = v;
        else
            st->side_oom = 1;
        atomic_store_explicit(&st->side_lock, 0, memory_order_release);
        return;
    }
    uint64_t mask = ((uint64_t)1 << tbits) - 1;
    uint64_t j = join_hash(k) >> (64 - tbits);
    for (;; j = (j + 1) & mask) {
        __typeof__(tab[0].k) cur = __atomic_load_n(&tab[j].k, __ATOMIC_RELAXED);
        if (cur != (__typeof__(tab[0].k))empty)
            continue;
        if (__atomic_compare_exchange_n(&tab[j].k, &cur, (__typeof__(tab[0].k))k, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            tab[j].v = (__typeof__(tab[0].v))v;
            return;
        }
    }
}

/* Probes rows [lo, hi) of probe batch bi against the shared table; hashes a chunk
 * first and prefetches slots PREFETCH rows ahead. */
TMPL_FN void FN(np_probe)(struct join_emit *e, int s, int64_t bi, int64_t lo, int64_t hi,
                         const TUP *tab, int tbits, uint64_t empty)
{
    enum { PREFETCH = 16 };
    const struct join_state *st = e->st;
    const int kind = st->d->kind;
    uint64_t k[JOIN_CHUNK], v[JOIN_CHUNK];
    uint32_t slot[JOIN_CHUNK];
    uint8_t nul[JOIN_CHUNK];
    uint64_t mask = ((uint64_t)1 << tbits) - 1;
    const __typeof__(tab[0].k) E = (__typeof__(tab[0].k))empty;
    /* The filter (inner and semi joins only) drops rows without partner before the table
     * is touched; where most rows pass it, it costs more than it saves and is left off
     * for the rest of the work item. */
    const uint64_t *filt = st->filter;
    int64_t f_seen = 0, f_kept = 0;
    for (int64_t r = lo; r < hi && e->rc >= 0;) {
        int64_t n = hi - r < JOIN_CHUNK ? hi - r : JOIN_CHUNK;
        int64_t nulls = join_load(st, s, bi, r, n, k, v, nul, NULL);
        r += n;
        if (filt) {
            int64_t m = 0;
            for (int64_t i = 0; i < n; i++) {
                uint64_t bits, w = filt[join_filter_word(k[i], st->fbits, &bits)];
                int keep = (w & bits) == bits && !(nulls && nul[i]);
                k[m] = k[i];
                v[m] = v[i];
                m += keep;
            }
            f_seen += n;
            f_kept += m;
            if (f_seen >= 4 * JOIN_CHUNK && 2 * f_kept > f_seen)
                filt = NULL;
            n = m;
            nulls = 0;
        }
        for (int64_t i = 0; i < n; i++) {
            slot[i] = (uint32_t)(join_hash(k[i]) >> (64 - tbits));
            if (i < PREFETCH)
                __builtin_prefetch(&tab[slot[i]]);
        }
        if (kind == JOIN_INNER && e->inl && !nulls && st->n_side == 0) {
            __int128 cnt = 0, sp = 0, sb = 0;
            for (int64_t i = 0; i < n; i++) {
                if (i + PREFETCH < n)
                    __builtin_prefetch(&tab[slot[i + PREFETCH]]);
                __typeof__(tab[0].k) kk = (__typeof__(tab[0].k))k[i];
                int64_t m = 0;
                FN(rowsum_t) sum = 0;
                for (uint64_t j = slot[i]; tab[j].k != E; j = (j + 1) & mask) {
                    if (tab[j].k == kk) {
                        m++;
                        sum += (SVAL)tab[j].v;
                    }
                }
                cnt += m;
                sp += (__int128)m * (int64_t)v[i];
                sb += sum;
            }
            e->acc->count += cnt;
            e->acc->isum[e->ip] += sp;
            e->acc->isum[e->ib] += sb;
            continue;
        }
        if (kind == JOIN_INNER && e->minl && !nulls && st->n_side == 0 && !st->d->n_resid &&
            !st->bmatch) {
            /* Fused materialized inner join from inline vals, as probe_hash's. */
            uint64_t ok[JOIN_OUT_CHUNK], opv[JOIN_OUT_CHUNK], obv[JOIN_OUT_CHUNK];
            int m = 0;
            for (int64_t i = 0; i < n; i++) {
                if (i + PREFETCH < n)
                    __builtin_prefetch(&tab[slot[i + PREFETCH]]);
                __typeof__(tab[0].k) kk = (__typeof__(tab[0].k))k[i];
                uint64_t pv = (uint64_t)(int64_t)(SVAL)v[i];
                for (uint64_t j = slot[i]; tab[j].k != E; j = (j + 1) & mask)
                    if (tab[j].k == kk)
                        m = join_chunk_add(e, ok, opv, obv, m, kk, pv,
                                           (uint64_t)(int64_t)(SVAL)tab[j].v);
            }
            join_emit_rows(e, ok, opv, obv, m);
            continue;
        }
        for (int64_t i = 0; i < n && e->rc >= 0; i++) {
            if (i + PREFETCH < n)
                __builtin_prefetch(&tab[slot[i + PREFETCH]]);
            /* Loaded vals are already 64-bit: inline ones sign-extended by join_load. */
            uint64_t pvraw = e->vinl ? (uint64_t)(SVAL)v[i] : v[i];
            if (nulls && nul[i]) {
                if (join_kind_alone(kind))
                    join_emit_alone(e, k[i], VAL_OUT(e, pvraw));
                continue;
            }
            __typeof__(tab[0].k) kk = (__typeof__(tab[0].k))k[i];
            if (k[i] == empty) {
                PROBE_ROW(e, st, kk, pvraw, for (int64_t m = 0; m < st->n_side; m++),
                          st->side_v[m]);
                continue;
            }
            PROBE_ROW(e, st, kk, pvraw,
                      for (uint64_t j = slot[i]; tab[j].k != E; j = (j + 1) & mask)
                          if (tab[j].k == kk),
                      tab[j].v);
        }
    }
}

#endif /* !TUP_WORDS */

#undef VAL_OUT
#undef LINE_TUPS
#undef PROBE_ROW
