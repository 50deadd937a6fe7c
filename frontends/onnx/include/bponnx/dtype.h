// The dtypes the ONNX frontend maps (the nine Backplane dtypes ONNX can
// express) and the two host-side tensor forms it works with: raw bytes as
// read from a file (initializers, Constant values, .npy inputs) and small
// value lists as doubles (shape-like inputs, masks built on the host).
//
// No float16/bfloat16 arithmetic lives here: conversions between dtypes go
// through Backplane's own `to.dtype` on the CPU (see Exec::upload).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backplane/backplane.h"

namespace bponnx {

enum class DType : int { kFloat32 = 0, kFloat64, kFloat16, kBFloat16, kInt8, kUInt8, kInt32, kInt64, kBool };

/// "float32", "int64", ... (Backplane's names).
const char* dtype_name(DType d);
/// The DLPack encoding of `d`.
DLDataType dtype_to_dl(DType d);
/// False for a DLPack dtype outside the nine.
bool dtype_from_dl(DLDataType dl, DType* out);
/// Bytes per element (bool: 1).
size_t dtype_itemsize(DType d);
/// float32, float64, float16, bfloat16.
bool dtype_is_float(DType d);

/// A small host tensor, row-major, values as doubles (every value of the
/// nine dtypes is a double; int64 beyond 2^53 rounds).
struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;
  std::vector<double> values;

  int64_t numel() const;
  int32_t ndim() const { return static_cast<int32_t>(sizes.size()); }
};

/// A host tensor as stored bytes (little-endian, row-major, `dtype`'s
/// layout). When its ONNX element type has no Backplane dtype,
/// `unsupported` names it ("uint16", "string") and `bytes` is empty.
struct RawTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;
  std::string bytes;
  std::string unsupported;

  int64_t numel() const;
};

/// "[2, 3]".
std::string sizes_str(const std::vector<int64_t>& sizes);

}  // namespace bponnx
