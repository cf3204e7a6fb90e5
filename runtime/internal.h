/* Internal declarations shared by the runtime's files. Never installed.
 * Internal non-static symbols take the sl__ prefix. */
#ifndef SLUICE_RUNTIME_INTERNAL_H
#define SLUICE_RUNTIME_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sluice/sluice.h"
#include "sluice/op.h"     /* the runtime implements the operator ABI */
#include "sluice/plugin.h"

#define SL__CACHE_LINE 64
#define SL__ALIGN 64

#if defined(__GNUC__)
#define SL__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define SL__LIKELY(x) __builtin_expect(!!(x), 1)
#define SL__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SL__PRINTF(a, b)
#define SL__LIKELY(x) (x)
#define SL__UNLIKELY(x) (x)
#endif

/* Invariant checks: assert in debug builds; in release SL_ALWAYS/SL_NEVER evaluate to
 * the condition so callers can return SL_EINTERNAL (SQLite's ALWAYS/NEVER). Never use
 * them on data or device outcomes. */
#ifndef NDEBUG
#include <assert.h>
#define SL_ASSERT(x) assert(x)
#define SL_ALWAYS(x) ((x) ? 1 : (assert(0 && #x), 0))
#define SL_NEVER(x) ((x) ? (assert(0 && #x), 1) : 0)
#else
#define SL_ASSERT(x) ((void)0)
#define SL_ALWAYS(x) (x)
#define SL_NEVER(x) (x)
#endif

/* ---------------- errors (error.c) ---------------- */

#define SL__MSG_MAX 512

/* Whether code is SL_OK or one of the SL_E* codes (a plugin may return anything). */
bool sl__err_known(int code);
/* A public entry point's check of its pointer arguments: SL_EINVAL naming the function
 * instead of a crash (docs/RELIABILITY.md, tests/unit/test_api_null.c). */
#define SL__CHECK_ARGS(ok)                                                              \
    do {                                                                                \
        if (SL__UNLIKELY(!(ok)))                                                        \
            return sl__set_last_error(SL_EINVAL, "%s: a NULL argument", __func__);      \
    } while (0)

/* Stores a printf-style message as this thread's last error and returns code. */
int sl__set_last_error(int code, const char *fmt, ...) SL__PRINTF(2, 3);
int sl__set_last_errorv(int code, const char *fmt, va_list ap);

/* The native error of the last failing device call on this thread (a cudaError_t) and
 * the device index it failed on (1 + CUDA ordinal, or -1 if unknown), noted by the one
 * CUDA error path (sl__cuda_check) so that a query failing with SL_EDEVICE can report
 * them in sl_error_info. _take returns the native code (0 if none) and clears the note;
 * _clear drops a stale note when a task starts. */
void sl__device_error_note(int native, int device);
int sl__device_error_take(int *device);
void sl__device_error_clear(void);

/* An error slot owned by an object (engine, plan, query). */
struct sl__errslot {
    int code;
    char msg[SL__MSG_MAX];
};
/* Writes msg into the slot and the thread's last error; returns code. */
int sl__errslot_set(struct sl__errslot *e, int code, const char *fmt, ...) SL__PRINTF(3, 4);

/* ---------------- growable structs (growable.c) ---------------- */

/* Output side of engine.h's rule: copies the library's full struct `src` (`full` bytes)
 * into the caller's `dst`, only as far as dst->size reaches; dst->size is kept.
 * SL_EINVAL (named after `what`) for NULL dst or a size that does not reach past the
 * size member. */
int sl__out_fill(void *dst, const void *src, size_t full, const char *what);
/* Input side: `out` (the library's full struct) gets `defaults`, then the first
 * in->size bytes of `in` over them. SL_EINVAL for a size not past the size member,
 * SL_EABI for one larger than `full`. */
int sl__in_read(void *out, const void *defaults, const void *in, size_t full, const char *what);

/* ---------------- host memory (mem_host.c) ---------------- */

/* All host allocations of the library go through these. They use jemalloc arenas
 * that sluice creates (mallocx), or libc in sanitizer builds (-Dallocator=libc), and
 * count live allocations and bytes. sl__malloc returns 64-byte aligned memory.
 * The fault injector makes the Nth allocation from now fail (tests only). */
