/* Host-streamed GPU join (issue 23): an inner, semi or anti join whose inputs stay in
 * host memory (a pinned or pageable table the GPU sink did not upload, or batches the GPU
 * budget sent there) runs as one pipeline over the link instead of "upload everything,
 * join, download everything":
 *
 *  1. the build side (inner: the smaller; semi and anti: the right) goes up in chunks
 *     into contiguous device columns (h2d stream), and the NPJ table of join_cuda.c is
 *     built on it in parts, each chunk inserted once it is up (direct table when the keys
 *     are dense and unique, sized from the first chunk's key range; else the hash table;
 *     table_guess), so the table is ready right after the side's last chunk; a direct
 *     table that a later key misses or repeats in is rebuilt whole (debug_join_stream_table
 *     =whole: built after the whole side, as before);
 *  2. the probe side streams up in chunks (stream_chunk: up to CHUNK_ROWS rows, halved
 *     until they fit the budget) through input slots (input_slots: as many as half the
 *     budget left holds, so the probe side uploads ahead while the table builds); chunk c
 *     is probed on the task's stream while later chunks upload, and its result goes down
 *     on the d2h stream into a host batch of its own (pinned result memory,
 *     gpu_result_pinned) while chunk c + 1 is probed: the link carries the probe side up
 *     and the result down at once. output=aggregate sums each chunk's result on the GPU
 *     instead (nothing goes down).
 *  Pageable input is copied into pinned staging by several threads first (gpu_ext.h,
 *  sl__upload_stage), one chunk while the previous one uploads. A pinned table's narrow
 *  copies go up as they are and are widened on a stream of their own (sl__task_widen).
 *
 * So the time is about build side up + max(probe side up, result down) where the in-GPU
 * join took inputs up + join + result down. With a build side whose keys repeat, a chunk
 * may have more results than rows: the host then waits for each chunk's count before
 * the next chunk uploads (and re-runs a chunk that overflowed its output), or gives the
 * join to the CPU when that output would pass the budget.
 *
 * Shapes: inner, semi and anti (these build the right side and probe the left, each
 * probe row written at most once), one int32/int64-like key (not a dictionary),
 * fixed-width output columns of 4 or 8 bytes, at most SL_K_MAX_COLS payload columns a
 * side, no nulls, algo auto or nopart, one GPU; the probe side has a batch in host memory
 * (the sink's rules: join_stream_keep, and join_gpu_sink_can_run past the join's share
 * of a small budget) and the build side, its table and two chunks' buffers fit the GPU
 * budget (chunks of fewer rows under a small budget: stream_chunk). Anything else takes join_cuda.c's or join_cuda_ooc.c's paths. The result
 * lives where the out-of-core join's does (st->ooc_out; join_ooc_source emits it). */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_ext.h"
#include "join_cuda_int.h"
#include "sluice_k/join_npj.h"

#define MIB ((int64_t)1 << 20)
#define STREAM_MIN_BYTES (32 * MIB) /* auto: a side's host bytes past this stay there */
#define CHUNK_ROWS ((int64_t)1 << 22)
#define CHUNK_MIN ((int64_t)1 << 12)
/* Result batches of about this many rows (several chunks' results each): the source
 * emits one per task, and a GPU task costs its fixed overhead. */
#define RESULT_ROWS ((int64_t)1 << 24)
#define STREAM_SLOTS_MAX 1024           /* probe chunks in GPU memory at once, at most */

/* ---------------- which joins ---------------- */

/* The payload columns a side contributes (in the order the kernels get them) and each
 * output column's role: -1 the key, else side * SL_K_MAX_COLS + payload index. */
struct sj_shape {
    int kw;
    int n_pay[2];
    int pay_col[2][SL_K_MAX_COLS], pay_w[2][SL_K_MAX_COLS];
    int role[2 * JOIN_MAX_COLS];
    int row_w[2];                       /* bytes of a side's row: key and payloads */
    int res_w;                          /* a result row in the slots: key, both payloads */
    int out_w;                          /* an output row (the columns downloaded) */
};

static int stream_shape(const struct join_data *d, struct sj_shape *sh)
{
    memset(sh, 0, sizeof *sh);
    if ((d->kind != JOIN_INNER && d->kind != JOIN_SEMI && d->kind != JOIN_ANTI) ||
        d->n_keys != 1 || d->n_resid ||
        (d->algo != JOIN_AUTO && d->algo != JOIN_NOPART))
        return 0;
    enum sl_type kt = join_gpu_type(d->ktype[0]);
    if ((kt != SL_TYPE_INT32 && kt != SL_TYPE_INT64) || d->rktype[0] != d->ktype[0] ||
        SL_TYPE_ID(d->ktype[0]) == SL_TYPE_DICT)
        return 0;
    sh->kw = kt == SL_TYPE_INT64 ? 8 : 4;
    for (int oc = 0; oc < d->n_out; oc++) {
        const struct join_ocol *o = &d->out[oc];
        if (join_gpu_type(o->type) == SL_TYPE_INVALID)
            return 0;
        if (o->col == d->key[o->side][0]) {
            sh->role[oc] = -1;
            continue;
        }
        int s = o->side, j = 0;
        while (j < sh->n_pay[s] && sh->pay_col[s][j] != o->col)
            j++;
        if (j == sh->n_pay[s]) {
            if (j == SL_K_MAX_COLS)
                return 0;
            sh->pay_col[s][j] = o->col;
            sh->pay_w[s][j] = (int)sl_type_width(o->type);
            sh->n_pay[s]++;
        }
        sh->role[oc] = s * SL_K_MAX_COLS + j;
    }
    for (int s = 0; s < 2; s++) {
        sh->row_w[s] = sh->kw;
        for (int j = 0; j < sh->n_pay[s]; j++)
            sh->row_w[s] += sh->pay_w[s][j];
    }
    sh->res_w = sh->row_w[0] + sh->row_w[1] - sh->kw;
    for (int oc = 0; oc < d->n_out; oc++)
        sh->out_w += (int)sl_type_width(d->out[oc].type);
    return 1;
}

/* The build side: the smaller for inner joins; semi and anti joins build the right side
 * and probe the left (the rows they keep). */
static int stream_build(const struct join_data *d, const int64_t n[2])
{
    return d->kind == JOIN_INNER && n[0] < n[1] ? 0 : 1;
}

static int stream_kind(const struct join_data *d)
{
    return d->kind == JOIN_SEMI ? SL_K_JOIN_SEMI
           : d->kind == JOIN_ANTI ? SL_K_JOIN_ANTI : SL_K_JOIN_INNER;
}

static int64_t stream_mode(const sl_task_t *t)
{
    int64_t mode = 0; /* auto, off, on, inner (auto for inner joins only) */
    sl_task_option_int((sl_task_t *)t, "debug_join_stream", &mode);
    return mode;
}

/* The join's shape streams, with the option's mode. */
static int stream_takes(const sl_task_t *t, int64_t mode, struct sj_shape *sh)
{
    const struct join_data *d = sl_op_data(sl_task_op(t));
    return mode != 1 && stream_shape(d, sh) && (mode != 3 || d->kind == JOIN_INNER);
}

/* 1 when b's narrow copies (a pinned table's, sl_table_pin) would make the sink's upload
 * of b at most 3/4 of the bytes the stream moves at full width. (The join bench's
 * payloads narrow from 4 to 3 bytes in each batch of 2^20 rows, 7/8 of the bytes: the
 * sink's in-GPU join took 80.0 ms for 2^27 rows where the stream had taken 65.7.) */
