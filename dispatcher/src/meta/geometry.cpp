// Geometry methods and shape helpers: broadcasting, dim wrapping, size checks.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

#include "meta/common.h"

namespace bp::core {

int64_t Geometry::numel() const {
  int64_t n = 1;
  for (int32_t i = 0; i < ndim; ++i) n *= sizes[i];
  return n;
}

bool Geometry::is_contiguous() const {
  // PyTorch's rule: strides of size-1 dims do not matter; empty tensors are contiguous.
  int64_t expected = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    if (sizes[i] == 0) return true;
  }
  for (int32_t i = ndim - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

void Geometry::set_contiguous_strides() {
  int64_t stride = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= sizes[i] > 1 ? sizes[i] : 1;
  }
}

bool Geometry::is_channels_last() const {
  if (ndim != 4) return false;
  const int64_t want[4] = {sizes[1] * sizes[2] * sizes[3], 1, sizes[3] * sizes[1], sizes[1]};
  for (int32_t i = 0; i < 4; ++i) {
    if (sizes[i] == 0) return false;
    if (sizes[i] != 1 && strides[i] != want[i]) return false;
  }
  return !is_contiguous();
}

void Geometry::set_channels_last_strides() {
  const int64_t c = sizes[1] > 1 ? sizes[1] : 1, h = sizes[2] > 1 ? sizes[2] : 1, w = sizes[3] > 1 ? sizes[3] : 1;
  strides[1] = 1;
  strides[3] = c;
  strides[2] = w * c;
  strides[0] = h * w * c;
}

int32_t BroadcastSizes(const Geometry& a, const Geometry& b, int32_t* out_ndim, int64_t* out_sizes) {
  int32_t ndim = a.ndim > b.ndim ? a.ndim : b.ndim;
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t i = 0; i < ndim; ++i) {
    int32_t ia = i - (ndim - a.ndim);
    int32_t ib = i - (ndim - b.ndim);
    int64_t sa = ia >= 0 ? a.sizes[ia] : 1;
    int64_t sb = ib >= 0 ? b.sizes[ib] : 1;
    if (sa == sb || sb == 1) {
      sizes[i] = sa;
    } else if (sa == 1) {
      sizes[i] = sb;
    } else {
      return i;
    }
  }
  *out_ndim = ndim;
  std::memcpy(out_sizes, sizes, sizeof(int64_t) * static_cast<size_t>(ndim));
  return -1;
}

Status BroadcastShapes(const MetaCallInfo& info, int arg_a, const Geometry& a, int arg_b, const Geometry& b,
                       int32_t* out_ndim, int64_t* out_sizes) {
  const int32_t i = BroadcastSizes(a, b, out_ndim, out_sizes);
  if (i >= 0) {
    const int32_t ndim = a.ndim > b.ndim ? a.ndim : b.ndim;
    const int64_t sa = i - (ndim - a.ndim) >= 0 ? a.sizes[i - (ndim - a.ndim)] : 1;
    const int64_t sb = i - (ndim - b.ndim) >= 0 ? b.sizes[i - (ndim - b.ndim)] : 1;
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(info.op_name) + ": argument '" + meta::ArgName(info, arg_b) +
                                                 "' of sizes " + meta::SizesText(b) + " cannot broadcast with '" +
                                                 meta::ArgName(info, arg_a) + "' of sizes " + meta::SizesText(a) +
                                                 " at dim " + std::to_string(i) + " (" + std::to_string(sb) + " vs " +
                                                 std::to_string(sa) + ")");
  }
  return Status::Ok();
}

