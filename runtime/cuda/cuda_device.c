/* GPU discovery and probing, current-device switching, streams and events.
 *
 * libsluice links the CUDA runtime statically; the runtime opens the driver
 * (libcuda.so.1) at the first call. On a machine without a driver or a GPU that first
 * call fails (cudaErrorInsufficientDriver, cudaErrorNoDevice), which sluice reads as
 * "no GPU": the library loads and runs CPU-only everywhere (docs/CUDA.md).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_int.h"

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int n_devices;
static char absent_reason[160];

static void count_devices(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) {
        n_devices = n;
        return;
    }
    if (e == cudaSuccess)
        e = cudaErrorNoDevice;
    (void)cudaGetLastError(); /* not an error for sluice: no GPU */
    const char *what = e == cudaErrorInsufficientDriver ? "no usable CUDA driver"
                       : e == cudaErrorNoDevice         ? "no CUDA GPU"
                                                        : "CUDA unavailable";
    snprintf(absent_reason, sizeof absent_reason, "%s (%s: %s)", what, cudaGetErrorName(e),
             cudaGetErrorString(e));
    n_devices = 0;
}

int sl__cuda_device_count(void)
{
    pthread_once(&count_once, count_devices);
    return n_devices;
}

const char *sl__cuda_absent_reason(void)
{
    pthread_once(&count_once, count_devices);
    return absent_reason;
}

int sl__cuda_set_device(int ordinal, int *prev)
{
    int rc;
    if (prev) {
        SL__CUDA_CALL(rc, NULL, cudaGetDevice(prev));
        if (rc < 0)
            return rc;
    }
    SL__CUDA_CALL(rc, NULL, cudaSetDevice(ordinal));
    return rc;
}

int sl__cuda_peer_access(int a, int b, int *can)
{
    int rc;
    *can = 0;
    SL__CUDA_CALL(rc, NULL, cudaDeviceCanAccessPeer(can, a, b));
    return rc;
}

/* The nearest NUMA node of a PCI device from sysfs; -1 when unknown. */
static int pci_numa_node(int domain, int bus, int dev)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/numa_node",
             (unsigned)domain, (unsigned)bus, (unsigned)dev);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int node = -1;
    if (fscanf(f, "%d", &node) != 1)
        node = -1;
    fclose(f);
    return node < 0 ? -1 : node;
}

/* "80,90" -> "sm_80,sm_90". */
static void sm_list(char *out, size_t len, const char *archs)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *a = archs; *a && used + 8 < len;) {
        size_t n = strcspn(a, ",");
        int w = snprintf(out + used, len - used, "%ssm_%.*s", used ? "," : "", (int)n, a);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
        a += n + (a[n] == ',');
    }
}

/* Why the built kernels cannot run on the probed device, from the image probe's result. */
static void unusable_reason(char *out, size_t len, cudaError_t e, int major, int minor)
{
    const char *archs = sl__cuda_built_archs();
    const char *ptx = strrchr(archs, ',');
    ptx = ptx ? ptx + 1 : archs;
    char sms[64];
    sm_list(sms, sizeof sms, archs);
    switch (e) {
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
        snprintf(out, len, "built for %s (PTX compute_%s) but device is sm_%d%d: "
                 "running on CPU (rebuild with -Dgpu_arch=%d%d)", sms, ptx, major, minor,
                 major, minor);
        break;
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidPtx:
    case cudaErrorJitCompilerNotFound:
    case cudaErrorJitCompilationDisabled:
        snprintf(out, len, "driver cannot JIT the PTX for compute_%s (%s): running on CPU "
                 "(update the driver or rebuild with -Dgpu_arch=%d%d)", ptx,
                 cudaGetErrorName(e), major, minor);
        break;
    case cudaErrorInsufficientDriver:
        snprintf(out, len, "driver older than the CUDA runtime sluice was built with (%s): "
                 "running on CPU", cudaGetErrorName(e));
        break;
    default:
        snprintf(out, len, "cannot load the GPU kernels (%s: %s): running on CPU",
                 cudaGetErrorName(e), cudaGetErrorString(e));
        break;
    }
}

/* Makes the device current, asks sl__cuda_image_probe whether the kernels can run there,
 * and restores the previous device. The probe goes through the fault injector, so tests
 * can fake "no image" on a GPU that has one. */
static int probe_image(int ordinal, struct sl_device_info *info)
{
    int prev, rc = sl__cuda_set_device(ordinal, &prev);
    if (rc < 0)
        return rc;
    cudaError_t pe = sl__cuda_fault();
    if (pe == cudaSuccess) {
        pe = sl__cuda_image_probe();
        if (pe != cudaSuccess)
            (void)cudaGetLastError(); /* a finding, not an error of the runtime */
    }
    if (pe == cudaSuccess) {
        info->usable = 1;
    } else {
        info->usable = 0;
        unusable_reason(info->reason, sizeof info->reason, pe, info->compute_major,
                        info->compute_minor);
    }
    return sl__cuda_set_device(prev, NULL);
}