static int batch_narrow(const sl_batch_t *b)
{
    int64_t full = 0, narrow = 0;
    for (int c = 0; c < b->n_cols; c++) {
        const struct sl__col *col = &b->cols[c];
        int wide = sl__narrow_wide_width(col->type);
        const struct sl__narrow *nw =
            wide > 0 && col->data ? sl__narrow_of(col->data, wide, col->offset, b->n_rows) : NULL;
        int w = (int)sl_type_width(col->type);
        full += w;
        narrow += nw ? nw->width : w;
    }
    return 4 * narrow <= 3 * full;
}

/* auto: a side whose host input passes STREAM_MIN_BYTES stays in host memory, estimated
 * as this batch's bytes times its pipeline's morsels (sl_task_count), so that the rule
 * reads the batch and the task alone (a predicate: no running count). A batch whose
 * narrow copies save a quarter of its bytes goes up through the sink instead: its upload
 * moves the narrow values and widens them on the GPU, where the stream would move them
 * at full width (pinned TPC-H SF 10: 14.33 ms with the stream, 13.40 without). */
int join_stream_keep(const sl_task_t *t, const sl_batch_t *b)
{
    int64_t mode = stream_mode(t);
    const struct join_data *d = sl_op_data(sl_task_op(t));
    struct sj_shape sh;
    if (sl_batch_device(b) >= 0 || sl__task_n_devices(t) > 1 || !stream_takes(t, mode, &sh))
        return 0;
    if (mode == 2)
        return 1;
    /* auto keeps host batches of inner joins only: a semi or anti join streams what the
     * budget sent to host memory (join_gpu_sink_can_run), not a pinned table's batches,
     * which the sink uploads as narrow copies where the stream moves them at full width
     * (TPC-H SF 10 pinned, H100: 21.4 ms geometric mean with semi and anti joins' host
     * batches kept here past 32 MiB, against 15.7 without; Q17 31.0 against 12.9 ms) */
    if (d->kind != JOIN_INNER || batch_narrow(b))
        return 0;
    int64_t tasks = sl_task_count(t);
    return sl__batch_bytes(b) * (tasks > 1 ? tasks : 1) > STREAM_MIN_BYTES;
}

static int64_t chunk_rows(int64_t probe_rows)
{
    int64_t c = join_pow2_ceil(probe_rows);
    return c < CHUNK_MIN ? CHUNK_MIN : c > CHUNK_ROWS ? CHUNK_ROWS : c;
}

/* Device bytes: the build side, its table (the hash table's bound, which the direct
 * table never passes), two chunks of `chunk` rows in and out, and 8 MiB of counters and
 * slack. */
static int64_t stream_need(const struct sj_shape *sh, int build, int64_t nb, int64_t chunk)
{
    int64_t rw = sh->row_w[build], sw = sh->row_w[1 - build], ow = sh->res_w;
    int64_t table = join_pow2_ceil(2 * nb < 1024 ? 1024 : 2 * nb) * 2 * sh->kw + 4096;
    return nb * rw + table + 2 * chunk * (sw + ow) + 8 * MIB;
}

/* The probe chunk's rows: the largest power of two up to chunk_rows(np) whose need fits
 * `budget` (a small GPU budget streams in smaller chunks), or 0 when none of at least
 * CHUNK_MIN rows does. */
static int64_t stream_chunk(const struct sj_shape *sh, int build, int64_t nb, int64_t np,
                            int64_t budget)
{
    for (int64_t c = chunk_rows(np); c >= CHUNK_MIN; c /= 2)
        if (stream_need(sh, build, nb, c) <= budget)
            return c;
    return 0;
}

int join_stream_can_run(const sl_task_t *t)
{
    const struct join_data *d = sl_op_data(sl_task_op(t));
    const struct join_state *st = sl_task_gstate((sl_task_t *)t);
    struct sj_shape sh;
    if (!stream_takes(t, stream_mode(t), &sh) || sl__task_n_devices(t) > 1)
        return 0;
    int64_t n[2] = {join_side_rows(&st->side[0]), join_side_rows(&st->side[1])};
    int build = stream_build(d, n), probe = 1 - build;
    if (n[build] >= ((int64_t)1 << 31) || n[probe] >= ((int64_t)1 << 40) ||
        (d->kind == JOIN_ANTI && n[build] == 0))
        return 0; /* (an anti join with nothing to build keeps every row: the CPU's) */
    int host = 0;
    for (int64_t i = 0; i < st->side[probe].n_batches && !host; i++)
        host = st->side[probe].batches[i]->n_rows > 0 &&
               sl_batch_device(st->side[probe].batches[i]) < 0;
    if (!host)
        return 0; /* all in GPU memory: the in-GPU join */
    return stream_chunk(&sh, build, n[build], n[probe], sl_task_device_budget(t)) > 0;
}

/* ---------------- state ---------------- */

/* Device memory for one probe chunk: chunk c goes into input slot c % n_in. */
struct in_slot {
    void *keys, *pay[SL_K_MAX_COLS];
    cudaEvent_t e_up, e_probed;         /* its upload; the probe that read it */
};

/* A chunk's result: chunk c's in slot c & 1. */
struct slot {
    void *ok, *ob[SL_K_MAX_COLS], *op[SL_K_MAX_COLS]; /* key, build, probe columns */
    int64_t cap, rows, count;
    unsigned long long *d_count;
    cudaEvent_t e_cnt, e_down;
    int busy;
};

/* Where a side is read from: batch bi, row `row` of it. */
struct cursor {
    int64_t bi, row;
};

struct sj {
    sl_task_t *t;
    struct join_state *st;
    const struct join_data *d;
    struct sj_shape sh;
    int build, probe;
    int64_t n[2], chunk;
    cudaStream_t cs, h2d, d2h;
    void *r_keys, *r_pay[SL_K_MAX_COLS];
    struct gj g;                        /* the NPJ table's description (join_cuda.c) */
    void *table;
    size_t table_bytes;
    int serial;                         /* the build keys repeat: wait for each count */
    struct in_slot *in;                 /* n_in input slots (STREAM_SLOTS_MAX at most) */
    int n_in;
    struct slot sl[2];
    cudaEvent_t e_stage[2];             /* the last upload from each staging buffer */
    unsigned long long *h_count;        /* pinned: 2 words per slot, then the first build
                                         * chunk's key range (2) and the table word (2) */
    struct sl__upload_stage us;
    unsigned long long *d_acc;          /* aggregate: 2 words per output column */
    int64_t gpu_count;
    int parts;                          /* the table is built in parts as the build side
                                         * arrives (debug_join_stream_table=parts) */
    int64_t built;                      /* build rows in the table */
    int table_how;                      /* profile stream_table: 0 whole, 1 direct table in
                                         * parts, 2 hash table in parts, 3 parts then whole */
    void *d_mm;                         /* the first build chunk's smallest and largest key */
    cudaEvent_t e_mm, e_tab;            /* their read-back; the table word's */
    char *scratch[2];                   /* device: narrow copies uploaded, per staging slot */
    cudaStream_t wid;                   /* widens them, so the copies go on meanwhile */
    cudaEvent_t e_copy, e_wid[2];       /* a chunk's copies; the widening of a slot's last */
    int64_t scratch_bytes;              /* each (0: none, every value goes up wide) */
    int64_t narrow_bytes;               /* bytes the narrow copies saved on the link */
    double t_built;                     /* host clock when the table was built */
    double wait_ms, alloc_ms;           /* host time waiting for counts, allocating results */
    int64_t unpinned;                   /* result batches not in pinned result memory */
    double stage_ms;                    /* host time enqueueing uploads (staging included) */
    sl_batch_t *res;                    /* the result batch being filled: res_used rows */
    int64_t res_used;
    struct gj_trace tr;
};

