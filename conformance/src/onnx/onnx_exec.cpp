#include "onnx/onnx_exec.h"

#include <algorithm>
#include <cmath>

#include "opdb.h"

namespace bpc {
namespace onnx_corpus {

Exec::Exec(bp_context_t* ctx, bp_device_t dev, TensorPool* pool) : ctx_(ctx), dev_(dev), pool_(pool) {}

bp_op_t* Exec::find(const std::string& name) {
  auto it = ops_.find(name);
  if (it != ops_.end()) return it->second;
  bp_op_t* op = nullptr;
  if (bp_op_find(ctx_, name.c_str(), &op) != BP_STATUS_OK) op = nullptr;
  ops_[name] = op;
  return op;
}

bp_tensor_t* Exec::call(const std::string& name, std::vector<bp_value_t> args) {
  bp_op_t* op = find(name);
  if (op == nullptr) throw CallFailed{"operator " + name + " not found in libbackplane"};
  bp_tensor_t* r = nullptr;
  const bp_status_t st = bp_op_call(ctx_, op, args.data(), static_cast<int32_t>(args.size()), &r, 1);
  if (st != BP_STATUS_OK) throw CallFailed{api_error(name.c_str(), st)};
  if (r == nullptr) throw CallFailed{name + ": bp_op_call returned no result tensor"};
  return pool_->hold(r);
}

bp_tensor_t* Exec::upload(const HostTensor& h) {
  std::vector<uint8_t> bytes;
  dtype_encode(h.dtype, h.values, &bytes);
  const uint8_t dummy = 0;
  bp_tensor_t* host = nullptr;
  bp_status_t st = bp_tensor_from_host(ctx_, bp_device_t{0, 0}, h.ndim(), h.sizes.data(), dtype_to_dl(h.dtype),
                                       bytes.empty() ? &dummy : bytes.data(), bytes.size(), &host);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_from_host", st)};
  pool_->hold(host);
  if (dev_.backend == 0) return host;
  bp_tensor_t* t = nullptr;
  st = bp_tensor_to_device(host, dev_, &t);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_to_device", st)};
  return pool_->hold(t);
}

bp_tensor_t* Exec::scalar(double v, DType d) {
  std::vector<uint8_t> bytes;
  dtype_encode(d, {dtype_round(d, v)}, &bytes);
  bp_tensor_t* t = nullptr;
  const bp_status_t st =
      bp_tensor_from_host(ctx_, bp_device_t{0, 0}, 0, nullptr, dtype_to_dl(d), bytes.data(), bytes.size(), &t);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_from_host", st)};
  return pool_->hold(t);
}

bp_tensor_t* Exec::full(const std::vector<int64_t>& sizes, DType d, double v) {
  bp_tensor_t* t = nullptr;
  const bp_status_t st = bp_tensor_empty(ctx_, dev_, static_cast<int32_t>(sizes.size()), sizes.data(),
                                         dtype_to_dl(d), &t);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_empty", st)};
  pool_->hold(t);
  bp_value_t value = dtype_is_float(d) ? vd(v) : d == DType::kBool ? vb(v != 0.0) : vi(static_cast<int64_t>(v));
  call("fill_.Scalar", {vt(t), value});
  return t;
}

bp_tensor_t* Exec::cast(bp_tensor_t* t, DType d) {
  if (dtype_of(t) == d) return t;
  return call("to.dtype", {vt(t), vdtype(d)});
}

DType dtype_of(const bp_tensor_t* t) {
  DType d = DType::kFloat32;
  dtype_from_dl(bp_tensor_dtype(t), &d);
  return d;
}

std::vector<int64_t> sizes_of(const bp_tensor_t* t) {
  const int64_t* s = bp_tensor_sizes(t);
  return std::vector<int64_t>(s, s + bp_tensor_ndim(t));
}

std::vector<int64_t> host_ints(const HostTensor& h) {
  std::vector<int64_t> r;
  const double lim = 4611686018427387904.0;  // 2^62
  for (double v : h.values) r.push_back(static_cast<int64_t>(std::max(-lim, std::min(lim, v))));
  return r;
}

void need_dtype(const std::string& onnx_op, const std::string& bp_op, DType d) {
  const OpClaim* c = find_claim(bp_op);
  if (c == nullptr || !c->claims(d)) throw NotMapped{"dtype " + onnx_op + "(" + dtype_name(d) + ")"};
}

void unsupported_attr(const std::string& op, const std::string& name, const std::string& value) {
  throw NotMapped{"attribute " + op + "." + name + "=" + value};
}

const MapTable& map_table() {
  static const MapTable table = [] {
    MapTable t;
    register_elementwise(&t);
    register_tensor_ops(&t);
    register_nn(&t);
    register_losses(&t);
    register_generators(&t);
    return t;
  }();
  return table;
}

}  // namespace onnx_corpus
}  // namespace bpc
