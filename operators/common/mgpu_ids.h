/* Plans over several devices (docs/MULTI_GPU.md): a join or sort operator's rows, held
 * on the task's GPU, go to sl__mg_hash_join / sl__mg_sort as (key, row id) pairs spread
 * over the devices; what comes back per device are row ids, collected on the task's GPU
 * where the operator gathers its output columns by them. CUDA builds only. */
#ifndef SL_OPERATORS_MGPU_IDS_H
#define SL_OPERATORS_MGPU_IDS_H

#include "common/mgpu_choice.h"
#include "common/mgpu_scratch.h"

/* The devices an operator spreads over (sl__mg_fit_devices' choice). */
struct sl__mg_pick {
    int k;
    int use[SL__MG_MAX_DEV];
    int self;                   /* the task's GPU among the engine's devices (-1: none) */
    struct sl__mg_opts opts;    /* the exchange's (debug_mgpu_packets, _chunk_rows, _copies) */
};
/* Fills sh->n_devices, sh->mode (the query's option multi_gpu) and sh->n_fit, and pick:
 * the devices of t's engine whose budgets hold a spread of `bytes` (what the operation
 * needs on all devices together; SL__MG_DEV_FIXED more on each), the task's own device
 * self_bytes more (the ids and columns it gathers, next to the input it holds). */
void sl__mg_pick_devices(sl_task_t *t, int64_t bytes, int64_t self_bytes,
                         struct sl__mg_shape *sh, struct sl__mg_pick *pick);
/* The task's own device alone: where a spread goes when the plan it made does not fit
 * the devices' budgets (SL_EBUDGET before anything moved); the profile value
 * multi_device_fallback says SL__MG_BUDGET. SL_EBUDGET again when there is no such
 * device or pick had one already. */
int sl__mg_pick_self(sl_task_t *t, struct sl__mg_pick *pick);
/* Opens the picked devices (sl__task_mdev_open); when the budgets left some of the
 * engine's devices out, t's profile value multi_device_fallback says SL__MG_BUDGET next
 * to multi_device (the devices used). */
int sl__mg_open_picked(sl_task_t *t, const struct sl__mg_pick *pick, struct sl__mdev *m,
                       int *self);

/* Spreads n keys of key_width bytes at d_keys (device memory, ready: the caller waited
 * for its stream) over the devices of m in contiguous shares, widened to 8 bytes
 * (zero-extended: equal keys stay equal; the order is a signed one only for 8-byte
 * keys), with payload id_base + row as a 64-bit row id. Device d's share lives in sc[d];
 * enqueued on the devices' streams. */
int sl__mg_spread_keys(struct sl__mdev *m, struct sl__mg_scratch *sc, const void *d_keys,
                       int key_width, int64_t n, uint32_t id_base, struct sl__mg_table *t);

/* Writes the low 32 bits of every device's result ids (r: r_vals, else s_vals), device 0
 * first, into d_ids (device memory of `total` = sum of out->n rows, allocated and ready)
 * and waits for the copies. */
int sl__mg_collect_ids(struct sl__mdev *m, const struct sl__mg_result *out, int r,
                       uint32_t *d_ids);

/* Ends an operator's use of the devices: frees res and every device's scratch sc[d],
 * waits for the devices, makes device `self` (the task's GPU; -1: none) current again
 * and closes m. Returns rc, or the error of making self current when rc is SL_OK. */
int sl__mg_close(struct sl__mdev *m, struct sl__mg_scratch *sc, struct sl__mg_result *res,
                 int self, int rc);

/* The measured and estimated exchange, into the task's profile values (docs/MULTI_GPU.md):
 * multi_device (devices), xchg_bytes, xchg_packets, xchg_us, xchg_est_bytes,
 * xchg_est_us. */
void sl__mg_profile(sl_task_t *t, int n_devices, const struct sl__mg_result *out);

#endif
