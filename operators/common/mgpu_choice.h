/* When a plan's join or sort runs over several devices (docs/MULTI_GPU.md): the shape
 * of the operator's input, and either "yes" or why the one-device path keeps it. Plain
 * C, decided on the host before any kernel, unit tested without a GPU
 * (tests/unit/test_mgpu_plan.c). */
#ifndef SL_OPERATORS_MGPU_CHOICE_H
#define SL_OPERATORS_MGPU_CHOICE_H

#include <stdint.h>

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
    SL__MG_N_WHY
};

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
};

enum sl__mg_why sl__mg_join_choice(const struct sl__mg_shape *s);
enum sl__mg_why sl__mg_sort_choice(const struct sl__mg_shape *s);
/* One line: "multi-device: N devices" or "one device: <why>". */
const char *sl__mg_why_text(enum sl__mg_why w);

#endif
