/* What host memory for a downloaded result costs (issue 23), standalone (no engine): a
 * result of MIB MiB downloaded in 64 MiB blocks, as the GPU worker downloads a
 * host-resident sort's result. Prints one JSON line per measurement, each the median of
 * 3 runs:
 *
 *   gpu_host_mem_micro [MIB] [THREADS]     (default 2048 MiB, 6 threads: the stagers)
 *
 *   pin          cudaHostAlloc of every block (what a growing pinned pool pays once)
 *   unpin        cudaFreeHost of them
 *   fault_<T>    first touch (memset) of fresh pageable memory on T threads: the page
 *                faults a copy into fresh memory pays
 *   copy_<T>     memcpy from pinned blocks into pre-faulted pageable memory on T threads
 *   d2h_pinned   the downloads into pinned blocks (the link)
 *   d2h_fresh    the downloads straight into fresh pageable memory (the driver stages)
 *   d2h_faulted  the same into pre-faulted pageable memory
 *
 * The copy-out path (the GPU worker before pinned result memory) pays d2h_pinned plus
 * fault + copy on the stager threads, in part hidden behind the link; the pinned result
 * pool pays d2h_pinned, plus pin on its first query only. */
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "micro_util.h"

static const size_t kBlock = (size_t)64 << 20;

static char *fresh(size_t bytes)
{
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return (char *)p;
}

/* f(lo, hi) over [0, bytes) split in `threads` pieces. */
template <class F> static void split(size_t bytes, int threads, F f)
{
    std::vector<std::thread> ts;
    size_t step = (bytes / (size_t)threads + 4095) & ~(size_t)4095;
    for (int i = 0; i < threads; i++) {
        size_t lo = std::min(bytes, step * (size_t)i), hi = std::min(bytes, lo + step);
        ts.emplace_back(f, lo, hi);
    }
    for (auto &t : ts)
        t.join();
}

static void report(const char *what, std::vector<double> ms, size_t bytes)
{
    std::sort(ms.begin(), ms.end());
    double m = ms[ms.size() / 2];
    printf("{\"what\": \"%s\", \"bytes\": %zu, \"ms\": %.2f, \"gbps\": %.2f}\n", what, bytes, m,
           (double)bytes / (m * 1e6));
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoull(argv[1], nullptr, 10) : 2048;
    int threads = argc > 2 ? atoi(argv[2]) : 6;
    size_t bytes = mib << 20, n = bytes / kBlock;
    bytes = n * kBlock;
    char *d = nullptr;
    CK(cudaMalloc((void **)&d, bytes));
    CK(cudaMemset(d, 7, bytes));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    std::vector<char *> pinned(n);
    std::vector<double> pin, unpin, d2h_pinned, d2h_fresh, d2h_faulted;
    std::vector<double> fault1, faultT, copyT;
    char *faulted = fresh(bytes);
    memset(faulted, 1, bytes);
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_ms();
        for (size_t i = 0; i < n; i++)
            CK(cudaHostAlloc((void **)&pinned[i], kBlock, cudaHostAllocPortable));
        pin.push_back(now_ms() - t0);

        t0 = now_ms();
        for (size_t i = 0; i < n; i++)
            CK(cudaMemcpyAsync(pinned[i], d + i * kBlock, kBlock, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        d2h_pinned.push_back(now_ms() - t0);

        for (int tt = 0; tt < 2; tt++) {
            int th = tt ? threads : 1;
            char *f = fresh(bytes);
            t0 = now_ms();
            split(bytes, th, [&](size_t lo, size_t hi) { memset(f + lo, 0, hi - lo); });
            (tt ? faultT : fault1).push_back(now_ms() - t0);
            munmap(f, bytes);
        }
        t0 = now_ms();
        split(bytes, threads, [&](size_t lo, size_t hi) {
            for (size_t at = lo; at < hi;) { /* block by block, as pieces of each block */
                size_t b = at / kBlock, off = at % kBlock, len = std::min(hi - at, kBlock - off);
                memcpy(faulted + at, pinned[b] + off, len);
                at += len;
            }
        });
        copyT.push_back(now_ms() - t0);

        char *f = fresh(bytes);
        t0 = now_ms();
        for (size_t i = 0; i < n; i++)
            CK(cudaMemcpyAsync(f + i * kBlock, d + i * kBlock, kBlock, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        d2h_fresh.push_back(now_ms() - t0);
        munmap(f, bytes);
        t0 = now_ms();
        for (size_t i = 0; i < n; i++)
            CK(cudaMemcpyAsync(faulted + i * kBlock, d + i * kBlock, kBlock,
                               cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        d2h_faulted.push_back(now_ms() - t0);

        t0 = now_ms();
        for (size_t i = 0; i < n; i++)
            CK(cudaFreeHost(pinned[i]));
        unpin.push_back(now_ms() - t0);
    }
    char name[32];
    report("pin", pin, bytes);
    report("unpin", unpin, bytes);
    report("fault_1", fault1, bytes);
    snprintf(name, sizeof name, "fault_%d", threads);
    report(name, faultT, bytes);
    snprintf(name, sizeof name, "copy_%d", threads);
    report(name, copyT, bytes);
    report("d2h_pinned", d2h_pinned, bytes);
    report("d2h_fresh", d2h_fresh, bytes);
    report("d2h_faulted", d2h_faulted, bytes);
    munmap(faulted, bytes);
    cudaFree(d);
    return 0;
}