#define H_WORDS 8                       /* h_count's words */
#define H_RANGE 4                       /* h_count[4..5]: the first build chunk's key range */
#define H_TABLE 6                       /* h_count[6..7]: the table's last 16 bytes */

/* The join goes to the CPU (a result the budget cannot hold); a success code. */
#define SJ_TO_CPU 1

/* ---------------- uploads ---------------- */

/* Uploads a put_rows call collected: their staging copies are made first (one job of the
 * stager for all of them), then the copies to the GPU are enqueued, then the widening of
 * those that moved a narrow copy into scratch memory, on the widening stream (a kernel on
 * the h2d stream would hold up the next copies). */
struct ups {
    int n, n_wide;
    struct sl__copy v[STAGE_COPIES_MAX];
    struct {
        void *dst;
        const void *tmp;
        const struct sl__narrow *nw;
        int64_t rows;
    } wide[STAGE_COPIES_MAX];
};

static int ups_flush(struct sj *j, struct ups *u)
{
    sl__upload_stage_flush(&j->us);
    for (int i = 0; i < u->n; i++)
        SL_TASK_CUDA_TRY(j->t,
                         cudaMemcpyAsync(u->v[i].dst, u->v[i].src, u->v[i].bytes,
                                         cudaMemcpyDefault, j->h2d),
                         "uploading a chunk");
    if (u->n_wide > 0) { /* on the widening stream, once the copies are done */
        SL_TASK_CUDA_TRY(j->t, cudaEventRecord(j->e_copy, j->h2d), "cudaEventRecord");
        SL_TASK_CUDA_TRY(j->t, cudaStreamWaitEvent(j->wid, j->e_copy, 0), "ordering");
    }
    for (int i = 0; i < u->n_wide; i++) {
        int rc = sl__task_widen(j->t, u->wide[i].dst, u->wide[i].nw, u->wide[i].tmp,
                                u->wide[i].rows, j->wid);
        if (rc < 0)
            return rc;
    }
    u->n = u->n_wide = 0;
    return SL_OK;
}

/* The narrow copy (a pinned table's, sl_table_pin) of `rows` values of column bc from
 * row `row` on, when it is narrower and scratch buffer `slot` has room for it past *used
 * (then taken), else NULL: the values then go up at full width. */
static const struct sl__narrow *narrow_piece(struct sj *j, const struct sl__col *bc, int64_t row,
                                             int64_t rows, int slot, int64_t *used)
{
    int wide = sl__narrow_wide_width(bc->type);
    if (!j->scratch[slot] || wide <= 0 || !bc->data)
        return NULL;
    const struct sl__narrow *nw = sl__narrow_of(bc->data, wide, bc->offset + row, rows);
    int64_t bytes = (rows * (nw ? nw->width : 0) + 255) / 256 * 256;
    if (!nw || nw->width >= wide || nw->buf->kind != SL__MEM_PINNED ||
        *used + bytes > j->scratch_bytes)
        return NULL;
    *used += bytes;
    return nw;
}

/* Rows of side s from *cur, n of them, into keys (and the side's payload columns) at
 * row `at`, on the h2d stream, through staging buffer `slot` when pageable, narrow copies
 * through scratch buffer `slot`. *on: the stream on which an event recorded next marks
 * the rows in place (the widening stream when narrow uploads are on, else h2d). */
static int put_rows(struct sj *j, int s, struct cursor *cur, int64_t n, void *keys,
                    void *const *pay, int64_t at, int slot, cudaStream_t *on)
{
    *on = j->h2d;
    if (j->scratch[slot]) /* the slot's scratch is free once its last chunk is widened */
        SL_TASK_CUDA_TRY(j->t, cudaStreamWaitEvent(j->h2d, j->e_wid[slot], 0), "ordering");
    const struct join_side *js = &j->st->side[s];
    const int nc = 1 + j->sh.n_pay[s];
    int64_t staged = 0, done = 0, used = 0;
    struct ups u;
    u.n = u.n_wide = 0;
    while (done < n && cur->bi < js->n_batches) {
        const sl_batch_t *b = js->batches[cur->bi];
        int64_t take = b->n_rows - cur->row;
        if (take > n - done)
            take = n - done;
        for (int c = 0; c < nc && take > 0; c++) {
            int col = c == 0 ? j->d->key[s][0] : j->sh.pay_col[s][c - 1];
            size_t w = c == 0 ? (size_t)j->sh.kw : (size_t)j->sh.pay_w[s][c - 1];
            char *dst = (char *)(c == 0 ? keys : pay[c - 1]) + (size_t)(at + done) * w;
            const struct sl__col *bc = &b->cols[col];
            const void *src = (const char *)bc->data->ptr + (size_t)(bc->offset + cur->row) * w;
            int rc;
            if (u.n == STAGE_COPIES_MAX && (rc = ups_flush(j, &u)) < 0)
                return rc;
            int64_t at_tmp = used;
            const struct sl__narrow *nw = narrow_piece(j, bc, cur->row, take, slot, &used);
            if (nw) { /* its narrow bytes into scratch, widened into place by ups_flush */
                char *tmp = j->scratch[slot] + at_tmp;
                src = (const char *)nw->buf->ptr +
                      (size_t)(bc->offset + cur->row - nw->first) * nw->width;
                u.wide[u.n_wide++] = (__typeof__(u.wide[0])){dst, tmp, nw, take};
                u.v[u.n++] = (struct sl__copy){tmp, src, (size_t)take * nw->width};
                j->narrow_bytes += take * (int64_t)(w - nw->width);
                continue;
            }
            src = sl__upload_stage_defer(&j->us, slot, staged, bc->data, src, (size_t)take * w);
            if (j->us.stager && bc->data->kind == SL__MEM_HOST)
                staged += take * (int64_t)w;
            u.v[u.n++] = (struct sl__copy){dst, src, (size_t)take * w};
        }
        done += take;
        cur->row += take;
        if (cur->row == b->n_rows) {
            cur->bi++;
            cur->row = 0;
        }
    }
    int rc = ups_flush(j, &u);
    if (rc < 0)
        return rc;
    if (done != n)
        return sl_task_fail(j->t, SL_EINTERNAL, "streamed join: input rows miscounted");
    if (j->scratch[slot]) { /* every copy and widening of the chunk, in order on wid */
        SL_TASK_CUDA_TRY(j->t, cudaEventRecord(j->e_copy, j->h2d), "cudaEventRecord");
        SL_TASK_CUDA_TRY(j->t, cudaStreamWaitEvent(j->wid, j->e_copy, 0), "ordering");
        SL_TASK_CUDA_TRY(j->t, cudaEventRecord(j->e_wid[slot], j->wid), "cudaEventRecord");
        *on = j->wid;
    }
    return SL_OK;
}