Status WrapDim(const MetaCallInfo& info, int arg, int64_t dim, int32_t ndim, int32_t* out_dim) {
  int32_t n = ndim > 0 ? ndim : 1;  // a 0-dim tensor takes dim 0 and -1, as in PyTorch
  if (dim < -n || dim >= n) {
    return Error(BP_STATUS_OUT_OF_RANGE,
                 meta::ArgPrefix(info, arg) + "expected a dim in the range [" + std::to_string(-n) +
                     ", " + std::to_string(n - 1) + "] for a tensor of rank " + std::to_string(ndim) +
                     ", got " + std::to_string(dim));
  }
  *out_dim = static_cast<int32_t>(dim < 0 ? dim + n : dim);
  return Status::Ok();
}

namespace meta {

std::string SizesText(const int64_t* sizes, int64_t n) {
  std::string out = "[";
  const int64_t shown = std::min<int64_t>(n, BP_MAX_NDIM);
  for (int64_t i = 0; i < shown; ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  if (shown < n) out += ", ... (" + std::to_string(n) + " entries)";
  return out + "]";
}

std::string BaseName(const MetaCallInfo& info) {
  std::string n = info.op_name ? info.op_name : "";
  size_t ns = n.rfind("::");
  if (ns != std::string::npos) n = n.substr(ns + 2);
  n = n.substr(0, n.find('.'));
  if (!n.empty() && n.back() == '_') n.pop_back();
  return n;
}

bool BaseNameIs(const MetaCallInfo& info, const char* name) {
  std::string_view n = info.op_name ? info.op_name : "";
  size_t ns = n.rfind("::");
  if (ns != std::string_view::npos) n = n.substr(ns + 2);
  n = n.substr(0, n.find('.'));
  if (!n.empty() && n.back() == '_') n.remove_suffix(1);
  return n == name;
}

std::string ArgName(const MetaCallInfo& info, int arg) {
  if (info.arg_names != nullptr && arg >= 0 && arg < info.num_args && info.arg_names[arg] != nullptr) {
    return info.arg_names[arg];
  }
  return "arg" + std::to_string(arg);
}

std::string ArgPrefix(const MetaCallInfo& info, int arg) {
  return std::string(info.op_name ? info.op_name : "?") + ": argument '" + ArgName(info, arg) + "' ";
}

Status RequireTensor(const MetaCallInfo& info, const MetaArg* args, int i, DType* out_dtype) {
  if (i >= info.num_args || args[i].kind != BP_VALUE_TENSOR || args[i].tensor == nullptr) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected a tensor, got " +
                                                 (i >= info.num_args ? "nothing" : "another kind"));
  }
  const Geometry& g = *args[i].tensor;
  DType d = DtypeFromDL(g.dtype);
  if (d == DType::kInvalid) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, i) + "has unsupported dtype " + DtypeName(g.dtype));
  }
  if (g.ndim < 0 || g.ndim > BP_MAX_NDIM) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected rank <= " +
                                                 std::to_string(BP_MAX_NDIM) + ", got " +
                                                 std::to_string(g.ndim));
  }
  if (out_dtype) *out_dtype = d;
  return Status::Ok();
}

Status IntArg(const MetaCallInfo& info, const MetaArg* args, int i, int64_t* v) {
  if (i >= info.num_args || args[i].kind != BP_VALUE_INT) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected an int");
  }
  *v = args[i].i;
  return Status::Ok();
}

Status RequireTwoTensors(const MetaCallInfo& info, const MetaArg* args, DType* first_dtype) {
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, first_dtype));
  return RequireTensor(info, args, 1, nullptr);
}

Status RequireIntList(const MetaCallInfo& info, const MetaArg* args, int i) {
  if (i >= info.num_args || args[i].kind != BP_VALUE_INT_LIST || (args[i].ints == nullptr && args[i].num_ints)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected an int list");
  }
  return Status::Ok();
}

