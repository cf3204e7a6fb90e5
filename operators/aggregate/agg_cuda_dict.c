/* DICT group keys on the GPU (agg_cuda.c). The kernels group integers, so a DICT key goes
 * in as int32 codes of the merged dictionary the CPU sink uses too (agg_dict.c: the
 * distinct strings of every dictionary seen, equal strings one code). A batch whose
 * dictionary merged first with distinct strings (the common case: every batch shares
 * one dictionary, or equal copies of it) has such codes already and goes in as it is;
 * another is remapped on the GPU through its map (one gather). The output's key column
 * gets the merged dictionary, as the CPU's does, so both give the same strings and the
 * GPU's groups merge with CPU workers' by code. */
#include <cuda_runtime_api.h>

#include "agg_cuda.h"
#include "gpu_ext.h"
#include "internal.h"
#include "sluice_k/columns.h"

int agg_gpu_dict_codes(sl_task_t *t, struct agg_global *gs, const sl_batch_t *b, int j, int c,
                       sl_batch_t **remapped)
{
    *remapped = NULL;
    int64_t n = 0;
    bool identity = false;
    const int32_t *map = sl__agg_dict_map(gs, j, b, c, &n, &identity);
    if (!map)
        return sl_task_fail(t, SL_ENOMEM, "aggregate on the GPU: out of memory merging key "
                            "dictionaries");
    if (identity || b->n_rows == 0)
        return SL_OK;
    /* The codes and the map count against the GPU budget: without room (and 1 MiB to
     * spare, as the sink's other checks) the input goes to the host instead of a failed
     * allocation failing the query. */
    if (4 * (b->n_rows + n) + ((int64_t)1 << 20) > sl_task_device_budget(t))
        return AGG_GPU_INPUT_OVER_BUDGET;
    /* The map on the GPU, then merged code = map[code] per row. A null row's code must
     * still lie in the dictionary (as for the GPU join's remap, join_cuda_str.c). */
    sl_schema_t *sc = sl__schema_new(1);
    if (!sc || sl__schema_set(sc, 0, "code", SL_TYPE_INT32) != SL_OK) {
        sl__schema_free(sc);
        return sl_task_fail(t, SL_ENOMEM, "aggregate on the GPU: out of memory");
    }
    sl_batch_t *rb = sl_task_new_batch(t, sc, b->n_rows);
    sl__schema_free(sc);
    void *d_map = rb ? sl_task_device_alloc(t, (size_t)(n ? n : 1) * sizeof *map) : NULL;
    if (!d_map) {
        sl_batch_unref(rb);
        return sl_task_fail(t, SL_ENOMEM, "aggregate on the GPU: out of memory remapping "
                            "dictionary codes");
    }
    cudaStream_t s = sl_task_stream(t);
    cudaError_t e = n ? cudaMemcpyAsync(d_map, map, (size_t)n * sizeof *map,
                                        cudaMemcpyHostToDevice, s)
                      : cudaSuccess;
    if (e == cudaSuccess)
        e = sl_k_gather_b32(d_map, sl__col_values(b, c), sl__col_values(rb, 0), b->n_rows, s);
    sl_task_device_free(t, d_map); /* stream-ordered: after the gather */
    if (e != cudaSuccess) {
        sl_batch_unref(rb);
        return SL_TASK_CUDA_FAIL(t, e, "aggregate on the GPU: remapping dictionary codes");
    }
    *remapped = rb;
    return SL_OK;
}

int agg_gpu_dicts_attach(sl_task_t *t, const struct agg_plan *p, struct agg_global *gs,
                         sl_batch_t *b)
{
    int rc = sl__agg_dict_finish(t, p, gs);
    if (rc == SL_OK)
        sl__agg_dict_attach(p, gs, b);
    return rc;
}
