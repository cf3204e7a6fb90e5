/* What uploading pageable host memory costs (issue 23: the host-streamed join's pageable
 * input), standalone (no engine): MIB MiB of touched pageable memory to the GPU, each
 * way of doing it the median of 3 runs, one JSON line each:
 *
 *   gpu_upload_micro [MIB] [THREADS,...]     (default 1024 MiB; 4,8,15 threads)
 *
 *   h2d_pinned       uploads from pinned blocks of 32 MiB (the link: the floor)
 *   h2d_pageable     cudaMemcpyAsync straight from the pageable memory (the driver stages)
 *   register         cudaHostRegister of the pageable memory in place (page-locking it)
 *   h2d_registered   uploads from it once registered
 *   unregister       cudaHostUnregister
 *   copy_<T>         memcpy of it into pinned blocks on T threads (what staging costs)
 *   copy_nt_<T>      the same with non-temporal stores (no read for ownership of the
 *                    destination: 2 bytes of memory traffic a byte instead of 3)
 *   staged_<T>       the streamed join's scheme: 32 MiB chunks copied by T threads into
 *                    two pinned buffers, each uploaded while the next one is copied
 *   staged_nt_<T>    the same with non-temporal stores
 *
 * Registering in place pays page-locking every time (a table read once); staging pays a
 * copy, bound by host memory bandwidth while the DMA reads the pinned buffers too. */
#include <emmintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "micro_util.h"

static const size_t kChunk = (size_t)32 << 20;

static void report(const std::string &what, std::vector<double> ms, size_t bytes)
{
    std::sort(ms.begin(), ms.end());
    double m = ms[ms.size() / 2];
    printf("{\"what\": \"%s\", \"bytes\": %zu, \"ms\": %.2f, \"gbps\": %.2f}\n", what.c_str(),
           bytes, m, (double)bytes / (m * 1e6));
    fflush(stdout);
}

/* Non-temporal copy of n bytes (dst and src 16-byte aligned, n a multiple of 64). */
static void copy_nt(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __m128i a = _mm_load_si128((const __m128i *)(src + i));
        __m128i b = _mm_load_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_load_si128((const __m128i *)(src + i + 32));
        __m128i d = _mm_load_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    _mm_sfence();
}

/* Threads that copy their slice of each job: job k is (dst, src, bytes); the caller
 * publishes it and waits until every thread has done its slice. */
struct pool {
    int n;
    bool nt = false;
    std::vector<std::thread> ts;
    std::atomic<long> seq{0}, done{0};
    std::atomic<bool> stop{false};
    char *dst = nullptr;
    const char *src = nullptr;
    size_t bytes = 0;

