// Host-side conversion of a Scalar into the bit pattern of one element of a
// dtype, so fill_ needs only one kernel per element width. Plain C++ (the
// indexing test checks it).
#pragma once

#include <cstdint>
#include <cstring>

#include "dtype_dispatch.h"
#include "numeric.h"

namespace bp_gpu {

// The element's bytes in the low bytes of the result (little-endian).
// Floating scalars convert to integers by truncation, as torch.fill_ does.
inline uint64_t FillPattern(DType st, bool is_floating, double d, int64_t i) {
  uint64_t bits = 0;
  const double dv = is_floating ? d : static_cast<double>(i);
  const int64_t iv = is_floating ? static_cast<int64_t>(d) : i;
  switch (st) {
    case DType::kBool:
      bits = (is_floating ? d != 0.0 : i != 0) ? 1u : 0u;
      break;
    case DType::kUInt8:
      bits = static_cast<uint8_t>(iv);
      break;
    case DType::kInt8:
      bits = static_cast<uint8_t>(static_cast<int8_t>(iv));
      break;
    case DType::kInt32:
      bits = static_cast<uint32_t>(static_cast<int32_t>(iv));
      break;
    case DType::kInt64:
      bits = static_cast<uint64_t>(iv);
      break;
    case DType::kFloat16:
      bits = FloatToHalfBits(static_cast<float>(dv));
      break;
    case DType::kBFloat16:
      bits = FloatToBFloat16Bits(static_cast<float>(dv));
      break;
    case DType::kFloat32: {
      const float f = static_cast<float>(dv);
      uint32_t u;
      std::memcpy(&u, &f, sizeof u);
      bits = u;
      break;
    }
    case DType::kFloat64:
      std::memcpy(&bits, &dv, sizeof bits);
      break;
    default:
      break;
  }
  return bits;
}

}  // namespace bp_gpu
