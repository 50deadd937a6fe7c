#include "device_tensor.h"

#include <sstream>

#include "boxed_values.h"
#include "gen.h"

namespace bpc {

TensorPool::~TensorPool() {
  for (size_t i = tensors_.size(); i-- > 0;) bp_tensor_release(tensors_[i]);
}

bp_tensor_t* TensorPool::hold(bp_tensor_t* t) {
  if (t != nullptr) tensors_.push_back(t);
  return t;
}

std::string api_error(const char* what, bp_status_t st) {
  std::ostringstream os;
  os << what << ": " << bp_status_name(st) << ": " << bp_last_error_message();
  return os.str();
}

namespace {

bool call_view(bp_context_t* ctx, const OpLookup& ops, const char* name, std::vector<bp_value_t> args,
               TensorPool* pool, bp_tensor_t** out, std::string* err) {
  bp_op_t* op = ops(name);
  if (op == nullptr) {
    *err = std::string("setup: operator ") + name + " not found";
    return false;
  }
  bp_tensor_t* r = nullptr;
  const bp_status_t st = bp_op_call(ctx, op, args.data(), static_cast<int32_t>(args.size()), &r, 1);
  if (st != BP_STATUS_OK) {
    *err = "setup: " + api_error(name, st);
    return false;
  }
  *out = pool->hold(r);
  return true;
}

// The storage a layout needs and the values it holds (filler where the view
// does not look: 3 for numbers, 1 for bool).
HostTensor base_for(const TensorInput& in) {
  const HostTensor& t = in.t;
  const double filler = t.dtype == DType::kBool ? 1.0 : 3.0;
  const size_t nd = t.sizes.size();
  HostTensor b;
  b.dtype = t.dtype;
  std::vector<int64_t> idx;
  switch (in.layout) {
    case Layout::kTransposed: {
      b.sizes = t.sizes;
      std::swap(b.sizes[nd - 2], b.sizes[nd - 1]);
      b.values.resize(t.values.size());
      for (int64_t k = 0; k < t.numel(); ++k) {
        unravel(k, t.sizes, &idx);
        std::swap(idx[nd - 2], idx[nd - 1]);
        int64_t off = 0;
        for (size_t i = 0; i < nd; ++i) off = off * b.sizes[i] + idx[i];
        b.values[static_cast<size_t>(off)] = t.values[static_cast<size_t>(k)];
      }
      return b;
    }
    case Layout::kStrided: {
      b.sizes = t.sizes;
      b.sizes[nd - 1] *= 2;
      b.values.assign(static_cast<size_t>(numel_of(b.sizes)), filler);
      for (int64_t k = 0; k < t.numel(); ++k) b.values[static_cast<size_t>(2 * k)] = t.values[static_cast<size_t>(k)];
      return b;
    }
    case Layout::kOffset: {
      b.sizes = t.sizes;
      b.sizes[0] += 1;
      const int64_t slice = numel_of(t.sizes) / (t.sizes[0] == 0 ? 1 : t.sizes[0]);
      b.values.assign(static_cast<size_t>(t.sizes[0] == 0 ? numel_of(b.sizes) : slice), filler);
      b.values.insert(b.values.end(), t.values.begin(), t.values.end());
      b.values.resize(static_cast<size_t>(numel_of(b.sizes)), filler);
      return b;
    }
    case Layout::kExpanded: {
      b.sizes = in.expand_from;
      b.values.assign(static_cast<size_t>(numel_of(b.sizes)), filler);
      const size_t lead = nd - b.sizes.size();
      for (int64_t k = 0; k < t.numel(); ++k) {
        unravel(k, t.sizes, &idx);
        int64_t off = 0;
        for (size_t i = 0; i < b.sizes.size(); ++i) off = off * b.sizes[i] + (b.sizes[i] == 1 ? 0 : idx[lead + i]);
        b.values[static_cast<size_t>(off)] = t.values[static_cast<size_t>(k)];
      }
      return b;
    }
    case Layout::kContiguous:
      break;
  }
  return t;
}

}  // namespace

bool make_device_tensor(bp_context_t* ctx, const OpLookup& ops, const TensorInput& in,
                        bp_device_t dev, TensorPool* pool, bp_tensor_t** out, std::string* err) {
  Layout layout = in.layout;
  const size_t nd = in.t.sizes.size();
  if ((layout == Layout::kTransposed && nd < 2) || (layout == Layout::kStrided && nd < 1) ||
      (layout == Layout::kOffset && nd < 1)) {
    layout = Layout::kContiguous;
  }
  TensorInput eff = in;
  eff.layout = layout;
  const HostTensor base = base_for(eff);
  std::vector<uint8_t> bytes;
  dtype_encode(base.dtype, base.values, &bytes);
  const uint8_t dummy = 0;
  bp_tensor_t* host = nullptr;
  const bp_device_t cpu{0, 0};
  bp_status_t st = bp_tensor_from_host(ctx, cpu, base.ndim(), base.sizes.data(), dtype_to_dl(base.dtype),
                                       bytes.empty() ? &dummy : bytes.data(), bytes.size(), &host);
  if (st != BP_STATUS_OK) {
    *err = "setup: " + api_error("bp_tensor_from_host", st);
    return false;
  }
  pool->hold(host);
  bp_tensor_t* t = host;
  if (!in.cpu_scalar) {
    st = bp_tensor_to_device(host, dev, &t);
    if (st != BP_STATUS_OK) {
      *err = "setup: " + api_error("bp_tensor_to_device", st);
      return false;
    }
    pool->hold(t);
  }
  const int64_t last = static_cast<int64_t>(nd) - 1;
  switch (layout) {
    case Layout::kContiguous:
      *out = t;
      return true;
    case Layout::kTransposed:
      return call_view(ctx, ops, "transpose.int", {vt(t), vi(last - 1), vi(last)},
                       pool, out, err);
    case Layout::kStrided: {
      bp_value_t none{};
      none.kind = BP_VALUE_NONE;
      return call_view(ctx, ops, "slice.Tensor",
                       {vt(t), vi(last), vi(0), none, vi(2)}, pool, out, err);
    }
    case Layout::kOffset:
      return call_view(ctx, ops, "narrow", {vt(t), vi(0), vi(1), vi(in.t.sizes[0])},
                       pool, out, err);
    case Layout::kExpanded: {
      bp_value_t sizes{};
      sizes.kind = BP_VALUE_INT_LIST;
      sizes.u.int_list.data = in.t.sizes.data();
      sizes.u.int_list.size = static_cast<int64_t>(nd);
      return call_view(ctx, ops, "expand", {vt(t), sizes}, pool, out, err);
    }
  }
  return false;
}

bool make_alias_tensor(bp_context_t* ctx, const OpLookup& ops, const TensorInput& in, bp_tensor_t* base,
                       TensorPool* pool, bp_tensor_t** out, std::string* err) {
  const int32_t nd = base == nullptr ? 0 : bp_tensor_ndim(base);
  if (nd < 2 || (in.layout != Layout::kContiguous && in.layout != Layout::kTransposed)) {
    *err = "setup: an alias needs a tensor argument of rank >= 2 before it and a contiguous or transposed layout";
    return false;
  }
  // narrow over the whole of dim 0: a tensor of its own with base's exact geometry.
  if (in.layout == Layout::kContiguous) {
    return call_view(ctx, ops, "narrow", {vt(base), vi(0), vi(0), vi(bp_tensor_sizes(base)[0])}, pool, out, err);
  }
  return call_view(ctx, ops, "transpose.int", {vt(base), vi(nd - 2), vi(nd - 1)}, pool, out, err);
}

bool read_tensor(const bp_tensor_t* t, DType* dtype, std::vector<int64_t>* sizes,
                 std::vector<double>* values, std::string* err) {
  const DLDataType dl = bp_tensor_dtype(t);
  if (!dtype_from_dl(dl, dtype)) {
    std::ostringstream os;
    os << "result has an unknown dtype (code " << int(dl.code) << ", bits " << int(dl.bits) << ")";
    *err = os.str();
    return false;
  }
  const int32_t nd = bp_tensor_ndim(t);
  const int64_t* s = bp_tensor_sizes(t);
  sizes->assign(s, s + nd);
  const int64_t n = bp_tensor_numel(t);
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * dtype_itemsize(*dtype) + 1);
  const size_t nbytes = static_cast<size_t>(n) * dtype_itemsize(*dtype);
  const bp_status_t st = bp_tensor_to_host(t, bytes.data(), nbytes);
  if (st != BP_STATUS_OK) {
    *err = api_error("bp_tensor_to_host", st);
    return false;
  }
  *values = dtype_decode(*dtype, bytes.data(), static_cast<size_t>(n));
  return true;
}

}  // namespace bpc
