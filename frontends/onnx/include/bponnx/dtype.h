// The dtypes the ONNX frontend maps (the nine Backplane dtypes ONNX can
// express) and the two host-side tensor forms it works with: raw bytes as
// read from a file (initializers, Constant values, .npy inputs) and small
// value lists as doubles (shape-like inputs, masks built on the host).
//
// No float16/bfloat16 arithmetic lives here: conversions between dtypes go
// through Backplane's own `to.dtype` on the CPU (see Exec::upload).
//
// Thread-safety: every function here is pure (no shared state) and may be
// called from any thread; HostTensor and RawTensor are plain values.
// Part of the installed frontend: #include <bponnx/dtype.h>, link
// Backplane::onnx (docs/bp-run.md, "The frontend library in a host app").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backplane/backplane.h"

namespace bponnx {

enum class DType : int { kFloat32 = 0, kFloat64, kFloat16, kBFloat16, kInt8, kUInt8, kInt32, kInt64, kBool };

/// Backplane's name of `d`: "float32", "float64", "float16", "bfloat16",
/// "int8", "uint8", "int32", "int64", "bool". A static string (never freed);
/// "?" for a value outside the enum.
const char* dtype_name(DType d);
/// The DLPack encoding of `d` (lanes 1): kDLFloat 32/64/16, kDLBfloat 16,
/// kDLInt 8/32/64, kDLUInt 8, and Backplane's BP_DTYPE_CODE_BOOL 8 for bool.
DLDataType dtype_to_dl(DType d);
/// The inverse of dtype_to_dl: true and *out set for one of the nine
/// encodings; false (and *out untouched) for any other DLPack dtype,
/// including lanes != 1. `out` must not be NULL.
bool dtype_from_dl(DLDataType dl, DType* out);
/// Bytes per element: 4, 8, 2, 2, 1, 1, 4, 8, and 1 for bool.
size_t dtype_itemsize(DType d);
/// True for float32, float64, float16 and bfloat16.
bool dtype_is_float(DType d);

/// A small host tensor, row-major, values as doubles (every value of the
/// nine dtypes is a double; int64 beyond 2^53 rounds). `values` holds
/// numel() elements; 0-dim (sizes empty) holds one.
struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;
  std::vector<double> values;

  int64_t numel() const;
  int32_t ndim() const { return static_cast<int32_t>(sizes.size()); }
};

/// A host tensor as stored bytes (little-endian, row-major, `dtype`'s
/// layout; bool one byte 0 or 1): `bytes` holds numel() * dtype_itemsize()
/// bytes. When its ONNX element type has no Backplane dtype, `unsupported`
/// names it ("uint16", "string") and `bytes` is empty.
struct RawTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> sizes;
  std::string bytes;
  std::string unsupported;

  int64_t numel() const;
};

/// The values of stored bytes, widened to doubles on the host (no operator
/// call): true with *out set; false for float16/bfloat16 (rounded by
/// Backplane's to.dtype instead, see Exec::to_host), an unsupported element
/// type, or bytes shorter than numel() elements.
bool host_from_raw(const RawTensor& r, HostTensor* out);

/// Sizes as text, "[2, 3]" ("[]" for 0-dim).
std::string sizes_str(const std::vector<int64_t>& sizes);
/// An attribute's integers as text, "[2,3]" (the NotMapped reasons' form).
std::string list_str(const std::vector<int64_t>& v);

}  // namespace bponnx
