/* Sorted runs on a GPU for out-of-core operators (issue 8): the GPU half of the
 * out-of-core sort, shared by the sort (sort_cuda_ooc.c) and the sort-merge join
 * (join/join_smj_ooc.c). CUDA builds only.
 *
 * The input rows (host batches, or batches on a GPU, in input order) are cut
 * into runs of R rows; each run is uploaded (an h2d stream borrowed from the runtime),
 * sorted stably by CUB (task's stream: key + payload as pairs, or key + row id and a
 * gather per other column) and downloaded (a d2h stream, borrowed too) into pinned
 * host memory (an int32 key and one 4-byte column, where the caller takes them, as packed
 * 8-byte rows: ooc_merge.h, sort_packed in ooc_runs_cuda.c; where pass 2 will run on the
 * GPU, narrow: 6-byte rows and a table per run, narrow_run). Two buffer sets, so
 * run i+1 uploads while run i sorts and run i-1 downloads (with option debug_ooc_sets=3
 * the sort's pass 1 takes three where they fit at the same R: sl__ooc_pass1_pick; two by
 * default). Then sl__ooc_runs_merge
 * re-sorts buckets of the runs on the GPU (pass 2), or ooc_merge.h merges the runs on
 * CPU threads.
 *
 * R: the largest power of two (>= SL__OOC_MIN_RUN rows unless every row fits one run)
 * with sets * R * (every column's bytes in and out, + 8 for row ids with three columns
 * or more) + CUB's temp for R rows <= GPU budget left - 6 MiB, and, with several runs,
 * at least 32 runs; sets = 2, or 3 where three fit at that R with option
 * debug_ooc_sets=3 (the sort's runs of pinned or GPU input only). All device memory comes
 * from sl_task_device_alloc: the budget is never passed. Pinned runs count against the
 * host budget and live until sl__ooc_sorted_free. */
#ifndef SL_SORT_OOC_RUNS_H
#define SL_SORT_OOC_RUNS_H

#include "gpu_ext.h"
#include "ooc_merge.h"

#define SL__OOC_MIN_RUN ((int64_t)1 << 12)
/* Narrow runs in pass 2: a bucket (a key range) spans at most this many top-16 code
 * values, so a buffer set holds that window of every run's table. */
#define SL__OOC_NARROW_WINDOW 2048

/* What to sort: run column c is column col[c] of every batch; run column `key` is the
 * key (a signed 4- or 8-byte integer: sl__type_signed_word); every column 4 or 8 bytes
 * wide, without nulls. Batch i is
 * batches[i * stride] (stride 0 means 1), so that arrays of structs whose first member
 * is the batch pointer (struct sl__rows_item) serve without a copy. */
struct sl__ooc_input {
    sl_batch_t *const *batches;
    int64_t n_batches, stride;
    int n_cols;
    int col[SL__OOC_MAX_COLS];
    int key, desc;
    int pack;   /* 1: the caller takes packed runs (runs.packed, ooc_merge.h) where the
                   shape allows: an int32 key and one 4-byte column (the sort; pass 2
                   and the CPU merge read them, sl__ooc_runs_merge_all does not), narrow
                   ones too (runs.narrow); 2: packed 8-byte rows, never narrow (the
                   sort-merge join's key ranges with debug_smj_packed); 3: packed and
                   narrow wherever narrow runs may be (several runs, pass 2 by copies,
                   debug_ooc_narrow_runs not off), with or without pass 1's cuts (the
                   sort-merge join's key ranges with debug_smj_narrow) */
    int64_t narrow_runs; /* pack 3: narrow only where pass 1's plan has at most this many
                            runs (the sort-merge join sized pass 2's windows of the tables
                            for them; else packed 8-byte rows); 0: any */
    /* Given splitters (n_codes > 0, ascending key codes; the sort-merge join's, shared by
     * both sides): pass 1 finds every run's cuts at these (sl__ooc_sorted's split, with
     * split_rows 0) instead of sampling its own. */
    const uint64_t *codes;
    int64_t n_codes;
    int no_cuts; /* 1 without given splitters: pass 1 samples none of its own (the
                    sort-merge join searches its cuts in the runs afterwards) */
};

/* The sorted runs (runs.rows / runs.cols point into the arrays below). */
struct sl__ooc_sorted {
    struct sl__ooc_runs runs;
    int64_t n;
    int64_t *rows;
    void **cols;
    int64_t *bytes;
    struct sl__pinned_owner owner;
    double gpu_ms;                   /* wall time of the GPU part */
    int sets;                        /* pass 1's buffer sets (2, or 3: option
                                        debug_ooc_sets), 1 for a single run */
    /* Pass 2's cuts, when pass 1 computed them (n_codes > 0; issue 23): splitters codes[i]
     * of buckets of about 3/4 split_rows rows, taken from the input before it was sorted
     * (sl__ooc_input_splitters), and split[j * n_codes + i] = rows of run j whose code is
     * below codes[i], found on the GPU as each run was sorted (pinned, split_bytes). */
    uint64_t *codes;
    int64_t n_codes, split_rows, split_bytes;
    int graded;                      /* four more codes: the first and last buckets cut in
                                        a quarter, a quarter and a half */
    int64_t *split;
    /* Narrow runs with pass 1's cuts (option debug_ooc_narrow_tops not host): beside each
     * cut the top-16 code values of the rows before and at it, found on the GPU
     * (sl_k_ooc_split_tops): run j's 2 (n_codes + 2) int32 from split_tops + j * 2 (n_codes
     * + 2), for boundary x = row 0, the n_codes splits, the run's end (pinned). */
    int32_t *split_tops;
    int64_t split_tops_bytes;
    /* Narrow runs (runs.narrow): every run's table, one pinned array (runs.narrow_tables) */
    uint32_t *ntab;
    int64_t ntab_bytes;
};

