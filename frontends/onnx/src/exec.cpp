#include "bponnx/exec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace bponnx {

bp_value_t vnone() {
  bp_value_t v{};
  v.kind = BP_VALUE_NONE;
  return v;
}
bp_value_t vt(bp_tensor_t* t) {
  if (t == nullptr) return vnone();
  bp_value_t v{};
  v.kind = BP_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
bp_value_t vi(int64_t i) {
  bp_value_t v{};
  v.kind = BP_VALUE_INT;
  v.u.i = i;
  return v;
}
bp_value_t vd(double d) {
  bp_value_t v{};
  v.kind = BP_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
bp_value_t vb(bool b) {
  bp_value_t v{};
  v.kind = BP_VALUE_BOOL;
  v.u.b = b ? 1 : 0;
  return v;
}
bp_value_t vl(const std::vector<int64_t>& ints) {
  bp_value_t v{};
  v.kind = BP_VALUE_INT_LIST;
  v.u.int_list.data = ints.data();
  v.u.int_list.size = static_cast<int64_t>(ints.size());
  return v;
}
bp_value_t vs(const char* s) {
  bp_value_t v{};
  v.kind = BP_VALUE_STRING;
  v.u.str = s;
  return v;
}
bp_value_t vdtype(DType d) {
  bp_value_t v{};
  v.kind = BP_VALUE_DTYPE;
  v.u.dtype = dtype_to_dl(d);
  return v;
}

std::string api_error(const char* what, bp_status_t st) {
  return std::string(what) + ": " + bp_status_name(st) + ": " + bp_last_error_message();
}

void PreparedCall::run(bp_context_t* ctx, const bp_value_t* args, int32_t num_args, bp_tensor_t** outs,
                       int32_t num_outs) const {
  if (op == nullptr) throw CallFailed{"operator " + name + " not found in libbackplane"};
  const bp_status_t st = bp_op_call(ctx, op, args, num_args, outs, num_outs);
  if (st != BP_STATUS_OK) throw CallFailed{api_error(name.c_str(), st)};
}

const PreparedCall& OpCache::prepared(const std::string& name) {
  auto it = ops_.find(name);
  if (it != ops_.end()) return it->second;
  PreparedCall& c = ops_[name];
  c.name = name;
  if (bp_op_find(ctx_, name.c_str(), &c.op) != BP_STATUS_OK) c.op = nullptr;
  return c;
}

Exec::Exec(bp_context_t* ctx, bp_device_t dev, OpCache* ops) : ctx_(ctx), dev_(dev), ops_(ops) {}

Exec::~Exec() { reset(); }

void Exec::reset() {
  for (bp_tensor_t* t : held_) bp_tensor_release(t);
  held_.clear();
  called_.clear();
}

bp_tensor_t* Exec::hold(bp_tensor_t* t) {
  held_.push_back(t);
  return t;
}

// Called inside the caller's own Quiet: reported unless an outer one is active.
bp_tensor_t* Exec::constant(bp_tensor_t* t) {
  if (rec_ != nullptr && quiet_ == 1) rec_->on_constant(t);
  return t;
}

bp_tensor_t* Exec::call(const std::string& name, std::initializer_list<bp_value_t> args) {
  const PreparedCall& c = ops_->prepared(name);
  if (c.op != nullptr) called_.push_back(c.op);
  bp_tensor_t* r = nullptr;
  c.run(ctx_, args.begin(), static_cast<int32_t>(args.size()), &r, 1);
  if (r == nullptr) throw CallFailed{name + ": bp_op_call returned no result tensor"};
  hold(r);
  if (Recorder* rec = recorder()) rec->on_call(c, args.begin(), static_cast<int32_t>(args.size()), &r, 1);
  return r;
}

std::vector<bp_tensor_t*> Exec::call_multi(const std::string& name, const std::vector<bp_value_t>& args,
                                           int32_t num_results) {
  const PreparedCall& c = ops_->prepared(name);
  if (c.op != nullptr) called_.push_back(c.op);
  std::vector<bp_tensor_t*> r(static_cast<size_t>(num_results), nullptr);
  c.run(ctx_, args.data(), static_cast<int32_t>(args.size()), r.data(), num_results);
  bool missing = false;
  for (bp_tensor_t* t : r) {
    if (t == nullptr)
      missing = true;
    else
      hold(t);
  }
  if (missing) throw CallFailed{name + ": bp_op_call returned fewer result tensors than asked for"};
  if (Recorder* rec = recorder())
    rec->on_call(c, args.data(), static_cast<int32_t>(args.size()), r.data(), num_results);
  return r;
}

namespace {

// A CPU tensor made from host bytes of `dl`.
bp_tensor_t* cpu_tensor(bp_context_t* ctx, const std::vector<int64_t>& sizes, DLDataType dl, const void* bytes,
                        size_t nbytes) {
  const uint8_t dummy = 0;
  bp_tensor_t* t = nullptr;
  const bp_status_t st = bp_tensor_from_host(ctx, bp_device_t{0, 0}, static_cast<int32_t>(sizes.size()), sizes.data(),
                                             dl, nbytes == 0 ? &dummy : bytes, nbytes, &t);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_from_host", st)};
  return t;
}

// Integers saturate (NaN -> 0) instead of the undefined out-of-range cast.
template <typename T>
T narrow_to(double x) {
  if (std::is_floating_point<T>::value) return static_cast<T>(x);
  if (std::isnan(x)) return T(0);
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (x <= lo) return std::numeric_limits<T>::lowest();
  if (x >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(x);
}

template <typename T>
void put(const std::vector<double>& values, std::string* out) {
  out->resize(values.size() * sizeof(T));
  for (size_t k = 0; k < values.size(); ++k) {
    const T v = narrow_to<T>(values[k]);
    std::memcpy(&(*out)[k * sizeof(T)], &v, sizeof(T));
  }
}

// Encodes values (already representable in `d`) as `d`'s bytes; false for
// float16/bfloat16, which the caller casts with Backplane's to.dtype instead.
bool encode(DType d, const std::vector<double>& values, std::string* out) {
  switch (d) {
    case DType::kFloat32:
      put<float>(values, out);
      return true;
    case DType::kFloat64:
      put<double>(values, out);
      return true;
    case DType::kInt8:
      put<int8_t>(values, out);
      return true;
    case DType::kUInt8:
      put<uint8_t>(values, out);
      return true;
    case DType::kInt32:
      put<int32_t>(values, out);
      return true;
    case DType::kInt64:
      put<int64_t>(values, out);
      return true;
    case DType::kBool: {
      std::vector<double> b;
      for (double v : values) b.push_back(v != 0.0 ? 1.0 : 0.0);
      put<uint8_t>(b, out);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bp_tensor_t* Exec::host_tensor(const std::vector<int64_t>& sizes, DType d, const std::vector<double>& values) {
  std::string bytes;
  if (encode(d, values, &bytes)) return hold(cpu_tensor(ctx_, sizes, dtype_to_dl(d), bytes.data(), bytes.size()));
  // float16/bfloat16: float64 on the host, rounded by the CPU's to.dtype.
  bp_tensor_t* wide =
      hold(cpu_tensor(ctx_, sizes, dtype_to_dl(DType::kFloat64), values.data(), values.size() * sizeof(double)));
  return cast(wide, d);
}

bp_tensor_t* Exec::upload(const HostTensor& h) {
  const Quiet quiet(this);
  bp_tensor_t* host = host_tensor(h.sizes, h.dtype, h.values);
  if (dev_.backend == 0) return constant(host);
  bp_tensor_t* t = nullptr;
  const bp_status_t st = bp_tensor_to_device(host, dev_, &t);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_to_device", st)};
  return constant(hold(t));
}

bp_tensor_t* Exec::upload(const RawTensor& r) {
  if (!r.unsupported.empty()) throw NotMapped{"dtype " + r.unsupported};
  bp_tensor_t* host = hold(cpu_tensor(ctx_, r.sizes, dtype_to_dl(r.dtype), r.bytes.data(), r.bytes.size()));
  if (dev_.backend == 0) return constant(host);
  bp_tensor_t* t = nullptr;
  const bp_status_t st = bp_tensor_to_device(host, dev_, &t);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_to_device", st)};
  return constant(hold(t));
}

namespace {
// The values of a dtype the host reads as is (all but float16/bfloat16),
// copied row-major from any device and widened here: no operator call.
bool read_plain(bp_tensor_t* t, HostTensor* h) {
  if (h->dtype == DType::kFloat16 || h->dtype == DType::kBFloat16) return false;
  RawTensor r;
  r.dtype = h->dtype;
  r.sizes = h->sizes;
  r.bytes.assign(static_cast<size_t>(h->numel()) * dtype_itemsize(h->dtype), '\0');
  if (!r.bytes.empty()) {
    const bp_status_t st = bp_tensor_to_host(t, &r.bytes[0], r.bytes.size());
    if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_to_host", st)};
  }
  return host_from_raw(r, h);
}
}  // namespace

HostTensor Exec::to_host(bp_tensor_t* t) {
  if (Recorder* r = recorder()) r->on_read_back(t);
  const Quiet quiet(this);
  HostTensor h;
  h.dtype = dtype_of(t);
  h.sizes = sizes_of(t);
  if (read_plain(t, &h)) return h;
  bp_tensor_t* c = t;
  if (bp_tensor_device(t).backend != 0) {
    const bp_status_t st = bp_tensor_to_device(t, bp_device_t{0, 0}, &c);
    if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_to_device", st)};
    hold(c);
  }
  c = cast(c, DType::kFloat64);
  h.values.resize(static_cast<size_t>(h.numel()));
  const bp_status_t st = bp_tensor_to_host(c, h.values.data(), h.values.size() * sizeof(double));
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_to_host", st)};
  return h;
}

bp_tensor_t* Exec::scalar(double v, DType d) {
  const Quiet quiet(this);
  return constant(host_tensor({}, d, {v}));
}

bp_tensor_t* Exec::full(const std::vector<int64_t>& sizes, DType d, double v) {
  bp_tensor_t* t = nullptr;
  const bp_status_t st =
      bp_tensor_empty(ctx_, dev_, static_cast<int32_t>(sizes.size()), sizes.data(), dtype_to_dl(d), &t);
  if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_empty", st)};
  hold(t);
  if (Recorder* r = recorder()) r->on_empty(sizes, dtype_to_dl(d), t);
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

const HostTensor& host_of(const NodeInput& in) {
  if (in.host == nullptr && in.t != nullptr && in.host_cache != nullptr && in.host_exec != nullptr) {
    *in.host_cache = in.host_exec->to_host(in.t);
    if (in.host_cached != nullptr) *in.host_cached = true;
    return *in.host_cache;
  }
  if (in.host == nullptr) {
    throw NotMapped{in.t == nullptr ? std::string("input: a shape-like input is left out")
                                    : "input: a shape-like input of " + std::to_string(bp_tensor_numel(in.t)) +
                                          " elements computed on the device (its values are needed on the host)"};
  }
  return *in.host;
}

bp_tensor_t* upload_ints(Exec& ex, const std::vector<int64_t>& v) {
  HostTensor h;
  h.dtype = DType::kInt64;
  h.sizes = {static_cast<int64_t>(v.size())};
  h.values.assign(v.begin(), v.end());
  return ex.upload(h);
}

std::vector<int64_t> host_ints(const HostTensor& h) {
  std::vector<int64_t> r;
  const double lim = 4611686018427387904.0;  // 2^62
  for (double v : h.values) r.push_back(static_cast<int64_t>(std::max(-lim, std::min(lim, v))));
  return r;
}

namespace {
DTypeClaims& claims_hook() {
  static DTypeClaims hook;
  return hook;
}
}  // namespace

void set_dtype_claims(DTypeClaims claims) { claims_hook() = std::move(claims); }

void need_dtype(const std::string& onnx_op, const std::string& bp_op, DType d) {
  const DTypeClaims& hook = claims_hook();
  if (hook && !hook(bp_op, d)) throw NotMapped{"dtype " + onnx_op + "(" + dtype_name(d) + ")"};
}

int64_t norm_axis(const OnnxNode& n, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1)) unsupported_attr(n.op_type, "axis", std::to_string(axis));
  return a;
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
    register_attention(&t);
    register_resample(&t);
    register_losses(&t);
    register_generators(&t);
    register_scatter_gather(&t);
    register_recurrent(&t);
    register_einsum(&t);
    register_quantization(&t);
    register_detection(&t);
    register_selection(&t);
    return t;
  }();
  return table;
}

bool runs_natively(bp_context_t* ctx, const char* op, int32_t backend) {
  bp_op_t* h = nullptr;
  int32_t kind = BP_DISPATCH_NONE;
  return ctx != nullptr && bp_op_find(ctx, op, &h) == BP_STATUS_OK &&
         bp_op_dispatch_kind(ctx, h, backend, &kind) == BP_STATUS_OK && kind == BP_DISPATCH_NATIVE;
}

}  // namespace bponnx
