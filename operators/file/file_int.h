/* Internal header of the file operators (scan.csv, scan.bin, write.csv, write.bin):
 * the SLCF format constants, the checksum, read-only file mappings shared by batches,
 * column-list parsing, ordered sink buffers and atomic file replacement. */
#ifndef SLUICE_FILE_INT_H
#define SLUICE_FILE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "operators.h"

/* ---------------- the SLCF binary column format (docs/FILE_FORMAT.md) ---------------- */

#define SL__SLCF_MAGIC "SLCF"
#define SL__SLCF_VERSION 2u         /* written; version 1 is still read */
#define SL__SLCF_FIXED_BYTES 40u    /* magic .. file_bytes, then the header checksum */
#define SL__SLCF_ENTRY_BYTES 96u    /* one column entry (version 2) */
#define SL__SLCF_ENTRY_BYTES_V1 64u /* one column entry (version 1) */
#define SL__SLCF_ALIGN 64u          /* every section starts at a multiple of this */
#define SL__SLCF_MAX_NAME 4096u
#define SL__SLCF_MAX_COLS 65536u

static inline uint64_t sl__align64(uint64_t x)
{
    return (x + SL__SLCF_ALIGN - 1) & ~(uint64_t)(SL__SLCF_ALIGN - 1);
}

static inline void sl__put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void sl__put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void sl__put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t sl__get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t sl__get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t sl__get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ---------------- checksum: XXH64 (seed 0), one-shot and streaming ---------------- */

struct sl__xxh64 {
    uint64_t v[4];
    uint64_t total;
    uint8_t buf[32];
    unsigned n_buf;
};
uint64_t sl__xxh64(const void *data, size_t len);
void sl__xxh64_init(struct sl__xxh64 *s);
void sl__xxh64_update(struct sl__xxh64 *s, const void *data, size_t len);
uint64_t sl__xxh64_final(const struct sl__xxh64 *s);

/* ---------------- read-only file mappings ---------------- */

/* A file's bytes read into memory and shared by reference: batches that point into it
 * (zero-copy) each hold a reference, so it outlives the query if a result table still
 * uses it. Read with pread, not mapped: a mapped file truncated while it is scanned
 * kills the process with SIGBUS, while a read sees the short file and fails cleanly
 * (docs/RELIABILITY.md). An empty file has base == NULL and bytes == 0. */
struct sl__fmap {
    _Atomic int64_t refs;
    const uint8_t *base;
    size_t bytes;           /* read: the first min(file_bytes, limit) bytes */
    uint64_t file_bytes;    /* the file's size when opened */
};
/* Opens `path`, refusing anything but a regular file before any read can block (a FIFO
 * or device), and reads its first `limit` bytes (UINT64_MAX: all). SL_EIO, SL_ENOMEM
 * with the reason in err on failure. */
int sl__fmap_open(const char *path, uint64_t limit, struct sl__fmap **out, char *err,
                  size_t err_len);
/* SL_EIO with the reason in err if `path` exists and is not a regular file (stat only:
 * never blocks); SL_OK if it is one or is missing. */
int sl__path_not_special(const char *path, char *err, size_t err_len);
void sl__fmap_unref(struct sl__fmap *m);
/* A buffer over [off, off + bytes) of the mapping, holding a reference to it. */
struct sl__buf *sl__fmap_buf(struct sl__fmap *m, size_t off, size_t bytes);

/* ---------------- column lists ---------------- */

/* A list of names, optionally with types ("k int32, v float64" or "a,b"). */
struct sl__collist {
    int n;
    char **names;
    enum sl_type *types;
};
/* Parses a comma-separated list (commas inside parentheses do not separate, for
 * "decimal(15,2)"). with_types: each item is "name type" or "name:type". Fails with a
 * message (empty item, unknown type, duplicate name). */
int sl__collist_parse(const char *text, int with_types, struct sl__collist *out, char *err,
                      size_t err_len);
void sl__collist_free(struct sl__collist *l);

/* Makes the calling thread use the C locale for number formatting and parsing (so
 * "1.5" means the same whatever locale the embedder set) and returns the previous
 * one for sl__c_locale_end; (locale_t)0 if the C locale could not be made. */
