/* The exchange operator's parts: where each row goes (exchange_route.c), rows packed
 * into packets and unpacked from them (exchange_pack.c), and the operator driving the
 * transport (exchange.c). docs/DISTRIBUTED.md. */
#ifndef SL_EXCHANGE_INT_H
#define SL_EXCHANGE_INT_H

#include "common/materialize.h"
#include "exchange.h"

enum xchg_mode { X_HASH, X_RANGE, X_GATHER };

struct xchg_data {
    enum xchg_mode mode;
    int key;    /* the key column (hash, range); -1 for gather */
    int to;     /* gather: the receiving rank */
    int n_cols;
    char balance[64]; /* hash: the balance group, "" = none */
};

struct xchg_global {
    struct sl__mat m;  /* the skeleton's part: the sink's batches; n = rows received */
    sl_batch_t **out;  /* the received batches, one per packet, senders in rank order */
    int64_t n_out;
    sl_xchg_stats stats;
};
_Static_assert(offsetof(struct xchg_global, m) == 0, "struct sl__mat comes first");

/* ---------------- routing (exchange_route.c) ---------------- */

/* Where rows go: hash mode, bucket of the key's hash modulo ranks; range mode, the
 * splitters (ranks - 1 of them, ascending) of (key, rank, row) triples, so that equal
 * keys (a Zipf-hot value) may be split between ranks and the ranks' results, in rank
 * order, are still sorted; gather, one rank. Null keys go to rank 0 (hash) or to the
 * last rank (range: they sort last). */
struct xchg_split {
    int64_t key;
    int32_t rank;
    int64_t row;
};

struct xchg_route {
    enum xchg_mode mode;
    int ranks, rank, to;
    const struct sl__rowsview *key;
    struct xchg_split *splits; /* range: ranks - 1 */
    const int32_t *bucket_rank; /* balanced hash: the rank of each of n_buckets buckets */
    int n_buckets;
};

/* The destination of local row i. */
int sl__xchg_route(const struct xchg_route *r, int64_t i);
/* The destinations of all n local rows into dest (one pass, the mode and key type
 * chosen once), and count[d], how many go to each of r->ranks destinations. */
void sl__xchg_route_all(const struct xchg_route *r, int64_t n, int32_t *dest, int64_t *count);

/* Balanced hash: SL__XCHG_BUCKETS_PER_RANK x ranks buckets of the key's hash, counted
 * (hist, n_buckets) over the n local rows (null keys are not counted: they go to rank
 * 0), then assigned to ranks from the group's summed sizes, largest first, each to the
 * rank with the fewest rows so far (the LPT rule: no rank gets more than the mean plus
 * the largest bucket). Every rank, given the same sums, makes the same assignment. */
#define SL__XCHG_BUCKETS_PER_RANK 64
void sl__xchg_bucket_sizes(const struct sl__rowsview *key, int64_t n, int n_buckets,
                           int64_t *hist);
void sl__xchg_assign_buckets(const int64_t *sizes, int n_buckets, int ranks, int32_t *out);

/* A sample of n local rows for range splitters: about SAMPLES_PER_RANK rows at a
 * regular stride, each weighted by the rows it stands for. */
struct xchg_sample {
    struct xchg_split at;
    int64_t weight;
};
#define SL__XCHG_SAMPLES_PER_RANK 1024
/* Fills s (room for SL__XCHG_SAMPLES_PER_RANK) from the n local rows of key; returns the
 * count. Null keys are not sampled. */
int64_t sl__xchg_sample(const struct sl__rowsview *key, int64_t n, int rank,
                        struct xchg_sample *s);
/* Chooses ranks - 1 splitters at the weighted quantiles of all ranks' samples (sorted in
 * place; every rank, given the same samples, chooses the same splitters). */
void sl__xchg_splitters(struct xchg_sample *all, int64_t n, int ranks, struct xchg_split *out);

/* ---------------- packets (exchange_pack.c) ----------------
 * A packet: a header (rows, then a bit per column whose validity bytes follow), then per
 * column its values, then per flagged column one byte per row (1 = valid). */