Status CheckSizes(const MetaCallInfo& info, const char* what, const int64_t* sizes, int32_t ndim,
                  DType dtype) {
  if (ndim > BP_MAX_NDIM) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(info.op_name) + ": " + what + " would have rank " +
                                                 std::to_string(ndim) + ", more than BP_MAX_NDIM (" +
                                                 std::to_string(BP_MAX_NDIM) + ")");
  }
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t n = 1;
  bool overflow = false;
  for (int32_t i = 0; i < ndim; ++i) {
    if (sizes[i] < 0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(info.op_name) + ": " + what + " has a negative size " +
                                                   SizesText(sizes, ndim));
    }
    if (sizes[i] != 0 && n > kMax / sizes[i]) overflow = true;
    if (!overflow) n *= sizes[i];
  }
  for (int32_t i = 0; i < ndim; ++i) {
    if (sizes[i] == 0) overflow = false;  // zero elements whatever the rest
  }
  int64_t item = static_cast<int64_t>(DtypeItemSize(dtype));
  if (overflow || (item > 0 && n > kMax / item)) {
    return Error(BP_STATUS_OUT_OF_RANGE, std::string(info.op_name) + ": " + what + " of sizes " +
                                             SizesText(sizes, ndim) + " and dtype " + DtypeName(dtype) +
                                             " has more elements or bytes than int64 can count");
  }
  return Status::Ok();
}

Status SetOutput(const MetaCallInfo& info, MetaPlan* plan, int index, DType dtype, const int64_t* sizes,
                 int32_t ndim, bp_device_t device) {
  BP_RETURN_IF_ERROR(CheckSizes(info, "the output", sizes, ndim, dtype));
  Geometry& g = plan->outputs[index];
  g = Geometry();
  g.dtype = DtypeToDL(dtype);
  g.ndim = ndim;
  for (int32_t i = 0; i < ndim; ++i) g.sizes[i] = sizes[i];
  g.set_contiguous_strides();
  g.device = device;
  if (plan->num_outputs < index + 1) plan->num_outputs = index + 1;
  return Status::Ok();
}

bp_device_t CallDevice(const MetaCallInfo& info, const MetaArg* args) {
  const Geometry* first = nullptr;
  for (int i = 0; i < info.num_args; ++i) {
    const Geometry* g = nullptr;
    if (args[i].kind == BP_VALUE_TENSOR) g = args[i].tensor;
    if (args[i].kind == BP_VALUE_TENSOR_LIST && args[i].num_tensors > 0) g = args[i].tensors[0];
    if (g == nullptr) continue;
    if (g->ndim > 0) return g->device;
    if (first == nullptr) first = g;
  }
  return first ? first->device : bp_device_t{0, 0};
}

void BroadcastStrides(const Geometry& g, const int64_t* sizes, int32_t ndim, int64_t* strides) {
  int32_t lead = ndim - g.ndim;
  for (int32_t i = 0; i < ndim; ++i) {
    int32_t j = i - lead;
    strides[i] = j < 0 || (g.sizes[j] == 1 && sizes[i] != 1) ? 0 : g.strides[j];
  }
}

Geometry BroadcastTo(const Geometry& g, const int64_t* sizes, int32_t ndim) {
  Geometry out = g;
  out.ndim = ndim;
  std::memcpy(out.sizes, sizes, sizeof(int64_t) * static_cast<size_t>(ndim));
  BroadcastStrides(g, sizes, ndim, out.strides);
  return out;
}

void ViewsAsIs(const MetaArg* args, int num_args, const Geometry* outputs, int num_outputs,
               KernelViews* views) {
  for (int i = 0; i < num_args && i < kMaxArgs; ++i) {
    if (args[i].kind == BP_VALUE_TENSOR && args[i].tensor) views->args[i] = *args[i].tensor;
  }
  for (int i = 0; i < num_outputs && i < kMaxOutputs; ++i) views->outputs[i] = outputs[i];
}

Status AsIsPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                   const Geometry* outputs, KernelViews* views) {
  ViewsAsIs(args, info.num_args, outputs, plan.num_outputs, views);
  return Status::Ok();
}

}  // namespace meta
}  // namespace bp::core
