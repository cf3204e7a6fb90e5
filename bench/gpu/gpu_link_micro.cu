/* The link both ways at once (issue 23: is the out-of-core sort's pass 1 at the link?),
 * standalone (no engine): pass 1 of the 2^28-pair sort moves 2 GiB up in runs and 3/4 of
 * it down (narrow runs, 6 of 8 bytes a row) while later runs go up; docs/BENCH_PROTOCOL.md
 * measures each direction alone. Pinned host memory, one device buffer, medians of 3,
 * one JSON line each:
 *
 *   gpu_link_micro [UP_MIB] [RUN_MIB,...]     (default 2048 MiB; runs of 16 and 64 MiB)
 *
 *   up_alone        UP_MIB MiB up in copies of a run
 *   down_alone      3/4 of it down, copies of 3/4 run
 *   both            both at once on two streams, started together: each direction's own
 *                   time (ms_up, ms_down) and the whole
 *   pass1           pass 1's shape without its kernels: run i's download waits for its
 *                   upload (events), uploads back to back: ms = the last download's end,
 *                   ms_up = the last upload's end
 *
 * Where `both`'s up rate falls short of up_alone's, pass 1's upload (2 GiB in some 45 ms
 * on H100 hosts, 2026-11-27) is the link's two-way speed, not the pipeline's waits. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "micro_util.h"

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    size_t up_mib = argc > 1 ? strtoull(argv[1], nullptr, 10) : 2048;
    std::vector<size_t> runs_mib = {16, 64};
    if (argc > 2) {
        runs_mib.clear();
        for (char *p = argv[2]; *p;) {
            runs_mib.push_back(strtoull(p, &p, 10));
            if (*p == ',')
                p++;
        }
    }
    const size_t up = up_mib << 20, down = up / 4 * 3;
    char *d_up = nullptr, *d_down = nullptr, *h_up = nullptr, *h_down = nullptr;
    CK(cudaMalloc((void **)&d_up, up));
    CK(cudaMalloc((void **)&d_down, down));
    CK(cudaMemset(d_down, 3, down));
    CK(cudaHostAlloc((void **)&h_up, up, cudaHostAllocPortable));
    CK(cudaHostAlloc((void **)&h_down, down, cudaHostAllocPortable));
    memset(h_up, 1, up);
    memset(h_down, 2, down);
    cudaStream_t su, sd;
    CK(cudaStreamCreateWithFlags(&su, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sd, cudaStreamNonBlocking));
    cudaEvent_t e0, eu, ed;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&eu));
    CK(cudaEventCreate(&ed));
    for (size_t rm : runs_mib) {
        const size_t run = rm << 20, n = up / run, drun = run / 4 * 3;
        std::vector<cudaEvent_t> upped(n);
        for (auto &e : upped)
            CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        /* mode 0 up alone, 1 down alone, 2 both, 3 pass 1's shape */
        std::vector<double> ms[4], ms_up[4], ms_down[4];
        for (int rep = 0; rep < 4; rep++) /* the first a warm-up */
            for (int mode = 0; mode < 4; mode++) {
                CK(cudaDeviceSynchronize());
                CK(cudaEventRecord(e0, su));
                CK(cudaStreamWaitEvent(sd, e0, 0));
                for (size_t i = 0; i < n; i++) {
                    if (mode != 1)
                        CK(cudaMemcpyAsync(d_up + i * run, h_up + i * run, run,
                                           cudaMemcpyHostToDevice, su));
                    if (mode == 3) {
                        CK(cudaEventRecord(upped[i], su));
                        CK(cudaStreamWaitEvent(sd, upped[i], 0));
                    }
                    if (mode != 0)
                        CK(cudaMemcpyAsync(h_down + i * drun, d_down + i * drun, drun,
                                           cudaMemcpyDeviceToHost, sd));
                }
                CK(cudaEventRecord(eu, su));
                CK(cudaEventRecord(ed, sd));
                CK(cudaDeviceSynchronize());
                float a = 0, b = 0;
                CK(cudaEventElapsedTime(&a, e0, eu));
                CK(cudaEventElapsedTime(&b, e0, ed));
                if (rep == 0)
                    continue;
                ms_up[mode].push_back(a);
                ms_down[mode].push_back(b);
                ms[mode].push_back(std::max(a, b));
            }
        static const char *names[4] = {"up_alone", "down_alone", "both", "pass1"};
        for (int mode = 0; mode < 4; mode++) {
            double mu = median(ms_up[mode]), md = median(ms_down[mode]);
            printf("{\"what\": \"%s\", \"run_mib\": %zu, \"up_bytes\": %zu, \"down_bytes\": %zu, "
                   "\"ms\": %.3f, \"ms_up\": %.3f, \"ms_down\": %.3f, \"up_gbps\": %.2f, "
                   "\"down_gbps\": %.2f}\n",
                   names[mode], rm, mode == 1 ? (size_t)0 : up, mode == 0 ? (size_t)0 : down,
                   median(ms[mode]), mode == 1 ? 0.0 : mu, mode == 0 ? 0.0 : md,
                   mode == 1 ? 0.0 : (double)up / (mu * 1e6),
                   mode == 0 ? 0.0 : (double)down / (md * 1e6));
            fflush(stdout);
        }
        for (auto &e : upped)
            CK(cudaEventDestroy(e));
    }
    cudaFreeHost(h_up);
    cudaFreeHost(h_down);
    cudaFree(d_up);
    cudaFree(d_down);
    return 0;
}