int sl__cuda_probe(int ordinal, struct sl_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->kind = SL_DEVICE_CUDA;
    info->ordinal = ordinal;
    info->numa_node = -1;
    int n = sl__cuda_device_count();
    if (ordinal < 0 || ordinal >= n)
        return sl__set_last_error(SL_ENODEV, "no GPU %d: %d found%s%s", ordinal, n,
                                  n ? "" : ", ", n ? "" : sl__cuda_absent_reason());

    struct cudaDeviceProp prop;
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaGetDeviceProperties(&prop, ordinal));
    if (rc < 0)
        return rc;
    size_t name_len = strnlen(prop.name, sizeof prop.name);
    if (name_len >= sizeof info->name)
        name_len = sizeof info->name - 1;
    memcpy(info->name, prop.name, name_len); /* info was zeroed: terminated */
    info->memory_bytes = (int64_t)prop.totalGlobalMem;
    info->n_cores = prop.multiProcessorCount;
    info->compute_major = prop.major;
    info->compute_minor = prop.minor;
    info->numa_node = pci_numa_node(prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    return probe_image(ordinal, info);
}

/* ---------------- streams and events ---------------- */

int sl__cuda_streams_create(int ordinal, int n, cudaStream_t *out)
{
    if (n < 0 || (n > 0 && !out))
        return sl__set_last_error(SL_EINVAL, "sl__cuda_streams_create: bad arguments");
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    int prev, rc = sl__cuda_set_device(ordinal, &prev);
    if (rc < 0)
        return rc;
    for (int i = 0; i < n && rc == SL_OK; i++)
        SL__CUDA_CALL(rc, NULL, cudaStreamCreateWithFlags(&out[i], cudaStreamNonBlocking));
    if (rc < 0) {
        char msg[SL__MSG_MAX]; /* keep the first error's text through the cleanup */
        snprintf(msg, sizeof msg, "%s", sl_last_errmsg());
        (void)sl__cuda_streams_destroy(n, out);
        (void)sl__cuda_set_device(prev, NULL);
        return sl__set_last_error(rc, "%s", msg);
    }
    return sl__cuda_set_device(prev, NULL);
}

int sl__cuda_streams_destroy(int n, cudaStream_t *s)
{
    int first = SL_OK;
    for (int i = 0; i < n; i++) {
        if (!s[i])
            continue;
        int rc;
        SL__CUDA_RELEASE(rc, NULL, cudaStreamDestroy(s[i]));
        if (rc < 0 && first == SL_OK)
            first = rc;
        s[i] = NULL;
    }
    return first;
}

int sl__cuda_event_create(int ordinal, bool timing, cudaEvent_t *out)
{
    *out = NULL;
    int prev, rc = sl__cuda_set_device(ordinal, &prev);
    if (rc < 0)
        return rc;
    SL__CUDA_CALL(rc, NULL,
                  cudaEventCreateWithFlags(out, timing ? cudaEventDefault
                                                       : cudaEventDisableTiming));
    if (rc < 0) {
        *out = NULL;
        char msg[SL__MSG_MAX];
        snprintf(msg, sizeof msg, "%s", sl_last_errmsg());
        (void)sl__cuda_set_device(prev, NULL);
        return sl__set_last_error(rc, "%s", msg);
    }
    rc = sl__cuda_set_device(prev, NULL);
    if (rc < 0) {
        (void)cudaEventDestroy(*out);
        *out = NULL;
    }
    return rc;
}

int sl__cuda_event_destroy(cudaEvent_t ev)
{
    if (!ev)
        return SL_OK;
    int rc;
    SL__CUDA_RELEASE(rc, NULL, cudaEventDestroy(ev));
    return rc;
}

int sl__cuda_event_record(cudaEvent_t ev, cudaStream_t s)
{
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaEventRecord(ev, s));
    return rc;
}

/* cudaErrorNotReady from a query means "pending": turn it into 0 before checking. */
static cudaError_t ready_or_error(cudaError_t e, int *pending)
{
    *pending = e == cudaErrorNotReady;
    return *pending ? cudaSuccess : e;
}

int sl__cuda_event_query(cudaEvent_t ev)
{
    int rc, pending = 0;
    SL__CUDA_CALL(rc, NULL, ready_or_error(cudaEventQuery(ev), &pending));
    return rc < 0 ? rc : !pending;
}

int sl__cuda_stream_query(cudaStream_t s)
{
    int rc, pending = 0;
    SL__CUDA_CALL(rc, NULL, ready_or_error(cudaStreamQuery(s), &pending));
    return rc < 0 ? rc : !pending;
}

int sl__cuda_stream_wait_event(cudaStream_t s, cudaEvent_t ev)
{
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaStreamWaitEvent(s, ev, 0));
    return rc;
}

int sl__cuda_stream_sync(cudaStream_t s)
{
    int rc;
    SL__CUDA_CALL(rc, NULL, cudaStreamSynchronize(s));
    return rc;
}
