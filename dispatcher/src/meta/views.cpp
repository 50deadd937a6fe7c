// View functions: new sizes/strides/offset over args[0]'s storage, no data
// touched. reshape answers kViewNeedsCopy (meta.h) when no strides can
// express the new shape; `out` then holds the contiguous result's geometry.
#include <limits>

#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

Status Self(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, nullptr));
  *out = *args[0].tensor;
  return Status::Ok();
}

Status NotZeroDim(const MetaCallInfo& info, const Geometry& g) {
  if (g.ndim > 0) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "is 0-dim; expected at least 1 dim");
}

// Resolves one -1 in `shape` against numel (PyTorch's infer_size).
Status InferShape(const MetaCallInfo& info, const MetaArg* args, int i, int64_t numel, int64_t* sizes,
                  int32_t* ndim) {
  BP_RETURN_IF_ERROR(RequireIntList(info, args, i));
  const int64_t* shape = args[i].ints;
  int32_t n = static_cast<int32_t>(args[i].num_ints);
  // The text only for an error: every reshape passes here.
  auto text_of = [&] { return SizesText(shape, n); };
  if (args[i].num_ints > BP_MAX_NDIM) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected at most " + std::to_string(BP_MAX_NDIM) +
                                                 " dims, got " + std::to_string(args[i].num_ints));
  }
  int32_t infer = -1;
  int64_t known = 1;
  for (int32_t k = 0; k < n; ++k) {
    if (shape[k] == -1) {
      if (infer >= 0) return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "is " + text_of() + ": only one dim can be -1");
      infer = k;
    } else if (shape[k] < 0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "is " + text_of() + ": invalid size " + std::to_string(shape[k]));
    } else {
      if (shape[k] != 0 && known > std::numeric_limits<int64_t>::max() / shape[k]) known = -1;
      if (known >= 0) known *= shape[k];
    }
    sizes[k] = shape[k];
  }
  bool ok = known >= 0 && (infer >= 0 ? (known != 0 && numel % known == 0) : numel == known);
  if (infer >= 0 && known == 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "is " + text_of() +
                                                 ": the -1 dim is ambiguous for a tensor of 0 elements");
  }
  if (!ok) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "is " + text_of() + ", invalid for 'self' of " +
                                                 std::to_string(numel) + " elements");
  }
  if (infer >= 0) sizes[infer] = numel / known;
  *ndim = n;
  return Status::Ok();
}

// PyTorch's computeStride: strides for viewing (old sizes, strides) as new
// sizes without copying, or false.
bool ComputeStrides(const Geometry& old, const int64_t* sizes, int32_t ndim, int64_t* strides) {
  if (old.ndim == 0) {
    for (int32_t k = 0; k < ndim; ++k) strides[k] = 1;
    return true;
  }
  int64_t numel = old.numel();
  if (numel == 0) {
    for (int32_t k = ndim - 1; k >= 0; --k) {
      strides[k] = k == ndim - 1 ? 1 : (sizes[k + 1] > 1 ? sizes[k + 1] : 1) * strides[k + 1];
    }
    return true;
  }
  int32_t view_d = ndim - 1;
  int64_t chunk_base_stride = old.strides[old.ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int32_t tensor_d = old.ndim - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old.sizes[tensor_d];
    if (tensor_d == 0 || (old.sizes[tensor_d - 1] != 1 &&
                          old.strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = old.strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Status ViewLike(const MetaCallInfo& info, const MetaArg* args, Geometry* out, bool is_reshape) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  const Geometry& self = *args[0].tensor;
  int64_t sizes[BP_MAX_NDIM], strides[BP_MAX_NDIM];
  int32_t ndim = 0;
  BP_RETURN_IF_ERROR(InferShape(info, args, 1, self.numel(), sizes, &ndim));
  bool viewable = ComputeStrides(self, sizes, ndim, strides);
  out->ndim = ndim;
  for (int32_t k = 0; k < ndim; ++k) out->sizes[k] = sizes[k], out->strides[k] = strides[k];
  if (viewable) return Status::Ok();
  if (is_reshape) {
    out->set_contiguous_strides();
    out->offset = 0;
    return Error(kViewNeedsCopy, std::string(info.op_name) + ": 'self' of sizes " + SizesText(self) +
                                     " and strides " + SizesText(self.strides, self.ndim) +
                                     " cannot be viewed as " + SizesText(sizes, ndim) + "; needs a copy");
  }
  *out = self;
  return Error(BP_STATUS_INVALID_ARGUMENT,
               ArgPrefix(info, 1) + "is " + SizesText(sizes, ndim) + ": not compatible with 'self' of sizes " +
                   SizesText(self) + " and strides " + SizesText(self.strides, self.ndim) +
                   " (a dim spans two non-contiguous parts); use reshape instead");
}

Status ViewFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) { return ViewLike(info, args, out, false); }
Status ReshapeFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  return ViewLike(info, args, out, true);
}

Status PermuteFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  BP_RETURN_IF_ERROR(RequireIntList(info, args, 1));
  const Geometry& self = *args[0].tensor;
  if (args[1].num_ints != self.ndim) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "expected " + std::to_string(self.ndim) +
                                                 " dims, got " + SizesText(args[1].ints, args[1].num_ints));
  }
  bool seen[BP_MAX_NDIM] = {};
  for (int32_t k = 0; k < self.ndim; ++k) {
    int32_t d = 0;
    BP_RETURN_IF_ERROR(WrapDim(info, 1, args[1].ints[k], self.ndim, &d));
    if (seen[d]) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "repeats dim " + std::to_string(d) + " in " +
                                                   SizesText(args[1].ints, self.ndim));
    }
    seen[d] = true;
    out->sizes[k] = self.sizes[d];
    out->strides[k] = self.strides[d];
  }
  return Status::Ok();
}

