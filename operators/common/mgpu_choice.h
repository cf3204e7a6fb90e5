/* When a plan's join or sort runs over several devices (docs/MULTI_GPU.md): the shape
 * of the operator's input, and either "yes" or why the one-device path keeps it. Plain
 * C, decided on the host before any kernel, unit tested without a GPU
 * (tests/unit/test_mgpu_plan.c). */
#ifndef SL_OPERATORS_MGPU_CHOICE_H
#define SL_OPERATORS_MGPU_CHOICE_H

#include <stdint.h>

#include "internal.h"

/* Why a join or sort stays on one device (0: it goes over all of them). The numbers are
 * the profile value "multi_device_fallback" (docs/MULTI_GPU.md lists them). */
enum sl__mg_why {
    SL__MG_YES = 0,
    SL__MG_ONE_DEVICE = 1,   /* the engine has one device */
    SL__MG_KEYS = 2,         /* not one integer key of 1, 2, 4 or 8 bytes (join), not one
                                signed 8-byte key (sort) */
    SL__MG_KIND = 3,         /* join kind right/full/cross, a residual, or a DESC sort */
    SL__MG_COLUMNS = 4,      /* an output column that is not 1, 2, 4 or 8 bytes (strings) */
    SL__MG_AGGREGATE = 5,    /* join output=aggregate */
    SL__MG_ROWS = 6,         /* 2^32 - 1 rows or more on a side (row ids are 32 bits) */
    SL__MG_NOT_IN_GPU = 7,   /* input not all in device memory, or over the budget */
    SL__MG_OFF = 8,          /* the option multi_gpu=off */
    SL__MG_BUDGET = 9,       /* no two devices' memory budgets can hold their shares */
    SL__MG_SMALL = 10,       /* multi_gpu=auto and fewer than SL__MG_MIN_ROWS rows */
    SL__MG_N_WHY
};

/* The option multi_gpu (docs/OPTIONS.md). */
enum sl__mg_mode { SL__MG_AUTO = 0, SL__MG_MODE_OFF = 1, SL__MG_MODE_ON = 2 };

/* Below this many rows (both sides of a join together) multi_gpu=auto keeps one device:
 * opening the devices and the exchange's fixed steps (a host wait per phase, launches on
 * every device) cost about 1 ms, more than such an input takes on one GPU. */
#define SL__MG_MIN_ROWS ((int64_t)1 << 20)

struct sl__mg_shape {
    int n_devices;
    int n_keys;
    int key_width;          /* bytes of the key's values; 0: not an integer key */
    int key_signed8;        /* the key is a signed 8-byte integer (sorts need it) */
    int kind_ok;            /* join: inner, semi, anti or left without residual; sort: ASC */
    int cols_ok;            /* every output column of 1, 2, 4 or 8 bytes */
    int aggregate;
    int in_gpu;             /* every input batch in device memory, within the budget */
    int64_t rows[2];        /* rows of each side (a sort: rows[0]) */
    int mode;               /* enum sl__mg_mode */
    int n_fit;              /* devices whose budgets hold their shares (sl__mg_fit_devices) */
};

enum sl__mg_why sl__mg_join_choice(const struct sl__mg_shape *s);
enum sl__mg_why sl__mg_sort_choice(const struct sl__mg_shape *s);
/* Which devices a spread of `bytes` (what the operation needs on the devices together)
 * may use: every device d needs fixed + 2 * bytes / k bytes of room[d] (its budget left)
 * for a spread over k devices; twice the even share because a device may receive more
 * than its share (partitions are balanced only to partition boundaries, and skewed keys
 * make large ones). Device `self` (the operator's own GPU, which holds the input; -1:
 * none) is always taken when any is; the others in order of room. Returns the largest
 * such k (0 when not even two fit) and fills use[0..k) with the chosen devices in
 * increasing index order. */
int sl__mg_fit_devices(const int64_t *room, int n, int self, int64_t bytes, int64_t fixed,
                       int *use);
/* One line: "multi-device: N devices" or "one device: <why>". */
const char *sl__mg_why_text(enum sl__mg_why w);

/* The bytes of the width of a type whose values join as integers of 1, 2, 4 or 8 bytes,
 * else 0: floats (NaN and -0.0 have their own equality), strings and wide decimals. */
int sl__mg_int_key_width(enum sl_type t);

/* What a spread holds, per row of the operation (both sides of a join): on all the
 * devices together (SL__MG_DEV_FIXED more on each), and on the operator's own device
 * next to the input it holds. Join: (key, id) spread, partitioned and received, 16 B
 * each, sort scratch and an output row per probe row (28 B); on its own device both
 * sides' keys and ids twice over, their columns once and the ids back. Sort: (key, id)
 * spread, sorted, received and re-sorted, 16 B each; on its own device the ids and the
 * output. */
#define SL__MG_DEV_FIXED ((int64_t)64 << 20)
#define SL__MG_JOIN_ROW_BYTES 96
#define SL__MG_JOIN_SELF_ROW_BYTES 48
#define SL__MG_SORT_ROW_BYTES 80
#define SL__MG_SORT_SELF_ROW_BYTES 40

/* explain's verdict (runtime/internal.h) for a join (sides 2) or sort (sides 1) whose
 * shape s holds what the plan tells (keys, kind, columns): the rest comes from env (the
 * devices, their budgets, the option multi_gpu, the estimated rows), judged as the
 * finalize judges it (sl__mg_join_choice / sl__mg_sort_choice, sl__mg_fit_devices),
 * with the exchange's estimate for the rows spread evenly (sl__mg_cost). Rows not known
 * yet are judged as many (the 2^20-row rule decides at run time); out->rows is then -1. */
void sl__mg_judge(struct sl__mg_shape *s, int sides, const struct sl__mg_env *env,
                  struct sl__mg_verdict *out);

#endif