/* 1 if the input can be sorted in runs under what is left of the GPU budget (shapes
 * above, at least one row; batches in host memory or on a GPU). */
int sl__ooc_runs_can(sl_task_t *t, const struct sl__ooc_input *in);
/* The plan pass 1 would make for the input now (as sl__ooc_runs_can): rows a run, 0 when
 * it cannot; *n_runs its runs and *packed 1 where they would be packed (in->pack). */
int64_t sl__ooc_runs_plan(sl_task_t *t, const struct sl__ooc_input *in, int64_t *n_runs,
                          int *packed);
/* Sorts the input into runs; *out (NULL on failure) is the caller's, also after a
 * failure past its allocation (then freed by the caller like a result). With several
 * runs (at most SL__OOC_SPLIT_RUNS) of keys in host memory, it also finds pass 2's cuts
 * at splitters sampled from the input, each run's on the GPU once it is sorted (the
 * fields after gpu_ms), unless option debug_ooc_sort_merge is cpu or late_cuts (the cuts
 * searched in the pinned runs after pass 1, as before); with pinned or GPU input the
 * first runs go up while the splitters are sampled, and their cuts are searched on the
 * host during the rest of pass 1 (debug_ooc_presplit). Returns SL_OK or the failure
 * recorded on the task. */
#define SL__OOC_SPLIT_RUNS 1024
int sl__ooc_runs_sort(sl_task_t *t, const struct sl__ooc_input *in, struct sl__ooc_sorted **out);
/* sl__ooc_runs_sort in two halves, so that the caller works while pass 1 runs on the GPU
 * (the sort-merge join: splitters sampled, the other side's pass 1 queued): begin plans,
 * allocates and queues every run (the task's stream and two borrowed copy streams) and
 * sets *out as sl__ooc_runs_sort does; end (whatever begin returned, *h NULL or not; in
 * `in` must live until then) waits for this pass's copies and kernels only, frees its
 * device buffers and returns the pass's first failure. The task's stream is in order:
 * work the caller queues on it between the two runs after this pass's sorts. after (a
 * cudaEvent_t, or NULL): what the pass's copies wait for instead of the task's stream as
 * it is (device memory is ordered there): an event the caller recorded on that stream
 * before the work it queued since (another pass 1), which must free no device memory
 * there, so that this pass's uploads need not wait for that work. */
struct sl__ooc_pass1;
int sl__ooc_runs_sort_begin(sl_task_t *t, const struct sl__ooc_input *in,
                            struct sl__ooc_sorted **out, struct sl__ooc_pass1 **h, void *after);
int sl__ooc_runs_sort_end(sl_task_t *t, struct sl__ooc_pass1 *h);
/* Splitter codes of P buckets of about equal rows over the keys of n_in inputs together
 * (one key width and order; sl__ooc_input_splitters over every batch of them, `over`
 * samples a bucket, samples of keys in this GPU's batches read by a kernel): codes, P - 1
 * of them (P + 3 when graded: sl__ooc_input_splitters), ascending (equal ones where few
 * keys fill many rows). Returns 1, 0 when a key
 * column is in memory neither the host nor this GPU reads (nothing computed), or < 0
 * after failing the task. */
int sl__ooc_inputs_splitters(sl_task_t *t, const struct sl__ooc_input *in, int n_in, int64_t P,
                             int graded, int64_t over, uint64_t *codes);
/* The same, the samples in GPU batches read on `stream` (a cudaStream_t; NULL: the
 * task's), which the host waits for (the caller orders it after the batches' writers). */
int sl__ooc_inputs_splitters_on(sl_task_t *t, const struct sl__ooc_input *in, int n_in,
                                int64_t P, int graded, int64_t over, uint64_t *codes,
                                void *stream);
/* The GPU sort of pass 1's runs, for other buckets of rows (the sort-merge join's key
 * ranges): rows of the columns in[c] (the shape's n_cols, key_col, desc, width) sorted
 * stably by the key into out[c] on `stream`: (key, payload) pairs by CUB, or (key, row
 * id) and a gather per other column for two payloads or more, ids then holding 2 x rows
 * u32. sl__ooc_gpu_sort_temp gives the temp bytes for up to `rows` rows (< 0 after
 * failing the task); sl__ooc_gpu_sort_ids whether ids are needed. */