Status TransposeFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  int64_t a, b;
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &a));
  BP_RETURN_IF_ERROR(IntArg(info, args, 2, &b));
  int32_t d0, d1;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, a, out->ndim, &d0));
  BP_RETURN_IF_ERROR(WrapDim(info, 2, b, out->ndim, &d1));
  if (out->ndim == 0) return Status::Ok();
  std::swap(out->sizes[d0], out->sizes[d1]);
  std::swap(out->strides[d0], out->strides[d1]);
  return Status::Ok();
}

// narrow(self, dim, start, length): start may be negative (counts from the end).
Status NarrowFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  BP_RETURN_IF_ERROR(NotZeroDim(info, *out));
  int64_t dim_arg, start, length;
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &dim_arg));
  BP_RETURN_IF_ERROR(IntArg(info, args, 2, &start));
  BP_RETURN_IF_ERROR(IntArg(info, args, 3, &length));
  int32_t d;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, dim_arg, out->ndim, &d));
  int64_t size = out->sizes[d];
  if (start < -size || start > size) {
    return Error(BP_STATUS_OUT_OF_RANGE, ArgPrefix(info, 2) + "expected a value in [" + std::to_string(-size) +
                                             ", " + std::to_string(size) + "], got " + std::to_string(start));
  }
  if (start < 0) start += size;
  if (length < 0 || length > size - start) {
    return Error(BP_STATUS_OUT_OF_RANGE, ArgPrefix(info, 3) + "expected a value in [0, " +
                                             std::to_string(size - start) + "] (start " + std::to_string(start) +
                                             " in a dim of size " + std::to_string(size) + "), got " +
                                             std::to_string(length));
  }
  out->offset += start * out->strides[d];
  out->sizes[d] = length;
  return Status::Ok();
}

// slice.Tensor(self, dim=0, start=None, end=None, step=1): Python slicing, clamped.
Status SliceFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  BP_RETURN_IF_ERROR(NotZeroDim(info, *out));
  int64_t dim_arg = Has(info, args, 1) ? args[1].i : 0;
  int32_t d;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, dim_arg, out->ndim, &d));
  int64_t size = out->sizes[d];
  int64_t start = Has(info, args, 2) ? args[2].i : 0;
  int64_t end = Has(info, args, 3) ? args[3].i : size;
  int64_t step = Has(info, args, 4) ? args[4].i : 1;
  if (step <= 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 4) + "expected a positive step, got " + std::to_string(step));
  }
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : (start > size ? size : start);
  end = end < start ? start : (end > size ? size : end);
  out->offset += start * out->strides[d];
  out->sizes[d] = end == start ? 0 : (end - start - 1) / step + 1;  // no overflow for huge steps
  if (out->sizes[d] > 1) out->strides[d] *= step;
  return Status::Ok();
}