void *sl__malloc(size_t bytes);
void *sl__calloc(size_t n, size_t size);
void *sl__realloc(void *p, size_t old_bytes, size_t new_bytes);
void sl__free(void *p, size_t bytes); /* bytes: the size asked for (0 if unknown) */
char *sl__strdup(const char *s);
void sl__free_str(char *s);

struct sl__mem_counters {
    int64_t live_allocs; /* allocations not yet freed */
    int64_t live_bytes;
    int64_t total_allocs;
    int64_t peak_bytes;  /* most live bytes since start or sl__mem_reset_peak */
};
void sl__mem_counters(struct sl__mem_counters *c);
void sl__mem_reset_peak(void);
/* After `n` more successful allocations, the next one fails (n = 0: the very next).
 * n < 0 disables. Counted globally, across threads. */
void sl__mem_fail_after(int64_t n);
/* True when the injector fails this allocation (counting it as one): for memory the
 * library takes from elsewhere than sl__malloc (a file's pages from mmap). */
bool sl__mem_fault_now(void);
/* The name of the active allocator: "jemalloc (N NUMA arenas)" or "libc ...". */
const char *sl__mem_allocator(void);
/* Gives the cached big blocks back to the allocator (see mem_host.c), and how many
 * bytes the cache holds. */
void sl__mem_trim(void);
int64_t sl__mem_cached_bytes(void);
/* Makes the calling thread allocate from NUMA node `node`'s arena (workers call it). */
void sl__mem_set_node(int node);

/* ---------------- file calls (io_fault.c) ---------------- */

/* The library's file calls go through these wrappers (same arguments and results as the
 * system calls) so that tests can inject faults, as sl__mem_fail_after does for memory. */
int sl__io_open(const char *path, int flags, mode_t mode);
ssize_t sl__io_pread(int fd, void *buf, size_t len, off_t off);
ssize_t sl__io_write(int fd, const void *buf, size_t len);
ssize_t sl__io_pwrite(int fd, const void *buf, size_t len, off_t off);
int sl__io_fsync(int fd);
int sl__io_rename(const char *from, const char *to);

enum sl__io_call { SL__IO_OPEN, SL__IO_READ, SL__IO_WRITE, SL__IO_SYNC, SL__IO_RENAME,
                   SL__IO_CALLS };
enum sl__io_fault {
    SL__IO_ERRNO, /* the call fails with errno `err` (EIO, ENOSPC, ...) */
    SL__IO_SHORT, /* a read or write moves at most half the bytes asked (not an error) */
    SL__IO_EOF,   /* a read returns 0, as at the end of a file that shrank */
};
#define SL__IO_STICKY 0x100 /* or-ed into the kind: every later call faults too */
/* Tests only: after `n` more calls of `call` (any file, any thread) the next one gets
 * fault `kind`; once, or on every call from then on with SL__IO_STICKY. n < 0 disarms
 * it; sl__io_faults_off disarms all. */
void sl__io_fail_after(enum sl__io_call call, int64_t n, int kind, int err);
void sl__io_faults_off(void);

/* ---------------- output files (out_file.c) ---------------- */

/* A file being written for the user: to a temporary file beside a regular target,
 * renamed over it on commit (keeping its mode), or in place for a device, FIFO or
 * file with several links; a symlink is followed. out_file.c says which and why. */
struct sl__out_file {
    int fd;
    FILE *stream;       /* set by sl__out_file_stream; writes to fd */
    int stream_errno;   /* the stream's first failed write, for the message */
    char *path;         /* as given, for messages */
    char *target;       /* what the temporary file is renamed over (a symlink resolved) */
    char *tmp;          /* the temporary file; NULL when written in place */
    bool regular;       /* a regular file: synced on commit */
};
/* SL_OK, or an SL_E* code with the reason in err (nothing left behind). */
int sl__out_file_open(struct sl__out_file *o, const char *path, char *err, size_t err_len);
/* write(2) to the file; a FIFO whose reader left fails with EPIPE instead of killing
 * the process with SIGPIPE. */