/* Waits until staging buffer `slot` is free (its last upload done). */
static int stage_wait(struct sj *j, int slot)
{
    if (j->us.stager)
        SL_TASK_CUDA_TRY(j->t, cudaEventSynchronize(j->e_stage[slot]), "waiting for staging");
    return SL_OK;
}

/* ---------------- the table, in parts as the build side arrives ---------------- */

/* The NPJ table's description for the build side (join_cuda.c's struct gj). */
static void table_desc(struct sj *j)
{
    struct gj *g = &j->g;
    memset(g, 0, sizeof *g);
    g->d = j->d;
    g->kind = stream_kind(j->d);
    g->algo = GJ_NPJ;
    g->build = j->build;
    g->k8 = j->sh.kw == 8;
    g->s[j->build].keys = j->r_keys;
    g->s[j->build].n = j->n[j->build];
}

/* Which table the parts build, from the first chunk's key range (lo to hi): the direct
 * table when that range fits the dense rule of gj_npj_range (at most 2 nb + 1024 slots),
 * else the hash table. The direct table then takes all the slots the rule allows, the
 * first chunk's range in their middle (or from 0 when lo is smaller than the room below):
 * it holds every key of a side whose keys span at most nb + 512 + (hi - lo) / 2 values,
 * as dense keys do, shuffled or ascending, whatever share of them the first chunk took.
 * A key outside it, or a repeated one, has the table rebuilt whole (build_table). */
static void table_guess(struct sj *j, uint64_t lo, uint64_t hi)
{
    struct gj *g = &j->g;
    uint64_t span = hi - lo + 1, cap = 2 * (uint64_t)j->n[j->build] + 1024;
    if (cap > ((uint64_t)1 << 32) - 1)
        cap = ((uint64_t)1 << 32) - 1; /* (the direct table's limit) */
    table_desc(j);
    if (hi < lo || span == 0 || span > cap)
        return; /* sparse keys: the hash table */
    uint64_t below = (cap - span) / 2;
    g->kmin = lo - (below < lo ? below : lo);
    g->range = (int64_t)cap;
}

/* The table's bytes for g's choice, allocated; its first part clears it. */
static int table_alloc(struct sj *j)
{
    struct gj *g = &j->g;
    const int64_t nb = j->n[j->build];
    cudaError_t e =
        g->range ? (g->k8 ? sl_k_npj_dense_build_rows_k64(NULL, &j->table_bytes, NULL, nb, 0, 0,
                                                          g->kmin, g->range, j->cs)
                          : sl_k_npj_dense_build_rows_k32(NULL, &j->table_bytes, NULL, nb, 0, 0,
                                                          (uint32_t)g->kmin, g->range, j->cs))
                 : (g->k8 ? sl_k_npj_build_rows_k64(NULL, &j->table_bytes, NULL, nb, 0, 0, j->cs)
                          : sl_k_npj_build_rows_k32(NULL, &j->table_bytes, NULL, nb, 0, 0, j->cs));
    SL_TASK_CUDA_TRY(j->t, e, "streamed join table size");
    if (!(j->table = sl_task_device_alloc(j->t, j->table_bytes)))
        return SL_ENOMEM;
    return SL_OK;
}

/* Build rows [j->built, to) into the table, on the task stream. */
static int table_rows(struct sj *j, int64_t to)
{
    struct gj *g = &j->g;
    const int64_t nb = j->n[j->build], from = j->built;
    int tr = gj_trace_begin(&j->tr, j->cs);
    cudaError_t e =
        g->range ? (g->k8 ? sl_k_npj_dense_build_rows_k64(j->table, &j->table_bytes, j->r_keys, nb,
                                                          from, to, g->kmin, g->range, j->cs)
                          : sl_k_npj_dense_build_rows_k32(j->table, &j->table_bytes, j->r_keys, nb,
                                                          from, to, (uint32_t)g->kmin, g->range,
                                                          j->cs))
                 : (g->k8 ? sl_k_npj_build_rows_k64(j->table, &j->table_bytes, j->r_keys, nb, from,
                                                    to, j->cs)
                          : sl_k_npj_build_rows_k32(j->table, &j->table_bytes, j->r_keys, nb, from,
                                                    to, j->cs));
    SL_TASK_CUDA_TRY(j->t, e, "streamed join table part");
    gj_trace_end(&j->tr, tr, j->cs, "stream_table_part", 3, 1, (to - from) * j->sh.kw);
    j->built = to;
    return SL_OK;
}

/* The host reads the first chunk's key range, picks the table and allocates it. */
static int table_pick(struct sj *j)
{
    double w0 = join_now_ms();
    SL_TASK_CUDA_TRY(j->t, cudaEventSynchronize(j->e_mm), "reading the key range");
    j->wait_ms += join_now_ms() - w0;
    const unsigned long long *h = j->h_count + H_RANGE;
    uint64_t lo = j->sh.kw == 8 ? h[0] : ((const uint32_t *)h)[0];
    uint64_t hi = j->sh.kw == 8 ? h[1] : ((const uint32_t *)h)[1];
    table_guess(j, lo, hi);
    return table_alloc(j);
}

/* Build chunk c (rows up to `to`, uploaded from staging buffer `slot`) arrived: the task
 * stream waits for it; the first chunk's key range goes to the host, which picks the table
 * after the second chunk's upload is enqueued (so that the read-back holds up no upload;
 * a build side of one chunk picks it in build_table, after the first probe chunks'
 * uploads); then each chunk goes in. */
static int table_part(struct sj *j, int64_t c, int64_t to, int slot)
{
    sl_task_t *t = j->t;
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(j->cs, j->e_stage[slot], 0), "ordering");
    if (c == 0) {
        size_t kw = (size_t)j->sh.kw;
        SL_TASK_CUDA_TRY(t, cudaMemsetAsync(j->d_mm, 0xFF, kw, j->cs), "key range");
        SL_TASK_CUDA_TRY(t, cudaMemsetAsync((char *)j->d_mm + kw, 0, kw, j->cs), "key range");
        SL_TASK_CUDA_TRY(t,
                         kw == 8 ? sl_k_npj_key_range_k64(j->r_keys, to, j->d_mm, j->cs)
                                 : sl_k_npj_key_range_k32(j->r_keys, to, j->d_mm, j->cs),
                         "key range");
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync(j->h_count + H_RANGE, j->d_mm, 2 * kw,
                                         cudaMemcpyDeviceToHost, j->cs),
                         "reading the key range");
        SL_TASK_CUDA_TRY(t, cudaEventRecord(j->e_mm, j->cs), "cudaEventRecord");
    }
    int rc = c == 1 ? table_pick(j) : SL_OK;
    return rc < 0 || !j->table ? rc : table_rows(j, to);
}

/* After the last part: the table's word (duplicates, keys outside the direct table) to
 * the host, read by build_table. */
static int table_parts_end(struct sj *j)
{
    SL_TASK_CUDA_TRY(j->t,
                     cudaMemcpyAsync(j->h_count + H_TABLE, (char *)j->table + j->table_bytes - 16,
                                     16, cudaMemcpyDeviceToHost, j->cs),
                     "reading the table word");
    SL_TASK_CUDA_TRY(j->t, cudaEventRecord(j->e_tab, j->cs), "cudaEventRecord");
    return SL_OK;
}