#include <locale.h>
locale_t sl__c_locale_begin(void);
/* The C locale object ((locale_t)0 if it could not be made), for strtod_l. */
locale_t sl__c_locale(void);
void sl__c_locale_end(locale_t prev);

/* Parses a one-character delimiter option: one byte, or "\t" / "tab". -1 if invalid. */
int sl__parse_delimiter(const char *text);

/* ---------------- string columns filled value by value (text_cols.c) ---------------- */

/* The bytes (UTF8, LARGE_UTF8) or dictionary (DICT) of one column of a batch being
 * filled; `data` arguments are the column's values (offsets or codes). */
struct sl__text_col {
    enum sl_type type;
    char *chars;          /* bytes so far (DICT: the dictionary's) */
    int64_t n, cap;
    int32_t *dict_off;    /* DICT: dict_n + 1 offsets into chars */
    int64_t dict_n, dict_cap;
    int32_t *slots;       /* DICT: open-addressing table of codes, -1 empty */
    int64_t n_slots;
};
/* Value `row` is s[0..n). SL_EOVERFLOW when a utf8 batch or a dictionary passes 2^31
 * bytes; SL_ENOMEM. */
int sl__text_col_put(struct sl__text_col *tc, void *data, int64_t row, const char *s, size_t n);
void sl__text_col_put_null(struct sl__text_col *tc, void *data, int64_t row);
/* Gives column c of batch b (unshared) its bytes or dictionary and readies tc for the
 * next batch. */
int sl__text_col_finish(struct sl__text_col *tc, sl_batch_t *b, int c);
/* Frees what tc holds (keeps its type). */
void sl__text_col_reset(struct sl__text_col *tc);

/* ---------------- ordered pieces (writers) ---------------- */

/* Pieces produced by a sink (a batch, a text chunk) tagged with the source task index
 * and a sequence number within that task, so a writer can restore the source order
 * whatever worker sank them. */
struct sl__piece {
    int64_t task, seq;
    void *ptr;
    size_t bytes;
};
struct sl__pieces {
    struct sl__piece *v;
    int64_t n, cap;
    int64_t last_task, next_seq;
};
/* Appends a piece tagged for the current task (local state of one worker). */
int sl__pieces_push(struct sl__pieces *p, int64_t task, void *ptr, size_t bytes);
/* Moves every piece of src to the end of dst. */
int sl__pieces_move(struct sl__pieces *dst, struct sl__pieces *src);
/* Sorts by (task, seq). */
void sl__pieces_sort(struct sl__pieces *p);
/* Frees the array; each piece's ptr is released by free_fn (may be NULL) first. */
void sl__pieces_free(struct sl__pieces *p, void (*free_fn)(void *ptr, size_t bytes));

/* ---------------- output files ---------------- */

/* A buffered output file (sl__out_file, runtime/out_file.c): a regular target is
 * written to a temporary file beside it and renamed over it on commit, so readers see
 * the old file or the new one, never half of one; a device, FIFO or symlink target is
 * written in place as `cp` does. If `task` is set, writes stop once it is cancelled. */
struct sl__wfile {
    struct sl__out_file out;
    const sl_task_t *task;
    bool dry;               /* count and hash only: nothing reaches the file */
    uint64_t off;           /* bytes written so far */
    uint8_t *buf;           /* write-behind buffer */
    size_t n_buf;
};
int sl__wfile_open(struct sl__wfile *w, const char *path, const sl_task_t *task, char *err,
                   size_t err_len);
int sl__wfile_write(struct sl__wfile *w, const void *data, size_t len, char *err, size_t err_len);
/* Pads with zero bytes up to the next multiple of 64. */
int sl__wfile_pad64(struct sl__wfile *w, char *err, size_t err_len);
/* Writes at an absolute offset (after flushing the buffer). */
int sl__wfile_pwrite(struct sl__wfile *w, const void *data, size_t len, uint64_t off, char *err,
                     size_t err_len);
/* Flushes, fsyncs, closes and renames over the target (sl__out_file_commit). */
int sl__wfile_commit(struct sl__wfile *w, char *err, size_t err_len);
/* Closes and removes the temporary file (no-op after commit); safe twice. */
void sl__wfile_abort(struct sl__wfile *w);

#endif /* SLUICE_FILE_INT_H */