Status SelectFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  BP_RETURN_IF_ERROR(NotZeroDim(info, *out));
  int64_t dim_arg, index;
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &dim_arg));
  BP_RETURN_IF_ERROR(IntArg(info, args, 2, &index));
  int32_t d;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, dim_arg, out->ndim, &d));
  int64_t size = out->sizes[d];
  if (index < -size || index >= size) {
    return Error(BP_STATUS_OUT_OF_RANGE, ArgPrefix(info, 2) + "expected an index in [" + std::to_string(-size) +
                                             ", " + std::to_string(size - 1) + "] for dim " + std::to_string(d) +
                                             " of 'self' of sizes " + SizesText(*out) + ", got " + std::to_string(index));
  }
  if (index < 0) index += size;
  out->offset += index * out->strides[d];
  for (int32_t k = d; k + 1 < out->ndim; ++k) out->sizes[k] = out->sizes[k + 1], out->strides[k] = out->strides[k + 1];
  --out->ndim;
  return Status::Ok();
}

// expand(self, size): -1 keeps a dim; new leading dims and grown size-1 dims get stride 0.
Status ExpandFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  BP_RETURN_IF_ERROR(RequireIntList(info, args, 1));
  const Geometry& self = *args[0].tensor;
  const int64_t* size = args[1].ints;
  int32_t n = static_cast<int32_t>(args[1].num_ints);
  if (args[1].num_ints < self.ndim || args[1].num_ints > BP_MAX_NDIM) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "expected between " + std::to_string(self.ndim) +
                                                 " and " + std::to_string(BP_MAX_NDIM) + " sizes, got " +
                                                 std::to_string(args[1].num_ints));
  }
  int32_t lead = n - self.ndim;
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t k = 0; k < n; ++k) {
    int32_t j = k - lead;
    int64_t want = size[k];
    if (j < 0) {
      if (want < 0) {
        return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "is " + SizesText(size, n) + ": size " +
                                                     std::to_string(want) + " is not allowed in new leading dim " +
                                                     std::to_string(k));
      }
      sizes[k] = want;
      out->strides[k] = 0;
      continue;
    }
    if (want == -1) want = self.sizes[j];
    if (want < 0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "is " + SizesText(size, n) + ": invalid size " +
                                                   std::to_string(want));
    }
    if (self.sizes[j] != want && self.sizes[j] != 1) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "is " + SizesText(size, n) + ": expected size " +
                                                   std::to_string(self.sizes[j]) + " (or 1 in 'self') at dim " +
                                                   std::to_string(k) + " for 'self' of sizes " + SizesText(self) +
                                                   ", got " + std::to_string(want));
    }
    sizes[k] = want;
    out->strides[k] = self.sizes[j] == want ? self.strides[j] : 0;
  }
  out->ndim = n;
  for (int32_t k = 0; k < n; ++k) out->sizes[k] = sizes[k];
  return CheckSizes(info, "the view", sizes, n, DtypeFromDL(self.dtype));
}

Status SqueezeFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  int64_t dim_arg;
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &dim_arg));
  int32_t d;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, dim_arg, out->ndim, &d));
  if (out->ndim == 0 || out->sizes[d] != 1) return Status::Ok();
  for (int32_t k = d; k + 1 < out->ndim; ++k) out->sizes[k] = out->sizes[k + 1], out->strides[k] = out->strides[k + 1];
  --out->ndim;
  return Status::Ok();
}

Status UnsqueezeFn(const MetaCallInfo& info, const MetaArg* args, Geometry* out) {
  BP_RETURN_IF_ERROR(Self(info, args, out));
  int64_t dim_arg;
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &dim_arg));
  int32_t d;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, dim_arg, out->ndim + 1, &d));
  if (out->ndim >= BP_MAX_NDIM) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "has rank " + std::to_string(out->ndim) +
                                                 "; unsqueeze would exceed BP_MAX_NDIM (" + std::to_string(BP_MAX_NDIM) + ")");
  }
  int64_t stride = d == out->ndim ? 1 : out->sizes[d] * out->strides[d];
  for (int32_t k = out->ndim; k > d; --k) out->sizes[k] = out->sizes[k - 1], out->strides[k] = out->strides[k - 1];
  out->sizes[d] = 1;
  out->strides[d] = stride;
  ++out->ndim;
  return Status::Ok();
}

}  // namespace

const ViewFunctions kViewFns[] = {
    {"view", ViewFn},           {"reshape", ReshapeFn}, {"permute", PermuteFn}, {"transpose", TransposeFn},
    {"narrow", NarrowFn},       {"slice", SliceFn},     {"select", SelectFn},   {"expand", ExpandFn},
    {"squeeze", SqueezeFn},     {"unsqueeze", UnsqueezeFn},
};
const int kNumViewFns = sizeof(kViewFns) / sizeof(kViewFns[0]);

}  // namespace bp::core::meta