static int upload_build(struct sj *j)
{
    struct cursor cur = {0, 0};
    int tr = gj_trace_begin(&j->tr, j->h2d);
    for (int64_t at = 0, c = 0; at < j->n[j->build]; c++) {
        int slot = (int)(c & 1), rc;
        cudaStream_t up;
        int64_t n = j->n[j->build] - at < j->chunk ? j->n[j->build] - at : j->chunk;
        double h0 = join_now_ms();
        if ((rc = stage_wait(j, slot)) < 0 ||
            (rc = put_rows(j, j->build, &cur, n, j->r_keys, j->r_pay, at, slot, &up)) < 0)
            return rc;
        j->stage_ms += join_now_ms() - h0;
        SL_TASK_CUDA_TRY(j->t, cudaEventRecord(j->e_stage[slot], up), "cudaEventRecord");
        at += n;
        if (j->parts && (rc = table_part(j, c, at, slot)) < 0)
            return rc;
    }
    gj_trace_end(&j->tr, tr, j->h2d, "stream_build_upload", 1, 0,
                 j->n[j->build] * j->sh.row_w[j->build]);
    if (j->parts)
        return j->table ? table_parts_end(j) : SL_OK; /* (one chunk: build_table) */
    /* The table build waits for the whole upload: the last event recorded on h2d. */
    int64_t last = (j->n[j->build] + j->chunk - 1) / j->chunk - 1;
    SL_TASK_CUDA_TRY(j->t, cudaStreamWaitEvent(j->cs, j->e_stage[last & 1], 0), "ordering");
    return SL_OK;
}

static int64_t chunk_rows_of(const struct sj *j, int64_t c)
{
    int64_t left = j->n[j->probe] - c * j->chunk;
    return left < j->chunk ? left : j->chunk;
}

/* Probe chunk c into its input slot: after the probe of chunk c - n_in read the slot
 * (the caller enqueued that probe, for good: no re-run of it follows). */
static int upload_chunk(struct sj *j, int64_t c, struct cursor *cur)
{
    struct in_slot *in = &j->in[c % j->n_in];
    int64_t rows = chunk_rows_of(j, c);
    double h0 = join_now_ms();
    int rc = stage_wait(j, (int)(c & 1));
    if (rc < 0)
        return rc;
    SL_TASK_CUDA_TRY(j->t, cudaStreamWaitEvent(j->h2d, in->e_probed, 0), "ordering");
    int tr = gj_trace_begin(&j->tr, j->h2d);
    cudaStream_t up;
    if ((rc = put_rows(j, j->probe, cur, rows, in->keys, in->pay, 0, (int)(c & 1), &up)) < 0)
        return rc;
    gj_trace_end(&j->tr, tr, j->h2d, "stream_upload", 1, 0, rows * j->sh.row_w[j->probe]);
    j->stage_ms += join_now_ms() - h0;
    SL_TASK_CUDA_TRY(j->t, cudaEventRecord(in->e_up, up), "cudaEventRecord");
    SL_TASK_CUDA_TRY(j->t, cudaEventRecord(j->e_stage[c & 1], up), "cudaEventRecord");
    return SL_OK;
}

/* ---------------- the table and the probe ---------------- */

/* The table: the parts' (checked: a direct table with a key outside it or repeated is
 * rebuilt whole) or, with debug_join_stream_table=whole, built here over the whole side:
 * the key range, then the direct table or the hash table (join_cuda.c). */
static int build_table(struct sj *j)
{
    struct gj *g = &j->g;
    if (j->parts && !j->table) { /* a build side of one chunk */
        int rc = table_pick(j);
        if (rc < 0 || (rc = table_rows(j, j->n[j->build])) < 0 || (rc = table_parts_end(j)) < 0)
            return rc;
    }
    if (j->parts) {
        double w0 = join_now_ms();
        SL_TASK_CUDA_TRY(j->t, cudaEventSynchronize(j->e_tab), "building the table");
        j->wait_ms += join_now_ms() - w0;
        unsigned word = *(const unsigned *)(j->h_count + H_TABLE);
        if (!g->range) { /* the hash table: repeated keys make the probe walk their runs */
            j->table_how = 2;
            j->serial = word != 0 && g->kind == SL_K_JOIN_INNER;
            return SL_OK;
        }
        if (!word) {
            j->table_how = 1;
            return SL_OK;
        }
        j->table_how = 3; /* a key outside the guessed range, or repeated */
        sl_task_device_free(j->t, j->table);
        j->table = NULL;
    }
    table_desc(j);
    const void *keys = j->r_keys;
    int64_t nb = j->n[j->build];
    int tr = gj_trace_begin(&j->tr, j->cs);
    int rc = gj_npj_range(j->t, g, 1, &keys, &nb);
    if (rc < 0 || (rc = gj_npj_table(j->t, g, NULL, &j->table, &j->table_bytes)) < 0)
        return rc;
    gj_trace_end(&j->tr, tr, j->cs, "stream_table", 3, 1, nb * j->sh.kw);
    if (g->range)
        return SL_OK; /* the direct table holds unique keys only */
    unsigned dup[4] = {0, 0, 0, 0};
    SL_TASK_CUDA_TRY(j->t,
                     cudaMemcpyAsync(dup, (char *)j->table + j->table_bytes - 16, sizeof dup,
                                     cudaMemcpyDeviceToHost, j->cs),
                     "reading the duplicate word");
    SL_TASK_CUDA_TRY(j->t, cudaStreamSynchronize(j->cs), "building the table");
    /* semi and anti joins write a probe row at most once, repeated build keys or not */
    j->serial = dup[0] != 0 && g->kind == SL_K_JOIN_INNER;
    return SL_OK;
}

static sl_k_cols_t cols_of(int n, const int *w, void *const *p)
{
    sl_k_cols_t c;
    memset(&c, 0, sizeof c);
    c.n = n;
    for (int i = 0; i < n; i++) {
        c.width[i] = w[i];
        c.ptr[i] = p[i];
    }
    return c;
}

/* The probe of chunk c on the task stream (after its upload and the download of the
 * slot's previous result), then its count to the host. */
static int probe_chunk(struct sj *j, int64_t c)
{
    int k = (int)(c & 1), b = j->build, p = j->probe;
    struct slot *s = &j->sl[k];
    struct in_slot *in = &j->in[c % j->n_in];
    sl_task_t *t = j->t;
    s->rows = chunk_rows_of(j, c);
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(j->cs, in->e_up, 0), "ordering");
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(j->cs, s->e_down, 0), "ordering");
    SL_TASK_CUDA_TRY(t, cudaMemsetAsync(s->d_count, 0, 2 * sizeof *s->d_count, j->cs), "counts");
    int tr = gj_trace_begin(&j->tr, j->cs);
    sl_k_cols_t rin = cols_of(j->sh.n_pay[b], j->sh.pay_w[b], j->r_pay);
    sl_k_cols_t sin = cols_of(j->sh.n_pay[p], j->sh.pay_w[p], in->pay);
    sl_k_join_out_t ko;
    memset(&ko, 0, sizeof ko);
    ko.keys = s->ok;
    ko.r = cols_of(j->sh.n_pay[b], j->sh.pay_w[b], s->ob);
    ko.s = cols_of(j->sh.n_pay[p], j->sh.pay_w[p], s->op);
    ko.capacity = s->cap;
    cudaError_t e = gj_npj_probe(&j->g, j->table, j->table_bytes, &rin, in->keys, s->rows, &sin,
                                 &ko, s->d_count, j->cs);
    SL_TASK_CUDA_TRY(t, e, "streamed join probe");
    gj_trace_end(&j->tr, tr, j->cs, "stream_probe", 3, 1, s->rows * j->sh.row_w[p]);
    SL_TASK_CUDA_TRY(t, cudaEventRecord(in->e_probed, j->cs), "cudaEventRecord");
    SL_TASK_CUDA_TRY(t,
                     cudaMemcpyAsync(j->h_count + 2 * k, s->d_count, 2 * sizeof *j->h_count,
                                     cudaMemcpyDeviceToHost, j->cs),
                     "reading the count");
    SL_TASK_CUDA_TRY(t, cudaEventRecord(s->e_cnt, j->cs), "cudaEventRecord");
    s->busy = 1;
    return SL_OK;
}

