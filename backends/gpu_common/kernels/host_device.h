// BP_HOST_DEVICE marks helpers that run on the host and in kernels.
//
// Under nvcc or hipcc it expands to __host__ __device__; in plain C++ (the
// indexing unit test compiles these headers with g++) it is empty, so the
// exact code the kernels use is what the test checks.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define BP_HOST_DEVICE __host__ __device__
#define BP_GPU_COMPILER 1
// nvcc includes the CUDA runtime (and the kernel language) implicitly;
// hipcc does not, so every kernel header gets it from here.
#if defined(BP_GPU_HIP)
#include <hip/hip_runtime.h>
#endif
#else
#define BP_HOST_DEVICE
#endif

// The kernel test runs the kernels on host threads (gpu_emulator.h).
#if defined(BP_GPU_EMULATE)
#include "gpu_emulator.h"
#endif

// True while compiling device code (one of the device passes).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define BP_DEVICE_PASS 1
#endif
