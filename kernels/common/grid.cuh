/* Grid sizes for grid-stride kernels, from the SM count of the device they launch on.
 *
 * A grid-stride kernel needs only a few waves of blocks to keep every SM busy; more
 * blocks only add scheduling. The cap is blocks_per_sm waves of the current device's
 * SMs (132 on an H100 SXM, 78 on an H100 PCIe, 108 on an A100), read once per device
 * with cudaDeviceGetAttribute (no synchronization) and cached. Launchers run on the
 * thread whose current device is the one their stream belongs to, so the current device
 * is the right one to ask.
 */
#pragma once

#include <atomic>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace sl_grid {

constexpr int kMaxDevices = 64;
/* Used only if the device cannot be asked; the launch then reports the error itself. */
constexpr int kFallbackSms = 32;

/* SM count of the calling thread's current device. */
inline int sm_count()
{
    static std::atomic<int> cache[kMaxDevices];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)cudaGetLastError(); /* leave no error behind for the launch to misreport */
        return kFallbackSms;
    }
    int sms = cache[dev].load(std::memory_order_relaxed);
    if (sms > 0)
        return sms;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        sms <= 0) {
        (void)cudaGetLastError();
        return kFallbackSms;
    }
    /* Relaxed: every thread computes the same value, so a race only repeats the query. */
    cache[dev].store(sms, std::memory_order_relaxed);
    return sms;
}

/* min(blocks, blocks_per_sm waves of the device's SMs), at least 1. */
inline int64_t capped(int64_t blocks, int blocks_per_sm)
{
    int64_t cap = (int64_t)sm_count() * blocks_per_sm;
    if (blocks > cap)
        blocks = cap;
    return blocks < 1 ? 1 : blocks;
}

} // namespace sl_grid