/* A slot's result buffers for cap rows (the key only when an output column is it). */
static int slot_out(struct sj *j, struct slot *s, int64_t cap)
{
    sl_task_t *t = j->t;
    int need_key = 0;
    for (int oc = 0; oc < j->d->n_out; oc++)
        need_key |= j->sh.role[oc] < 0;
    sl_task_device_free(t, s->ok);
    s->ok = NULL;
    if (need_key && !(s->ok = sl_task_device_alloc(t, (size_t)cap * (size_t)j->sh.kw)))
        return SL_ENOMEM;
    for (int side = 0; side < 2; side++) {
        void **dst = side == j->build ? s->ob : s->op;
        for (int i = 0; i < j->sh.n_pay[side]; i++) {
            sl_task_device_free(t, dst[i]);
            if (!(dst[i] = sl_task_device_alloc(t, (size_t)cap * (size_t)j->sh.pay_w[side][i])))
                return SL_ENOMEM;
        }
    }
    s->cap = cap;
    return SL_OK;
}

/* The device array output column oc takes its values from in slot s. */
static const void *out_src(const struct sj *j, const struct slot *s, int oc)
{
    int r = j->sh.role[oc];
    if (r < 0)
        return s->ok;
    int side = r / SL_K_MAX_COLS, i = r % SL_K_MAX_COLS;
    return side == j->build ? s->ob[i] : s->op[i];
}

/* The result batch being filled, cut to the rows it got, goes to the result list. */
static int result_close(struct sj *j)
{
    sl_batch_t *b = j->res;
    j->res = NULL;
    if (!b || j->res_used == 0) {
        sl_batch_unref(b);
        return SL_OK;
    }
    sl_batch_t *cut = sl_task_batch_slice(j->t, b, 0, j->res_used);
    sl_batch_unref(b);
    if (!cut)
        return SL_ENOMEM;
    return join_ooc_out_add(j->t, j->st, cut);
}

/* Waits for chunk c's count; re-runs it with room for every row when its output was
 * short (build keys repeat: serial mode, so its input is still in the slot); then starts
 * its download into a host batch, or sums it. */
static int finish_chunk(struct sj *j, int64_t c)
{
    int k = (int)(c & 1);
    struct slot *s = &j->sl[k];
    sl_task_t *t = j->t;
    if (!s->busy)
        return SL_OK;
    s->busy = 0;
    double w0 = join_now_ms();
    SL_TASK_CUDA_TRY(t, cudaEventSynchronize(s->e_cnt), "streamed join probe");
    j->wait_ms += join_now_ms() - w0;
    s->count = (int64_t)j->h_count[2 * k];
    if (s->count > s->cap && !j->serial) /* unique build keys: at most a row each */
        return sl_task_fail(t, SL_EINTERNAL, "streamed join: %lld rows from a chunk of %lld",
                            (long long)s->count, (long long)s->rows);
    if (s->count > s->cap) {
        if ((s->count - s->cap) * j->sh.res_w + 4 * MIB > sl_task_device_budget(t))
            return SJ_TO_CPU;
        int rc = slot_out(j, s, s->count);
        if (rc < 0 || (rc = probe_chunk(j, c)) < 0)
            return rc;
        s->busy = 0;
        SL_TASK_CUDA_TRY(t, cudaEventSynchronize(s->e_cnt), "streamed join probe");
        s->count = (int64_t)j->h_count[2 * k];
    }
    if (s->count == 0)
        return SL_OK;
    if (j->d->aggregate) {
        const void *vals[2 * JOIN_MAX_COLS];
        for (int oc = 0; oc < j->d->n_out; oc++)
            vals[oc] = out_src(j, s, oc);
        int rc = join_gpu_sums_add(t, j->d, vals, s->count, j->d_acc, j->cs);
        if (rc < 0)
            return rc;
        j->gpu_count += s->count;
        SL_TASK_CUDA_TRY(t, cudaEventRecord(s->e_down, j->cs), "cudaEventRecord");
        return SL_OK;
    }
    if (j->res && j->res_used + s->count > sl_batch_num_rows(j->res)) {
        int rc = result_close(j);
        if (rc < 0)
            return rc;
    }
    if (!j->res) {
        int pinned = 0;
        double a0 = join_now_ms();
        int64_t left = j->n[j->probe] - c * j->chunk, rows = left < RESULT_ROWS ? left : RESULT_ROWS;
        j->res = sl__task_new_result_batch(t, sl_op_output_schema(sl_task_op(t)),
                                           rows > s->count ? rows : s->count, &pinned);
        j->alloc_ms += join_now_ms() - a0;
        if (!j->res)
            return SL_ENOMEM;
        j->res_used = 0;
        j->unpinned += !pinned;
    }
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(j->d2h, s->e_cnt, 0), "ordering the download");
    int tr = gj_trace_begin(&j->tr, j->d2h);
    for (int oc = 0; oc < j->d->n_out; oc++) {
        size_t w = sl_type_width(j->d->out[oc].type);
        SL_TASK_CUDA_TRY(t,
                         cudaMemcpyAsync((char *)sl__col_values(j->res, oc) + (size_t)j->res_used * w,
                                         out_src(j, s, oc), (size_t)s->count * w,
                                         cudaMemcpyDeviceToHost, j->d2h),
                         "downloading a result");
    }
    j->res_used += s->count;
    gj_trace_end(&j->tr, tr, j->d2h, "stream_download", 2, 2, s->count * j->sh.out_w);
    SL_TASK_CUDA_TRY(t, cudaEventRecord(s->e_down, j->d2h), "cudaEventRecord");
    return SL_OK;
}

/* ---------------- the run ---------------- */