ssize_t sl__out_file_write(struct sl__out_file *o, const void *data, size_t len);
/* A stdio stream writing to the file (commit or abort closes both); NULL on failure, with the
 * reason in err and the file aborted. */
FILE *sl__out_file_stream(struct sl__out_file *o, char *err, size_t err_len);
/* Flushes, syncs, closes and renames over the target; on failure everything is undone
 * (sl__out_file_abort) and the old file is left as it was. */
int sl__out_file_commit(struct sl__out_file *o, char *err, size_t err_len);
/* Closes and removes the temporary file; safe to call twice and after a commit. */
void sl__out_file_abort(struct sl__out_file *o);

/* ---------------- buffers ---------------- */

/* Where a buffer's bytes live. */
enum sl__mem_kind { SL__MEM_HOST = 0, SL__MEM_PINNED = 1, SL__MEM_DEVICE = 2, SL__MEM_FOREIGN = 3 };

/* A reference-counted block of bytes. Buffers sluice allocates are 64-byte aligned
 * and freed by sl__free; imported ones carry a release callback and owner. */
struct sl__buf {
    _Atomic int64_t refs;
    void *ptr;
    int64_t bytes;
    enum sl__mem_kind kind;
    int device;                     /* GPU ordinal for SL__MEM_DEVICE */
    void (*release)(struct sl__buf *b); /* NULL: sl__free(ptr, bytes) */
    void *owner;                    /* e.g. the shared foreign-array holder */
    struct sl__host_budget *charged; /* host budget holding `bytes` (referenced), or NULL */
    bool registered;                /* page-locked by sl_table_pin: unregister before free */
    uint8_t gpu_held;               /* device buffers: the slot of the GPU's held bytes that
                                       counts them (gpu_held.c) */
    struct sl__narrow *narrow;      /* a narrow copy of its values (sl_table_pin), or NULL;
                                       freed with the buffer */
};
/* A narrow copy of a host buffer's fixed-width integer values (runtime/narrow.c): value
 * i (first <= i < first + n) of the buffer, `wide` bytes signed, is base + step x the
 * unsigned `width`-byte narrow value i - first (3 bytes: little endian), wrapping as the
 * wide type. sl_table_pin makes them (pinned like the buffer), GPU uploads move them and
 * widen on the device (option debug_gpu_wide_upload moves the wide values instead); host
 * readers use the buffer. */
struct sl__narrow {
    struct sl__buf *buf;            /* n values of `width` bytes */
    int64_t base;                   /* the smallest value */
    uint64_t step;                  /* the values' common step above it (>= 1) */
    int64_t first, n;               /* the buffer's values it holds */
    uint8_t width;                  /* 1, 2, 3 or 4 */
    uint8_t wide;                   /* the buffer's value width: 2, 4 or 8 */
    struct sl__buf *next;           /* the same column's buffer in the table's next batch
                                       (referenced), when both are whole columns with
                                       narrow copies: a GPU upload of this one sends that
                                       one ahead (gpu_worker.c); else NULL */
};
/* The value width of a column type that may have a narrow copy (integers of 16 bits and
 * more, dates, timestamps, 64-bit decimals, DICT codes), else 0. */
int sl__narrow_wide_width(enum sl_type type);
/* The narrowest width (1, 2, 3 or 4) that holds n values of `wide` bytes as offsets from
 * their minimum (*base) in steps of their common divisor (*step), or 0 when that is no
 * narrower than `wide` (or n is 0). */
int sl__narrow_plan(const void *values, int wide, int64_t n, int64_t *base, uint64_t *step);
/* Writes the n values as `width`-byte offsets (sl__narrow_plan's form), and back. */
void sl__narrow_encode(const void *values, int wide, int64_t n, int64_t base, uint64_t step,
                       int width, void *out);
void sl__narrow_decode(const void *narrow, int width, int64_t n, int64_t base, uint64_t step,
                       int wide, void *out);
/* Gives host buffer b a narrow copy of its values [first, first + n) of `wide` bytes when
 * they narrow (*out, owned by b; also when b had one already), else leaves *out NULL.
 * SL_ENOMEM is the only error. */