int64_t sl__ooc_gpu_sort_temp(sl_task_t *t, const struct sl__ooc_runs *shape, int64_t rows);
int sl__ooc_gpu_sort_ids(const struct sl__ooc_runs *shape);
int sl__ooc_gpu_sort(sl_task_t *t, const struct sl__ooc_runs *shape, void *const *in,
                     void *const *out, int64_t rows, void *temp, size_t temp_bytes, uint32_t *ids,
                     void *stream);
/* Copies n pieces (dst[i] <- src[i], size[i] bytes; host or device memory, by UVA) on
 * `stream` (a cudaStream_t): with batch, in one cudaMemcpyBatchAsync call (CUDA 13; one
 * cudaMemcpyAsync each before it or without batch). Sources are read in stream order.
 * < 0 after failing the task (`what` names the copies). */
int sl__ooc_copy_batch(sl_task_t *t, void **dst, void **src, size_t *size, size_t n,
                       int batch, void *stream, const char *what);
/* How pass 2 brings a bucket's slices (one per run) into GPU memory: a copy call per
 * slice and column; the same copies in one cudaMemcpyBatchAsync call; or one kernel
 * reading them from the pinned runs (zero-copy; kernels/sort/ooc_gather.cu). */
enum sl__ooc_gather { SL__OOC_GATHER_COPY, SL__OOC_GATHER_BATCH, SL__OOC_GATHER_KERNEL };
/* The task's choice for runs m (option debug_ooc_sort_gather; auto: batched copies up to
 * 128 runs, 256 packed, the kernel past them, as measured in ooc_runs_cuda.c). */
enum sl__ooc_gather sl__ooc_gather_of(sl_task_t *t, const struct sl__ooc_runs *m);

/* Pass 2, the merge on the GPU (docs/OUT_OF_CORE.md): bucket b of nb is rows
 * [cuts[b k + j], cuts[(b + 1) k + j]) of every run j (k runs; at most R rows in all, a
 * range of output ranks). Each bucket's slices are uploaded in run order, sorted
 * stably by CUB (so ties keep run order: the bucket is in its final order) and
 * downloaded into the pinned host columns dst[b * n_cols + c]. ready(t, arg, b) is
 * called on this thread, in order, once bucket b is down (two buckets behind the
 * uploads); with ready NULL the host never waits for a bucket and enqueues them all.
 * The budget left must hold pass 2's buffers and tables (sl__ooc_merge_rows). Narrow
 * runs: tops, sl__ooc_bucket_cuts' (NULL: searched in the tables here). */
int sl__ooc_runs_merge(sl_task_t *t, struct sl__ooc_sorted *st, const int64_t *cuts, int64_t nb,
                       const int64_t *tops, int64_t R, enum sl__ooc_gather gather,
                       void *const *dst, int (*ready)(sl_task_t *, void *, int64_t), void *arg);
/* Pass 2's buckets: output ranks cut at sampled keys into pieces of about 3/4 R rows, a
 * piece larger than R (few keys, many rows) cut again at exact ranks, empty ones
 * dropped; *nb buckets. The splitters and their splits are pass 1's when it found them
 * for buckets of R rows (st->n_codes, st->split_rows), else sampled from the sorted runs
 * and searched there. Returns cuts, (nb + 1) x k, the caller's to free(); NULL on
 * failure (recorded on the task). Narrow runs: *tops (when tops is not NULL; else
 * freed) = each bucket's lowest and highest top-16 code value (2 x nb, the caller's to
 * free()) where pass 1 found them beside its cuts (st->split_tops), else NULL. */
int64_t *sl__ooc_bucket_cuts(sl_task_t *t, const struct sl__ooc_sorted *st, int64_t R,
                             int64_t *nb, int64_t **tops);
/* 1 when pass 1 found the cuts of buckets of R rows (sl__ooc_bucket_cuts takes them). */
int sl__ooc_pass1_cuts(const struct sl__ooc_sorted *st, int64_t R);
/* Rows per bucket for pass 2 (R: the runs' size): the size pass 1's cuts were made for
 * when it fits the budget left; else the most rows (in steps of 2^16) that pass 2's
 * buffers and tables fit with at least 32 buckets, when more than R (option
 * debug_ooc_run_buckets: never); else R, halved until it fits; 0 when not even
 * SL__OOC_MIN_RUN rows do. */
int64_t sl__ooc_merge_rows(sl_task_t *t, const struct sl__ooc_sorted *st, int64_t R,
                           enum sl__ooc_gather gather);
/* Merges st's runs into one on the GPU (pass 2, sl__ooc_gather_of) into pinned memory of
 * its own, then gives the runs back: st holds one run. Returns 1 when merged, 0 when
 * not (one run already, or the GPU or host budget left is too small: st unchanged),
 * or the failure recorded on the task. */
int sl__ooc_runs_merge_all(sl_task_t *t, struct sl__ooc_sorted *st);
/* Frees runs from any thread while the engine is open. NULL is fine. */
void sl__ooc_sorted_free(struct sl__ooc_sorted *s);

#endif /* SL_SORT_OOC_RUNS_H */