static int event_new(struct sj *j, cudaEvent_t *e)
{
    SL_TASK_CUDA_TRY(j->t, cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
    SL_TASK_CUDA_TRY(j->t, cudaEventRecord(*e, j->cs), "cudaEventRecord");
    return SL_OK;
}

/* How many probe chunks may be in GPU memory at once (input slots): all of them when the
 * budget left past the join's needs (stream_need: two of each) holds them in half of it,
 * so the probe side uploads at the link's pace while the table builds and the chunks are
 * probed; at least 2 (one uploading while one is probed; 1 for a single chunk); the
 * option debug_join_stream_slots caps it (2: the design before 2026-11-27, A/B runs). */
static int input_slots(const struct sj *j, int64_t chunks)
{
    int64_t per = j->chunk * j->sh.row_w[j->probe];
    int64_t room = sl_task_device_budget(j->t) -
                   stream_need(&j->sh, j->build, j->n[j->build], j->chunk);
    int64_t n = 2 + (room > 0 ? room / 2 / per : 0), cap = 0;
    sl_task_option_int(j->t, "debug_join_stream_slots", &cap);
    if (cap > 0 && n > cap)
        n = cap;
    if (n > chunks)
        n = chunks;
    if (n > STREAM_SLOTS_MAX)
        n = STREAM_SLOTS_MAX;
    return n < 1 ? 1 : (int)n;
}

/* Scratch memory for narrow uploads (a pinned table's narrow copies, moved as they are and
 * widened on the GPU: docs/TPCH.md "Narrow uploads"), when a batch of either side has
 * them, the option debug_gpu_wide_upload is off and the budget left holds it with room to
 * spare: a chunk of the wider side's rows at full width, per staging slot. Allocated
 * before the events the copy streams wait for. */
static int scratch_open(struct sj *j)
{
    int64_t wide = 0, narrow = 0;
    sl_task_option_int(j->t, "debug_gpu_wide_upload", &wide);
    for (int s = 0; s < 2 && !narrow && !wide; s++)
        for (int64_t i = 0; i < j->st->side[s].n_batches && !narrow; i++) {
            const sl_batch_t *b = j->st->side[s].batches[i];
            const struct sl__col *kc = &b->cols[j->d->key[s][0]];
            narrow = kc->data && kc->data->narrow;
            for (int c = 0; c < j->sh.n_pay[s] && !narrow; c++) {
                const struct sl__col *pc = &b->cols[j->sh.pay_col[s][c]];
                narrow = pc->data && pc->data->narrow;
            }
        }
    int64_t row = j->sh.row_w[0] > j->sh.row_w[1] ? j->sh.row_w[0] : j->sh.row_w[1];
    int64_t bytes = j->chunk * row + 64 * 256;
    if (!narrow || sl_task_device_budget(j->t) < 4 * bytes + 16 * MIB)
        return SL_OK;
    int rc;
    for (int k = 0; k < 2; k++)
        if (!(j->scratch[k] = sl_task_device_alloc(j->t, (size_t)bytes)) ||
            (rc = event_new(j, &j->e_wid[k])) < 0)
            return j->scratch[k] ? rc : SL_ENOMEM;
    if ((rc = event_new(j, &j->e_copy)) < 0)
        return rc;
    j->scratch_bytes = bytes;
    return SL_OK;
}

static int setup(struct sj *j, int64_t chunks)
{
    sl_task_t *t = j->t;
    int b = j->build, p = j->probe, n_in = input_slots(j, chunks), rc;
    if (!(j->r_keys = sl_task_device_alloc(t, (size_t)j->n[b] * (size_t)j->sh.kw)))
        return SL_ENOMEM;
    for (int i = 0; i < j->sh.n_pay[b]; i++)
        if (!(j->r_pay[i] = sl_task_device_alloc(t, (size_t)j->n[b] * (size_t)j->sh.pay_w[b][i])))
            return SL_ENOMEM;
    if (!(j->in = sl_task_alloc(t, (size_t)n_in * sizeof *j->in)))
        return SL_ENOMEM;
    memset(j->in, 0, (size_t)n_in * sizeof *j->in);
    j->n_in = n_in;
    for (int k = 0; k < n_in; k++) {
        struct in_slot *in = &j->in[k];
        if (!(in->keys = sl_task_device_alloc(t, (size_t)j->chunk * (size_t)j->sh.kw)))
            return SL_ENOMEM;
        for (int i = 0; i < j->sh.n_pay[p]; i++)
            if (!(in->pay[i] = sl_task_device_alloc(t, (size_t)j->chunk * (size_t)j->sh.pay_w[p][i])))
                return SL_ENOMEM;
        if ((rc = event_new(j, &in->e_up)) < 0 || (rc = event_new(j, &in->e_probed)) < 0)
            return rc;
    }
    if ((rc = scratch_open(j)) < 0)
        return rc;
    for (int k = 0; k < 2; k++) {
        struct slot *s = &j->sl[k];
        if (!(s->d_count = sl_task_device_alloc(t, 2 * sizeof *s->d_count)))
            return SL_ENOMEM;
        if ((rc = slot_out(j, s, j->chunk)) < 0 || (rc = event_new(j, &s->e_cnt)) < 0 ||
            (rc = event_new(j, &s->e_down)) < 0 || (rc = event_new(j, &j->e_stage[k])) < 0)
            return rc;
    }
    if (!(j->h_count = sl__task_pinned_alloc(t, H_WORDS * sizeof *j->h_count)))
        return SL_ENOMEM;
    if (j->parts && (!(j->d_mm = sl_task_device_alloc(t, 16)) ||
                     (rc = event_new(j, &j->e_mm)) < 0 || (rc = event_new(j, &j->e_tab)) < 0))
        return rc < 0 ? rc : SL_ENOMEM;
    if (j->d->aggregate) {
        size_t bytes = (size_t)(2 * j->d->n_out) * sizeof *j->d_acc;
        if (!(j->d_acc = sl_task_device_alloc(t, bytes)))
            return SL_ENOMEM;
        SL_TASK_CUDA_TRY(t, cudaMemsetAsync(j->d_acc, 0, bytes, j->cs), "zeroing sums");
    }
    int pageable = 0;
    for (int s = 0; s < 2 && !pageable; s++)
        for (int64_t i = 0; i < j->st->side[s].n_batches && !pageable; i++)
            pageable = j->st->side[s].batches[i]->cols[j->d->key[s][0]].data->kind == SL__MEM_HOST;
    /* bytes a row of either side takes in staging */
    int64_t row = j->sh.row_w[0] > j->sh.row_w[1] ? j->sh.row_w[0] : j->sh.row_w[1];
    if ((rc = sl__upload_stage_open(t, &j->us, pageable ? j->chunk * row : 0)) < 0)
        return rc;
    /* Device memory is ordered on the task stream: the copy streams wait for it (the
     * events just recorded there). */
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(j->h2d, j->e_stage[1], 0), "ordering");
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(j->d2h, j->e_stage[1], 0), "ordering");
    SL_TASK_CUDA_TRY(t, cudaStreamWaitEvent(j->wid, j->e_stage[1], 0), "ordering");
    return SL_OK;
}

/* Host order: the build side's uploads, the first probe chunks' (all the input slots
 * hold: they go up while the table builds; with pageable input two, each staged by the
 * host first, which the table build's waits would otherwise hold up), the table, then per
 * chunk c: its probe, the previous chunk's result (or, when build keys repeat, its own,
 * which may re-run it), and the uploads that the slots freed allow. An upload into a
 * slot waits for the probe of the slot's previous chunk, enqueued for good by then. */