int sl__buf_narrow(struct sl__buf *b, int wide, int64_t first, int64_t n,
                   struct sl__narrow **out);
void sl__narrow_free(struct sl__narrow *nw);
/* Gives the buffers of t's columns that narrow their copies (sl__buf_narrow over each
 * batch's rows), on up to 16 threads, and links each whole column's copy to the same
 * column's buffer in the next batch (`next`). SL_ENOMEM is the only error. */
int sl__table_narrow(sl_table_t *t);
/* Whether b has a narrow copy of all its values (from its first byte to its last). */
bool sl__narrow_whole(const struct sl__buf *b);
/* b's narrow copy when it holds values [first, first + n) of `wide` bytes, else NULL. */
const struct sl__narrow *sl__narrow_of(const struct sl__buf *b, int wide, int64_t first,
                                       int64_t n);
/* Page-locks host memory for fast, asynchronous copies to GPUs (cudaHostRegister), and
 * undoes it. Without CUDA, register fails with SL_EUNSUPPORTED. */
int sl__host_register(void *ptr, int64_t bytes);
void sl__host_unregister(void *ptr);
/* Replaces each run of t's small host batches (of fewer than small_rows rows; at most
 * max_rows rows together, the same column types) by one batch in new host memory, each
 * DICT column with one dictionary for the whole table (gpu_concat.c; sl_table_pin, so
 * that a GPU task reads a large morsel; batches of a million rows or more are large
 * enough already). An error leaves t as it was; without CUDA it does nothing. */
#define SL__PIN_SMALL_ROWS ((int64_t)1 << 20)
#define SL__PIN_RUN_ROWS ((int64_t)1 << 23)
int sl__table_combine_runs(sl_table_t *t, int64_t small_rows, int64_t max_rows);
/* Returns bytes to an engine's host budget (engine.c). */
void sl__engine_release_host(sl_engine_t *eng, int64_t bytes);
/* An engine's host budget, reference counted apart from the engine: a result's buffers
 * may outlive the engine that charged them, and give their bytes back to the budget
 * whenever they go (engine.c). */
struct sl__host_budget {
    _Atomic int64_t refs;
    _Alignas(64) _Atomic int64_t in_use;
};
/* Gives `bytes` back to hb and drops one reference (the last frees it). */
void sl__host_budget_release(struct sl__host_budget *hb, int64_t bytes);
/* Host memory an operator holds outside sl_task_alloc (the bulk exchange's runs,
 * runtime/task.c): charges `bytes` to the task's engine's host budget, SL_EBUDGET (nothing
 * charged, the task not failed: the caller may take a path that needs less) when they
 * would not fit; gives them back; or hands `b->bytes` of what was charged to host buffer
 * b, which gives them back on its last unref. */
int sl__task_host_charge(sl_task_t *t, int64_t bytes);
void sl__task_host_release(sl_task_t *t, int64_t bytes);
void sl__task_host_hand(sl_task_t *t, struct sl__buf *b);

/* New host buffer of `bytes` (64-byte aligned, uninitialized); NULL on failure. */
struct sl__buf *sl__buf_new(int64_t bytes);
/* New buffer wrapping foreign memory; `release` is called with the last reference. */
struct sl__buf *sl__buf_wrap(void *ptr, int64_t bytes, enum sl__mem_kind kind,
                             void (*release)(struct sl__buf *), void *owner);
void sl__buf_ref(struct sl__buf *b);
void sl__buf_unref(struct sl__buf *b);

/* ---------------- schemas, columns, batches, tables (data.c, schema.c) ------------- */

struct sl__field {
    char *name;
    enum sl_type type;
};

struct sl_schema {
    int n_fields;
    struct sl__field *fields;
};

sl_schema_t *sl__schema_new(int n_fields);
void sl__schema_free(sl_schema_t *s);
int sl__schema_set(sl_schema_t *s, int i, const char *name, enum sl_type type);
sl_schema_t *sl__schema_copy(const sl_schema_t *s);
bool sl__schema_equal(const sl_schema_t *a, const sl_schema_t *b);
/* Average bytes of a utf8 / large_utf8 value assumed when nothing better is known: a
 * short name or code, as most string keys are. */
