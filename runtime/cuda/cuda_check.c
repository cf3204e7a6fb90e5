/* CUDA error mapping and the CUDA fault injector.
 *
 * The runtime's CUDA calls that create or allocate go through SL__CUDA_CALL / SL_CUDA_TRY
 * (cuda_int.h), which ask sl__cuda_fault() first: that is where tests make the Nth call
 * fail (SQLite's test_malloc.c), without making it, so no resource is half-created.
 * The GPU worker's calls and SL_TASK_CUDA_TRY's count the same way through
 * sl__cuda_fault_before/_after, which fail waits and stream marks after making them
 * (see cuda_int.h). A failing result becomes SL_EDEVICE with the CUDA error's name, the
 * call and the place.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_int.h"

/* Checked calls left before an injected failure; negative = injection off. */
static _Atomic int64_t fail_countdown = -1;
static _Atomic int fail_error = (int)cudaErrorUnknown;
static _Atomic int64_t checked_calls;
/* Set when this thread's current call was failed by the injector: then there is no
 * error inside the CUDA runtime to clear. */
static _Thread_local bool injected_now;

void sl__cuda_fail_after(int64_t n, int err)
{
    atomic_store(&fail_error, err);
    atomic_store(&fail_countdown, n < 0 ? -1 : n);
}

int64_t sl__cuda_checked_calls(void)
{
    return atomic_load(&checked_calls);
}

cudaError_t sl__cuda_fault(void)
{
    injected_now = false;
    atomic_fetch_add_explicit(&checked_calls, 1, memory_order_relaxed);
    if (SL__LIKELY(atomic_load_explicit(&fail_countdown, memory_order_relaxed) < 0))
        return cudaSuccess;
    /* The call that takes the countdown from 0 to -1 fails; later ones succeed. */
    int64_t v = atomic_load(&fail_countdown);
    while (v >= 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &v, v - 1)) {
            if (v != 0)
                return cudaSuccess;
            injected_now = true;
            return (cudaError_t)atomic_load(&fail_error);
        }
    }
    return cudaSuccess;
}

void sl__cuda_fault_skip(void)
{
    injected_now = false;
}

/* Calls that an injected failure must leave made: waits and stream marks. */
static bool fails_after(const char *call)
{
    return strstr(call, "Synchronize") || strstr(call, "EventRecord") ||
           strstr(call, "StreamWaitEvent") || strncmp(call, "cudaMemcpy(", 11) == 0;
}

static _Thread_local cudaError_t injected_error, pending_error;

int sl__cuda_fault_before(const char *call)
{
    cudaError_t e = sl__cuda_fault();
    if (SL__LIKELY(e == cudaSuccess))
        return 0;
    injected_error = e;
    if (!fails_after(call))
        return (int)e;
    pending_error = e; /* made first; sl__cuda_fault_after reports it */
    return 0;
}

int sl__cuda_fault_after(int e)
{
    if (SL__LIKELY(pending_error == cudaSuccess))
        return e;
    cudaError_t p = pending_error;
    pending_error = cudaSuccess;
    injected_now = e == (int)cudaSuccess; /* no error inside CUDA to clear then */
    return e != (int)cudaSuccess ? e : (int)p;
}

cudaError_t sl__cuda_fault_injected(void)
{
    return injected_error;
}

int sl__cuda_fault_injected_code(void)
{
    return (int)injected_error;
}

bool sl__cuda_error_is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
        return true;
    default:
        return false;
    }
}

/* "../runtime/cuda/x.c" (as meson passes sources) -> "runtime/cuda/x.c". */
static const char *short_path(const char *file)
{
    while (strncmp(file, "../", 3) == 0)
        file += 3;
    return file;
}

int sl__cuda_check(cudaError_t e, const char *what, const char *file, int line, char *msg,
                   size_t msg_len)
{
    if (e == cudaSuccess)
        return SL_OK;
    /* A failing runtime call also leaves its error as the thread's "last error", which
     * the next launcher would return through cudaGetLastError(); it has been handled
     * here, so clear it. (Sticky errors stay regardless: the context is lost.) */
    if (!injected_now)
        (void)cudaGetLastError();
    int dev = -1;
    sl__device_error_note((int)e, cudaGetDevice(&dev) == cudaSuccess ? 1 + dev : -1);
    (void)cudaGetLastError(); /* in case cudaGetDevice itself failed */
    char buf[SL__MSG_MAX];
    snprintf(buf, sizeof buf, "%s (%s) in %.160s at %s:%d%s", cudaGetErrorName(e),
             cudaGetErrorString(e), what, short_path(file), line,
             sl__cuda_error_is_sticky(e) ? "; the device is lost" : "");
    if (msg && msg_len > 0)
        snprintf(msg, msg_len, "%s", buf);
    return sl__set_last_error(SL_EDEVICE, "%s", buf);
}

int sl__cuda_check_slot(struct sl__errslot *slot, cudaError_t e, const char *what,
                        const char *file, int line)
{
    if (!slot)
        return sl__cuda_check(e, what, file, line, NULL, 0);
    int rc = sl__cuda_check(e, what, file, line, slot->msg, sizeof slot->msg);
    if (rc < 0)
        slot->code = rc;
    return rc;
}