static int run(struct sj *j)
{
    int64_t chunks = (j->n[j->probe] + j->chunk - 1) / j->chunk, next = 0;
    int rc = setup(j, chunks);
    if (rc < 0 || (rc = upload_build(j)) < 0)
        return rc;
    struct cursor cur = {0, 0};
    int64_t first = j->us.stager && j->n_in > 2 ? 2 : j->n_in;
    while (next < first)
        if ((rc = upload_chunk(j, next++, &cur)) < 0)
            return rc;
    if ((rc = build_table(j)) < 0)
        return rc;
    j->t_built = join_now_ms();
    for (int64_t c = 0; c < chunks; c++) {
        if ((rc = probe_chunk(j, c)) < 0)
            return rc;
        if (j->serial)
            rc = finish_chunk(j, c);
        else if (c > 0)
            rc = finish_chunk(j, c - 1);
        if (rc != SL_OK)
            return rc;
        /* pageable: one chunk staged per probe, so results go down between stagings */
        for (int k = 0; next < chunks && next <= c + j->n_in && (!j->us.stager || k < 1); k++)
            if ((rc = upload_chunk(j, next++, &cur)) < 0)
                return rc;
    }
    if ((rc = finish_chunk(j, chunks - 1)) != SL_OK)
        return rc;
    return result_close(j);
}

static void release(struct sj *j)
{
    sl_task_t *t = j->t;
    cudaStreamSynchronize(j->cs);
    cudaStreamSynchronize(j->h2d);
    cudaStreamSynchronize(j->d2h);
    cudaStreamSynchronize(j->wid);
    sl__upload_stage_close(t, &j->us);
    for (int k = 0; k < j->n_in; k++) {
        struct in_slot *in = &j->in[k];
        sl_task_device_free(t, in->keys);
        for (int i = 0; i < SL_K_MAX_COLS; i++)
            sl_task_device_free(t, in->pay[i]);
        if (in->e_up)
            cudaEventDestroy(in->e_up);
        if (in->e_probed)
            cudaEventDestroy(in->e_probed);
    }
    sl_task_free(t, j->in);
    for (int k = 0; k < 2; k++) {
        struct slot *s = &j->sl[k];
        sl_task_device_free(t, s->ok);
        sl_task_device_free(t, s->d_count);
        for (int i = 0; i < SL_K_MAX_COLS; i++) {
            sl_task_device_free(t, s->ob[i]);
            sl_task_device_free(t, s->op[i]);
        }
        cudaEvent_t ev[3] = {s->e_cnt, s->e_down, j->e_stage[k]};
        for (int e = 0; e < 3; e++)
            if (ev[e])
                cudaEventDestroy(ev[e]);
    }
    sl_task_device_free(t, j->r_keys);
    for (int i = 0; i < SL_K_MAX_COLS; i++)
        sl_task_device_free(t, j->r_pay[i]);
    sl_task_device_free(t, j->table);
    sl_task_device_free(t, j->d_acc);
    sl_task_device_free(t, j->d_mm);
    for (int k = 0; k < 2; k++) {
        sl_task_device_free(t, j->scratch[k]);
        if (j->e_wid[k])
            cudaEventDestroy(j->e_wid[k]);
    }
    if (j->e_copy)
        cudaEventDestroy(j->e_copy);
    if (j->e_mm)
        cudaEventDestroy(j->e_mm);
    if (j->e_tab)
        cudaEventDestroy(j->e_tab);
    sl_batch_unref(j->res); /* after a failure: its downloads are done (synchronized) */
    j->res = NULL;
    if (j->h_count)
        sl__task_pinned_free(t, j->h_count, H_WORDS * sizeof *j->h_count);
}

int join_stream_finalize(sl_task_t *t)
{
    struct join_state *st = sl_task_gstate(t);
    struct sj *j = sl_task_alloc(t, sizeof *j);
    if (!j)
        return SL_ENOMEM;
    memset(j, 0, sizeof *j);
    j->t = t;
    j->st = st;
    j->d = sl_op_data(sl_task_op(t));
    st->d = j->d;
    st->gpu = 1;
    st->ooc = 1;
    memset(&st->total, 0, sizeof st->total);
    stream_shape(j->d, &j->sh);
    for (int s = 0; s < 2; s++)
        j->n[s] = st->side[s].n_rows = join_side_rows(&st->side[s]);
    j->build = stream_build(j->d, j->n);
    j->probe = 1 - j->build;
    /* nothing to probe, or (inner, semi) nothing to match: no rows (can_run sent an anti
     * join with nothing to build to the CPU) */
    int empty = j->n[j->probe] == 0 || (j->n[j->build] == 0 && j->d->kind != JOIN_ANTI);
    j->chunk = empty ? 0 : stream_chunk(&j->sh, j->build, j->n[j->build], j->n[j->probe],
                                        sl_task_device_budget(t));
    if (!empty && j->chunk == 0) {
        /* The budget shrank since can_run (other queries of the engine took GPU memory):
         * not even chunks of CHUNK_MIN rows fit, so the CPU joins, before anything was
         * allocated (it went on with CHUNK_MIN chunks over the budget before). */
        sl_task_free(t, j);
        st->ooc = 0;
        st->gpu = 0;
        sl_task_profile_value(t, "stream_to_cpu", 1);
        return join_finalize(t);
    }
    sl_task_profile_value(t, "gpu_algo", GJ_NPJ);
    sl_task_profile_value(t, "host_streamed", 1);
    if (empty) {
        sl_task_free(t, j);
        return SL_OK;
    }
    sl_task_profile_value(t, "stream_chunk_rows", j->chunk);
    int64_t whole = 0;
    sl_task_option_int(t, "debug_join_stream_table", &whole);
    j->parts = !whole && j->n[j->build] > 0;
    j->cs = sl_task_stream(t);
    void *side[3];
    int rc = sl__task_streams_get(t, 3, side);
    if (rc < 0) {
        sl_task_free(t, j);
        return rc;
    }
    j->h2d = side[0];
    j->d2h = side[1];
    j->wid = side[2];
    double t0 = join_now_ms();
    rc = gj_trace_open(t, &j->tr);
    if (rc == SL_OK)
        rc = run(j);
    if (rc == SL_OK && j->d->aggregate)
        rc = join_gpu_sums_total(t, st, j->d_acc, j->gpu_count, j->cs);
    release(j);
    gj_trace_close(t, &j->tr, rc == SL_OK);
    /* The bench's phases (bench_join_phases), on the host clock (the table's end is a
     * wait): prepare = the build side up and its table, join = the probe side streamed,
     * finalize = all of it. */
    int64_t times = 0;
    sl_task_option_int(t, "debug_join_phase_times", &times);
    if (rc == SL_OK && times && j->t_built > 0) {
        double t1 = join_now_ms();
        sl_task_phase_time(t, "prepare", j->t_built - t0);
        sl_task_phase_time(t, "join", t1 - j->t_built);
        sl_task_phase_time(t, "finalize", t1 - t0);
    }
    sl_task_profile_value(t, "stream_serial", j->serial);
    sl_task_profile_value(t, "stream_table", j->table_how);
    sl_task_profile_value(t, "stream_narrow_saved", j->narrow_bytes);
    sl_task_profile_value(t, "stream_wait_us", (int64_t)(j->wait_ms * 1e3));
    sl_task_profile_value(t, "stream_alloc_us", (int64_t)(j->alloc_ms * 1e3));
    sl_task_profile_value(t, "stream_unpinned", j->unpinned);
    sl_task_profile_value(t, "stream_stage_us", (int64_t)(j->stage_ms * 1e3));
    sl__task_streams_put(t, 3, side);
    sl_task_free(t, j);
    if (rc == SJ_TO_CPU) { /* a result the budget cannot hold: the CPU joins instead */
        join_ooc_free(st);
        st->ooc = 0;
        st->gpu = 0;
        memset(&st->total, 0, sizeof st->total);
        return join_finalize(t);
    }
    return rc;
}