#define SL__STRING_BYTES_GUESS 16
/* Bytes per row of a schema, for memory and transfer estimates (explain, placement):
 * fixed widths (a DICT column its int32 code: its dictionary is shared, not per row),
 * and for utf8/large_utf8 their offset plus SL__STRING_BYTES_GUESS. */
int64_t sl__schema_row_bytes(const sl_schema_t *s);

/* True for a known type value (a decimal with a valid precision and scale). */
bool sl__type_valid(enum sl_type type);

/* A dictionary of utf8 strings, shared by reference between DICT columns. */
struct sl__dict {
    _Atomic int64_t refs;
    int64_t n;
    struct sl__buf *offsets;  /* n + 1 int32 */
    struct sl__buf *chars;    /* NULL when every string is empty */
};
struct sl__dict *sl__dict_new(int64_t n, const int32_t *offsets, const char *chars);
void sl__dict_ref(struct sl__dict *d);
void sl__dict_unref(struct sl__dict *d);
/* Whether two dictionaries hold the same strings in the same order (the same object, or
 * equal offsets and bytes): codes of one mean the same strings in the other. */
bool sl__dict_same(const struct sl__dict *a, const struct sl__dict *b);

/* One dictionary for DICT column c of batches that may each hold another (batches of
 * several sources, of a file read in parts, or a table's run copied to a GPU as one batch): the distinct strings, first seen first,
 * and the map from each batch's codes to the merged ones. */
struct sl__dict_union {
    struct sl__dict *dict;              /* the merged dictionary (one reference) */
    int32_t *remap;                     /* merged code of each source dictionary entry */
    struct {
        int64_t base;                   /* its dictionary's first entry in remap */
        int64_t n;                      /* its dictionary's size */
        bool fresh;                     /* the first batch with this dictionary */
    } *src;                             /* per batch */
};

/* Builds *u over column c of bs[0..n). Errors: SL_ENOMEM, SL_EOVERFLOW (2^31 entries or
 * bytes); *u is then empty. */
int sl__dict_union_init(struct sl__dict_union *u, sl_batch_t *const *bs, int64_t n, int c);
/* The same over column cols[k] of each batch bs[k] (c unused unless cols is NULL): the
 * key columns of both sides of a join. */
int sl__dict_union_init_cols(struct sl__dict_union *u, sl_batch_t *const *bs, int64_t n, int c,
                             const int *cols);
void sl__dict_union_fini(struct sl__dict_union *u);
/* Makes DICT column c of b (a batch being built) use u's dictionary. */
int sl__dict_union_attach(const struct sl__dict_union *u, sl_batch_t *b, int c);

/* Batch k's code as a merged code (0 for a code outside its dictionary: a null row's). */
static inline int32_t sl__dict_union_code(const struct sl__dict_union *u, int64_t k,
                                          int32_t code)
{
    return code >= 0 && code < u->src[k].n ? u->remap[u->src[k].base + code] : 0;
}


/* 64-bit mixers (runtime/dict_union.c): splitmix64's finalizer for words, FNV-1a-then-mix
 * for bytes. */
uint64_t sl__mix64(uint64_t z);
uint64_t sl__hash_bytes(const char *p, int64_t n);

/* One column of a batch: values in `data` (offset applies), optional validity. String
 * columns keep offsets in `data` (offset applies to them, as in Arrow) and their bytes
 * in `chars`; DICT columns keep codes in `data` and their dictionary in `dict`. */
struct sl__col {
    enum sl_type type;
    int64_t offset;          /* rows to skip in data and validity */
    int64_t null_count;      /* -1 = unknown */
    struct sl__buf *data;
    struct sl__buf *validity; /* NULL = all valid */
    struct sl__buf *chars;    /* UTF8/LARGE_UTF8 bytes; NULL = none */
    struct sl__dict *dict;    /* DICT only */
};

struct sl_batch {
    _Atomic int64_t refs;
    int64_t n_rows;
    int n_cols;
    sl_schema_t *schema;     /* owned */
    struct sl__col *cols;    /* n_cols entries */
};

