/* Definitions for emu.hpp. */
#include "emu.hpp"
thread_local emu_dim threadIdx, blockIdx;
emu_dim blockDim, gridDim;
pthread_barrier_t emu_barrier;
char *emu_smem;
