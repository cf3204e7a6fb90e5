/* The GPU layer of a build without CUDA (-Dcuda=disabled or no nvcc): no GPUs. */
#include <string.h>

#include "cuda_int.h"
#include "exchange_dev.h"

int sl__cuda_device_count(void)
{
    return 0;
}

const char *sl__cuda_absent_reason(void)
{
    return "sluice was built without CUDA";
}

int sl__cuda_probe(int ordinal, struct sl_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->kind = SL_DEVICE_CUDA;
    info->ordinal = ordinal;
    info->numa_node = -1;
    return sl__set_last_error(SL_ENODEV, "no GPU %d: sluice was built without CUDA", ordinal);
}

int sl__cuda_peer_access(int a, int b, int *can)
{
    *can = 0;
    return sl__set_last_error(SL_ENODEV, "no GPUs %d and %d: sluice was built without CUDA",
                              a, b);
}

void sl__cuda_fail_after(int64_t n, int err)
{
    (void)n;
    (void)err;
}

int64_t sl__cuda_checked_calls(void)
{
    return 0;
}

int sl__xchg_cuda_mover(const int *ordinals, struct sl__dpool *const *pools, int n,
                        struct sl__xchg_mover *out)
{
    (void)ordinals;
    (void)pools;
    (void)n;
    (void)out;
    return sl__set_last_error(SL_EUNSUPPORTED, "device exchange: sluice was built without "
                              "CUDA (no GPU)");
}