/* A batch with the given schema (copied) and no buffers yet. */
sl_batch_t *sl__batch_new(const sl_schema_t *schema, int64_t n_rows);
/* Allocates the value buffer of every column (uninitialized). */
int sl__batch_alloc_columns(sl_batch_t *b);
/* Gives dst's DICT columns src's dictionaries (shared; same schema): a batch moved to or
 * from a GPU keeps its codes' meaning, the dictionary staying in host memory. */
void sl__batch_share_dicts(sl_batch_t *dst, const sl_batch_t *src);
/* Gives column col of b the dictionary dict (shared; NULL leaves it as it is). */
void sl__batch_share_dict(sl_batch_t *b, int col, struct sl__dict *dict);
/* Column dc of dst (a batch being built, columns unset) becomes column sc of src, sharing
 * its buffers and dictionary by reference (no copy; any device): a projection's or a
 * cross join's output column, a slice's. */
void sl__col_share(sl_batch_t *dst, int dc, const sl_batch_t *src, int sc);
/* A zero-copy slice: rows [off, off + len) sharing the buffers. */
sl_batch_t *sl__batch_slice(sl_batch_t *b, int64_t off, int64_t len);
/* Morsels over a table's batches, for the sources that scan one (scan.table, a shared
 * node's readers): task i is a zero-copy slice of at most `morsel` rows of one batch. */
struct sl__morsels {
    int64_t morsel;
    int64_t *first_task;             /* per batch: its first task; then the task count */
};
/* Cuts t into morsels of `morsel` rows; returns the number of tasks, or SL_ENOMEM. */
int64_t sl__morsels_cut(struct sl__morsels *m, const sl_table_t *t, int64_t morsel);
/* Rows per morsel for a source cutting table tab: sl_task_morsel_rows, except on the GPU
 * whose memory already holds every batch of tab (option gpu_resident_morsel_rows). */
int64_t sl__task_table_morsel_rows(const sl_task_t *t, const sl_table_t *tab);
/* Rows per morsel for a source handing out slices of batch b (a sink's result):
 * sl_task_morsel_rows, except that a result in the memory of the GPU the pipeline runs
 * on, read by GPU stages only, goes in morsels of gpu_resident_morsel_rows (as a
 * GPU-resident table's). The same at source_tasks and in each task, so a source may
 * call it in both. */
int64_t sl__task_result_morsel_rows(const sl_task_t *t, const sl_batch_t *b);
/* The slice task `task` emits (a new reference), or NULL when out of memory. */
sl_batch_t *sl__morsels_slice(const struct sl__morsels *m, const sl_table_t *t, int64_t task);
void sl__morsels_free(struct sl__morsels *m);
/* Bytes of one stored value of a column of type t, which must be valid (a column's): 4
 * for UTF8's offsets and 8 for LARGE_UTF8's. sl_type_width's answer for every fixed-width
 * type, inline and without its checks: per-row callers (sl__col_values in gathers) paid
 * a library call each (3.8% of TPC-H Q9's CPU samples at SF 1). */
static inline size_t sl__col_value_width(enum sl_type t)
{
    /* Indexed by type id: invalid, int32, int64, float32, float64, bool, int8, int16,
     * uint8, uint16, uint32, uint64, date32, timestamp, decimal, utf8, large_utf8, dict. */
    static const uint8_t w[] = {0, 4, 8, 4, 8, 1, 1, 2, 1, 2, 4, 8, 4, 8, 8, 4, 8, 4};
    unsigned id = SL_TYPE_ID(t);
    if (id == SL_TYPE_DECIMAL)
        return (((unsigned)t >> 8) & 0xffu) <= SL_DECIMAL64_MAX_PRECISION ? 8 : 16;
    return id < sizeof w ? w[id] : 0;
}
/* Typed pointer to the first value of column i (offset applied). */
static inline void *sl__col_values(const sl_batch_t *b, int i)
{
    const struct sl__col *c = &b->cols[i];
    return (char *)c->data->ptr + (size_t)c->offset * sl__col_value_width(c->type);
}
/* Bytes of the value buffer of a column of `rows` rows (strings: rows + 1 offsets). */
static inline int64_t sl__col_data_bytes(enum sl_type type, int64_t rows)
{
    if (type == SL_TYPE_UTF8)
        return (rows + 1) * 4;
    if (type == SL_TYPE_LARGE_UTF8)
        return (rows + 1) * 8;
    return rows * (int64_t)sl_type_width(type);
}
/* Bytes batch b's rows occupy (values, string bytes, bitmaps): for budgets and
 * placement. A host string column counts the bytes of its rows; a device one its whole
 * bytes buffer (its offsets are not readable here). */