    explicit pool(int threads) : n(threads)
    {
        for (int i = 0; i < n; i++)
            ts.emplace_back([this, i] { loop(i); });
    }
    ~pool()
    {
        stop = true;
        seq.fetch_add(1);
        for (auto &t : ts)
            t.join();
    }
    void loop(int i)
    {
        long seen = 0;
        for (;;) {
            long s;
            while ((s = seq.load(std::memory_order_acquire)) == seen)
                std::this_thread::yield();
            seen = s;
            if (stop)
                return;
            size_t step = (bytes / (size_t)n + 4095) & ~(size_t)4095;
            size_t lo = std::min(bytes, step * (size_t)i), hi = std::min(bytes, lo + step);
            if (nt)
                copy_nt(dst + lo, src + lo, hi - lo);
            else
                memcpy(dst + lo, src + lo, hi - lo);
            done.fetch_add(1, std::memory_order_release);
        }
    }
    void copy(char *d, const char *s, size_t b)
    {
        dst = d, src = s, bytes = b;
        long target = done.load() + n;
        seq.fetch_add(1, std::memory_order_release);
        while (done.load(std::memory_order_acquire) < target)
            std::this_thread::yield();
    }
};

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoull(argv[1], nullptr, 10) : 1024;
    std::vector<int> threads = {4, 8, 15};
    if (argc > 2) {
        threads.clear();
        for (char *p = argv[2]; *p;) {
            threads.push_back((int)strtol(p, &p, 10));
            if (*p == ',')
                p++;
        }
    }
    size_t bytes = (mib << 20) / kChunk * kChunk, n = bytes / kChunk;
    char *d = nullptr;
    CK(cudaMalloc((void **)&d, bytes));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    char *pg = (char *)mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    if (pg == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (size_t i = 0; i < bytes; i++)
        pg[i] = (char)(i * 131);
    std::vector<char *> pinned(n);
    for (size_t i = 0; i < n; i++)
        CK(cudaHostAlloc((void **)&pinned[i], kChunk, cudaHostAllocPortable));
    for (size_t i = 0; i < n; i++)
        memset(pinned[i], 1, kChunk);
    auto upload_from = [&](auto src_of) {
        double t0 = now_ms();
        for (size_t i = 0; i < n; i++)
            CK(cudaMemcpyAsync(d + i * kChunk, src_of(i), kChunk, cudaMemcpyHostToDevice, st));
        CK(cudaStreamSynchronize(st));
        return now_ms() - t0;
    };
    std::vector<double> h2d_pinned, h2d_pageable, reg, h2d_reg, unreg;
    for (int rep = 0; rep < 3; rep++) {
        h2d_pinned.push_back(upload_from([&](size_t i) { return pinned[i]; }));
        h2d_pageable.push_back(upload_from([&](size_t i) { return pg + i * kChunk; }));
        double t0 = now_ms();
        CK(cudaHostRegister(pg, bytes, cudaHostRegisterDefault));
        reg.push_back(now_ms() - t0);
        h2d_reg.push_back(upload_from([&](size_t i) { return pg + i * kChunk; }));
        t0 = now_ms();
        CK(cudaHostUnregister(pg));
        unreg.push_back(now_ms() - t0);
    }
    report("h2d_pinned", h2d_pinned, bytes);
    report("h2d_pageable", h2d_pageable, bytes);
    report("register", reg, bytes);
    report("h2d_registered", h2d_reg, bytes);
    report("unregister", unreg, bytes);
    for (int th : threads) {
        for (int nt = 0; nt < 2; nt++) {
            pool p(th);
            p.nt = nt;
            std::vector<double> cp, staged;
            for (int rep = 0; rep < 3; rep++) {
                double t0 = now_ms();
                for (size_t i = 0; i < n; i++)
                    p.copy(pinned[i], pg + i * kChunk, kChunk);
                cp.push_back(now_ms() - t0);
                /* two staging buffers (pinned[0], pinned[1]); chunk i waits for the upload
                 * of chunk i - 2 from its buffer */
                cudaEvent_t ev[2];
                for (auto &e : ev)
                    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
                t0 = now_ms();
                for (size_t i = 0; i < n; i++) {
                    if (i >= 2)
                        CK(cudaEventSynchronize(ev[i & 1]));
                    p.copy(pinned[i & 1], pg + i * kChunk, kChunk);
                    CK(cudaMemcpyAsync(d + i * kChunk, pinned[i & 1], kChunk,
                                       cudaMemcpyHostToDevice, st));
                    CK(cudaEventRecord(ev[i & 1], st));
                }
                CK(cudaStreamSynchronize(st));
                staged.push_back(now_ms() - t0);
                for (auto &e : ev)
                    CK(cudaEventDestroy(e));
            }
            std::string sfx = (nt ? "nt_" : "") + std::to_string(th);
            report("copy_" + sfx, cp, bytes);
            report("staged_" + sfx, staged, bytes);
        }
    }
    for (size_t i = 0; i < n; i++)
        CK(cudaFreeHost(pinned[i]));
    munmap(pg, bytes);
    cudaFree(d);
    return 0;
}
