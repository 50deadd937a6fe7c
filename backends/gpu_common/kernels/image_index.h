// Linear output index <-> [N, C, H, W] position, for the image kernels
// (conv_pool.cu, resample.cu), which run one thread per output element.
#pragma once

#include <cstdint>

#include "host_device.h"

namespace bp_gpu {

struct Nchw {
  int64_t n, c, h, w;
};

// The position of element i of a row-major walk over `size`.
BP_HOST_DEVICE inline Nchw NchwOf(int64_t i, const int64_t (&size)[4]) {
  Nchw p;
  p.w = i % size[3];
  i /= size[3];
  p.h = i % size[2];
  i /= size[2];
  p.c = i % size[1];
  p.n = i / size[1];
  return p;
}

// Element offset of a position under `stride`.
BP_HOST_DEVICE inline int64_t OffsetOf(const Nchw& p, const int64_t (&stride)[4]) {
  return p.n * stride[0] + p.c * stride[1] + p.h * stride[2] + p.w * stride[3];
}

}  // namespace bp_gpu