struct xchg_layout {
    int n_cols;
    const struct sl__rowsview *cols;  /* the local rows, one view per column */
    size_t width[64];
    size_t row_bytes;                 /* all values and validity bytes of a row */
    int64_t cap;                      /* rows per packet */
    size_t sum_width;                 /* value bytes of a row */
    size_t stage_off[64];             /* column c's values in a staging buffer */
};
/* The layout of `schema`'s rows; cols may be NULL on a rank without rows (it only
 * receives). */
void sl__xchg_layout_init(struct xchg_layout *l, const sl_schema_t *schema,
                          const struct sl__rowsview *cols, size_t packet_bytes);
/* A staging buffer of one destination, filled row by row. */
struct xchg_stage {
    uint8_t *buf;      /* layout cap rows, strided by cap */
    int64_t rows;
};
/* Appends local row i to st (which has room). */
void sl__xchg_stage_add(const struct xchg_layout *l, struct xchg_stage *st, int64_t i);
/* Turns st's rows into a packet in place (columns moved down to a stride of st->rows);
 * returns its bytes. */
size_t sl__xchg_stage_seal(const struct xchg_layout *l, struct xchg_stage *st);

/* All at once (a transport with send_all): the n local rows, routed to dest[i] (count[d]
 * to each of `ranks`), packed column by column into one buffer per destination: a run of
 * packets of at most l->cap rows, each as sl__xchg_stage_seal makes it. buf[d] comes from
 * sl__malloc (bytes[d]; NULL and 0 for a destination without rows). SL_ENOMEM (buffers
 * made so far freed). */
int sl__xchg_pack_all(const struct xchg_layout *l, const int32_t *dest, int64_t n, int ranks,
                      const int64_t *count, uint8_t **buf, size_t *bytes);
/* The bytes sl__xchg_pack_all will make for each destination (before packing: what the
 * bulk exchange charges to the host budget). */
void sl__xchg_run_sizes(const struct xchg_layout *l, int64_t n, int ranks,
                        const int64_t *count, size_t *bytes);

/* Received packets, each unpacked into a batch of its own as it arrives (so its buffer
 * and credit go back at once), kept per sender in arrival order. */
struct xchg_piece;
struct xchg_inbox {
    struct xchg_piece **head, **tail; /* [ranks] */
    int ranks;
    int64_t rows, n_batches;
};
int sl__xchg_inbox_init(struct xchg_inbox *in, int ranks);
/* Unpacks packet p (bytes from sender src) into a batch of `schema`, its buffers charged
 * to the host budget of task `charged` (not when NULL). SL_EFORMAT on a malformed packet,
 * SL_EBUDGET, SL_ENOMEM. */
int sl__xchg_inbox_add(struct xchg_inbox *in, const struct xchg_layout *l,
                       const sl_schema_t *schema, int src, const void *p, size_t bytes,
                       sl_task_t *charged);
/* Takes a run of packets from src (sl__xchg_pack_all's buffer for this rank; `run`, from
 * sl__malloc, bytes long, may be NULL for 0 bytes), each packet a batch of its own whose
 * columns are slices of the run where aligned for their width (no copy), copies
 * elsewhere. Takes ownership of run: it is freed with the last batch that holds a slice
 * (or at once). With `charged` (not NULL), the run's bytes are charged to that task's
 * host budget already (sl__task_host_charge) and go back with the run; columns copied
 * out of it are charged as sl__xchg_inbox_add's. SL_EFORMAT on a malformed run,
 * SL_EBUDGET, SL_ENOMEM. */
int sl__xchg_inbox_add_run(struct xchg_inbox *in, const struct xchg_layout *l,
                           const sl_schema_t *schema, int src, void *run, size_t bytes,
                           sl_task_t *charged);
/* The batches, senders in rank order (*n of them; the caller owns the array, from
 * sl__calloc, and the references); NULL without memory. */
sl_batch_t **sl__xchg_inbox_take(struct xchg_inbox *in, int64_t *n);
void sl__xchg_inbox_fini(struct xchg_inbox *in);

#endif