int64_t sl__batch_bytes(const sl_batch_t *b);
static inline bool sl__col_valid(const struct sl__col *c, int64_t row)
{
    if (!c->validity)
        return true;
    int64_t bit = c->offset + row;
    return (((const uint8_t *)c->validity->ptr)[bit >> 3] >> (bit & 7)) & 1;
}

struct sl_table {
    _Atomic int64_t refs;
    sl_schema_t *schema;     /* NULL until the first batch */
    int64_t n_batches, cap;
    int64_t n_rows;
    sl_batch_t **batches;
};

/* ---------------- registry (registry.c) ---------------- */

/* The built-in operators: the registration interface between the runtime and the
 * operators layer. The operators define it (operators/builtin.c) and the linker hands it
 * to the registry, which registers its entries on first use; the runtime includes no
 * operator header and calls no operator code to find them. */
struct sl__builtin_table {
    const struct sl_op_def *const *defs;
    size_t n;
};
extern const struct sl__builtin_table sl__builtin_ops;

/* ---------------- several GPU devices in explain (plan.c, explain.c) ----------------
 * An operator that can spread over several GPU devices (join, sort: docs/MULTI_GPU.md)
 * registers a judge at bind; sl_query_explain calls it for a pipeline that sinks into
 * the operator on a GPU of an engine with several GPU devices, with what the engine
 * knows before the run, and publishes the verdict (struct sl_explain_pipeline). */
#define SL__MG_ENV_MAX_DEV 16
struct sl__mg_env {
    int n_devices;                      /* the engine's GPU devices (at most 16 counted) */
    int self;                           /* the index of the pipeline's GPU among them */
    int mode;                           /* the query's option multi_gpu: 0 auto, 1 off, 2 on */
    int64_t room[SL__MG_ENV_MAX_DEV];   /* each device's memory budget left */
    int64_t rows[2];                    /* estimated rows of each input, -1 unknown */
};
struct sl__mg_verdict {
    int devices;                        /* devices it would use (1: it stays on one) */
    int why;                            /* the profile's multi_device_fallback; 0 none */
    const char *why_text;               /* static text for why */
    int64_t rows;                       /* rows it would spread; -1 unknown */
    int64_t link_bytes, device_bytes;   /* the exchange's estimate, -1 unknown */
    double seconds;                     /* the exchange's estimated time, -1 unknown */
};
typedef void (*sl__mg_judge_fn)(const sl_op_t *op, const struct sl__mg_env *env,
                                struct sl__mg_verdict *out);
/* Registers the judge of the node being bound (NULL: none, the default). */
void sl__bind_mg_judge(sl_bind_t *b, sl__mg_judge_fn judge);

/* ---------------- host threads for short parallel loops (par.c) ---------------- */
/* The machine's online CPUs, at least 1 and, when most > 0, at most `most`. */
int sl__host_threads(int most);
/* Runs fn(arg, part, parts) for every part in [0, parts) at once: parts - 1 new threads
 * and the caller's (part 0); a part whose thread cannot start runs on the caller after
 * its own. For short host work outside the scheduler's workers (the out-of-core sort's
 * searches between its GPU passes, a result copy, a table's narrow copies), while the
 * caller would otherwise wait. parts is clamped to [1, SL__PAR_MAX]. */
#define SL__PAR_MAX 32
void sl__par_for(int parts, void (*fn)(void *arg, int part, int parts), void *arg);

/* ---------------- engine-wide logging ---------------- */
void sl__engine_log(sl_engine_t *eng, int level, const char *fmt, ...) SL__PRINTF(3, 4);

#endif /* SLUICE_RUNTIME_INTERNAL_H */
