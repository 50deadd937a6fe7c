// Memory overlap of written tensors, with libtorch's rules (MemOverlap.cpp):
// an output must not have two elements at one address (internal overlap),
// and must not share memory with an input unless it is the very same view of
// it (exact alias, allowed only where the kernel reads each element before it
// writes that element and no other: pointwise operators). A kernel writing
// one view while reading another view of the same memory would read values
// it already overwrote, and the result would depend on its loop order.
#include <algorithm>

#include "meta/common.h"

namespace bp::core::meta {
namespace {

// torch's is_non_overlapping_and_dense: the elements fill a contiguous range
// exactly once (any permutation of the dims; size-1 dims do not count).
bool NonOverlappingAndDense(const Geometry& g) {
  int32_t perm[BP_MAX_NDIM];
  int32_t n = 0;
  for (int32_t d = 0; d < g.ndim; ++d) {
    if (g.sizes[d] != 1) perm[n++] = d;
  }
  std::sort(perm, perm + n, [&](int32_t a, int32_t b) { return g.strides[a] < g.strides[b]; });
  int64_t expected = 1;
  for (int32_t k = 0; k < n; ++k) {
    if (g.strides[perm[k]] != expected) return false;
    expected *= g.sizes[perm[k]];
  }
  return true;
}

// b_shift: the byte distance from a's storage base to b's.
bool SameView(const Geometry& a, const Geometry& b, int64_t b_shift) {
  const int64_t item = a.dtype.bits / 8;
  if (a.ndim != b.ndim || a.dtype.bits != b.dtype.bits || a.offset * item != b.offset * item + b_shift) return false;
  for (int32_t d = 0; d < a.ndim; ++d) {
    if (a.sizes[d] != b.sizes[d] || a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

// Byte range [begin, end) a dense tensor covers in its storage.
void DenseRange(const Geometry& g, int64_t* begin, int64_t* end) {
  const int64_t item = g.dtype.bits / 8;
  *begin = g.offset * item;
  *end = *begin + g.numel() * item;
}

}  // namespace
}  // namespace bp::core::meta

namespace bp::core {
using meta::ArgName;
using meta::ArgPrefix;
using meta::SizesText;

bool TouchedBytes(const Geometry& g, int64_t* begin, int64_t* end) {
  if (g.numel() == 0) return false;
  const int64_t item = g.dtype.bits / 8;
  int64_t lo = g.offset, hi = g.offset;
  for (int32_t d = 0; d < g.ndim; ++d) {
    const int64_t span = (g.sizes[d] - 1) * g.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  *begin = lo * item;
  *end = (hi + 1) * item;
  return true;
}

bool HasInternalOverlap(const Geometry& g) {
  if (g.numel() <= 1) return false;
  for (int32_t d = 0; d < g.ndim; ++d) {
    if (g.strides[d] == 0 && g.sizes[d] > 1) return true;
  }
  // Anything else that is not dense (negative or interleaved strides that
  // still collide) is torch's TOO_HARD: allowed, as there.
  return false;
}

Status CheckNoInternalOverlap(const MetaCallInfo& info, int arg, const Geometry& out) {
  if (!HasInternalOverlap(out)) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT,
               ArgPrefix(info, arg) + "of sizes " + SizesText(out) + " and strides " +
                   SizesText(out.strides, out.ndim) +
                   " is written, but has a dim of stride 0 (a broadcast view, from expand): unsupported operation: "
                   "more than one element of the written-to tensor refers to a single memory location. "
                   "Please clone() the tensor before performing the operation.");
}

Status CheckNoPartialOverlap(const MetaCallInfo& info, int out_arg, const Geometry& out, int in_arg, const Geometry& in,
                             bool exact_alias_ok, int64_t in_shift) {
  if (out.numel() == 0 || in.numel() == 0) return Status::Ok();
  bool overlap;
  if (meta::SameView(out, in, in_shift)) {
    if (exact_alias_ok) return Status::Ok();
    overlap = true;
  } else if (meta::NonOverlappingAndDense(out) && meta::NonOverlappingAndDense(in)) {
    int64_t ob, oe, ib, ie;
    meta::DenseRange(out, &ob, &oe);
    meta::DenseRange(in, &ib, &ie);
    ib += in_shift;
    ie += in_shift;
    overlap = ob < ie && ib < oe;
  } else {
    overlap = false;  // torch's TOO_HARD (one view not dense, as x[:, 0] and x[:, 1]): allowed
  }
  if (!overlap) return Status::Ok();
  return Error(
      BP_STATUS_INVALID_ARGUMENT,
      std::string(info.op_name) + ": the written argument '" + ArgName(info, out_arg) + "' (sizes " + SizesText(out) +
          ", strides " + SizesText(out.strides, out.ndim) + ", offset " + std::to_string(out.offset) +
          ") and the input '" + ArgName(info, in_arg) + "' (sizes " + SizesText(in) + ", strides " +
          SizesText(in.strides, in.ndim) + ", offset " + std::to_string(in.offset) +
          (in_shift != 0 ? ", over memory starting " + std::to_string(in_shift) + " bytes from the written one's"
                         : std::string()) +
          ") share memory" + (exact_alias_ok ? " and are not the same view" : "") +
          ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
          "single memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace bp::core
