# The shared GPU plugin sources, compiled once per plugin: by nvcc and the
# host C++ compiler for CUDA (BP_GPU_CUDA), by hipcc for HIP (BP_GPU_HIP).
# Included by backends/cuda/CMakeLists.txt and the HIP sub-build.
set(BACKPLANE_GPU_COMMON_DIR ${CMAKE_CURRENT_LIST_DIR})
# Kernel files (device code).
set(BACKPLANE_GPU_KERNEL_SOURCES
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/pointwise.cu
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/copy.cu
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/reduce.cu
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/nn.cu
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/conv_pool.cu
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/resample.cu
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/matmul.cu)
# Plugin glue (host code using the runtime API only).
set(BACKPLANE_GPU_HOST_SOURCES
  ${BACKPLANE_GPU_COMMON_DIR}/plugin.cpp
  ${BACKPLANE_GPU_COMMON_DIR}/device.cpp
  ${BACKPLANE_GPU_COMMON_DIR}/memory.cpp
  ${BACKPLANE_GPU_COMMON_DIR}/stream.cpp
  ${BACKPLANE_GPU_COMMON_DIR}/kernels/register.cpp)
