// Backplane's C++ API: a thin header-only layer over the C API in
// backplane/backplane.h, in the style of oneDNN's dnnl.hpp.
//
//   bp::Context ctx;                       // bp_context_create
//   ctx.discover();                        // load the plugins found
//   bp::Tensor a = bp::Tensor::from_vector(ctx, std::vector<float>{1, 2, 3});
//   bp::Tensor b = bp::add(a, a);          // typed operators: backplane/ops.hpp
//   std::vector<float> host = b.to_host<float>();
//
// Errors: every failing C call becomes a bp::Error (status + message) thrown
// by bp::check(); nothing else throws except std::bad_alloc.
// Lifetime: a Tensor keeps its Context's state alive, so the context is
// destroyed only after its last tensor is released (whatever the order the
// C++ objects die in).
// Thread-safety: as the C API: a Context may be used from any thread; a
// Tensor handle may be copied and read concurrently; writing to one tensor
// from two threads is a data race, as in PyTorch.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backplane/backplane.h"

namespace bp {

// ---------------------------------------------------------------- errors

/// A failed Backplane call: the bp_status_t and the message the library gave
/// (it names the operator or function, the argument, what was expected and
/// what came).
class Error : public std::exception {
 public:
  /// Wraps `status` (not BP_STATUS_OK) and `message`.
  Error(bp_status_t status, std::string message) : status_(status), message_(std::move(message)) {}
  /// The status code, e.g. BP_STATUS_INVALID_ARGUMENT.
  bp_status_t status() const noexcept { return status_; }
  /// "INVALID_ARGUMENT: add.Tensor: argument 'other' ...".
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  bp_status_t status_;
  std::string message_;
};

namespace detail {
/// check()'s failure half, out of line so that the OK test inlines into every
/// call site and the string work stays off the success path.
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_status(bp_status_t status, const char* where) {
  std::string msg = bp_status_name(status);
  const char* last = bp_last_error_message();
  msg += ": ";
  if (last != nullptr && *last != '\0') {
    msg += last;
  } else {
    msg += where ? where : "(no message)";
  }
  throw Error(status, std::move(msg));
}
}  // namespace detail

/// The one place a C status becomes an exception: returns if `status` is OK,
/// else throws bp::Error with this thread's bp_last_error_message(), prefixed
/// by the status name (and by `where`, when given and the message is empty).
inline void check(bp_status_t status, const char* where = nullptr) {
  if (status != BP_STATUS_OK) detail::throw_status(status, where);
}

// ---------------------------------------------------------------- dtypes

/// Backplane's dtypes as DLPack DLDataType (lanes 1).
inline constexpr DLDataType kBool{BP_DTYPE_CODE_BOOL, 8, 1};
inline constexpr DLDataType kUInt8{kDLUInt, 8, 1};
inline constexpr DLDataType kInt8{kDLInt, 8, 1};
inline constexpr DLDataType kInt32{kDLInt, 32, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};
inline constexpr DLDataType kFloat16{kDLFloat, 16, 1};
inline constexpr DLDataType kBFloat16{kDLBfloat, 16, 1};
inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat64{kDLFloat, 64, 1};

/// True when two dtypes are the same (code, bits and lanes).
constexpr bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/// The dtype of host element type T (float, double, int8_t, uint8_t,
/// int32_t, int64_t, bool). float16/bfloat16 have no C++ type here: use the
/// untyped Tensor::from_host / to_host_bytes.
template <class T>
constexpr DLDataType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return kBool;
  else if constexpr (std::is_same_v<T, uint8_t>) return kUInt8;
  else if constexpr (std::is_same_v<T, int8_t>) return kInt8;
  else if constexpr (std::is_same_v<T, int32_t>) return kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return kInt64;
  else if constexpr (std::is_same_v<T, float>) return kFloat32;
  else if constexpr (std::is_same_v<T, double>) return kFloat64;
  else static_assert(sizeof(T) == 0, "no Backplane dtype for this host type");
}

// ---------------------------------------------------------------- device, scalar

/// A device: the backend id (dispatch key; 0 is always "cpu") and the device
/// index within it. Plain value.
struct Device {
  int32_t backend = 0;
  int32_t index = 0;
  /// The host CPU device {0, 0}.
  static constexpr Device cpu() { return Device{0, 0}; }
  /// As the C struct.
  constexpr bp_device_t c() const { return bp_device_t{backend, index}; }
  /// From the C struct.
  static constexpr Device from_c(bp_device_t d) { return Device{d.backend, d.index}; }
  /// Same backend and index.
  constexpr bool operator==(const Device& o) const { return backend == o.backend && index == o.index; }
  /// Different backend or index.
  constexpr bool operator!=(const Device& o) const { return !(*this == o); }
};

/// A Scalar argument (alpha, value...): an integer, a floating value or a
/// bool, passed as BP_VALUE_INT / DOUBLE / BOOL. Promotion treats it as
/// PyTorch treats a Python number.
class Scalar {
 public:
  /// Integer scalars.
  Scalar(int v) : value_(make(BP_VALUE_INT)) { value_.u.i = v; }                  // NOLINT: implicit by design
  Scalar(long v) : value_(make(BP_VALUE_INT)) { value_.u.i = v; }                 // NOLINT
  Scalar(long long v) : value_(make(BP_VALUE_INT)) { value_.u.i = static_cast<int64_t>(v); }  // NOLINT
  /// Floating scalars.
  Scalar(double v) : value_(make(BP_VALUE_DOUBLE)) { value_.u.d = v; }            // NOLINT
  Scalar(float v) : value_(make(BP_VALUE_DOUBLE)) { value_.u.d = v; }             // NOLINT
  /// Boolean scalar.
  Scalar(bool v) : value_(make(BP_VALUE_BOOL)) { value_.u.b = v ? 1 : 0; }        // NOLINT
  /// True for INT, DOUBLE, BOOL respectively.
  bool is_integral() const { return value_.kind == BP_VALUE_INT; }
  bool is_floating() const { return value_.kind == BP_VALUE_DOUBLE; }
  bool is_bool() const { return value_.kind == BP_VALUE_BOOL; }
  /// The value as a double (integers and bools converted).
  double to_double() const {
    return is_floating() ? value_.u.d : is_integral() ? static_cast<double>(value_.u.i) : value_.u.b;
  }
  /// The boxed value for bp_op_call.
  const bp_value_t& value() const { return value_; }

 private:
  static bp_value_t make(int32_t kind) {
    bp_value_t v{};
    v.kind = kind;
    return v;
  }
  bp_value_t value_;
};

/// An optional int list argument (schema `int[]?`, e.g. sum's dim): pass
/// std::nullopt, a braced list {0, 1} or a std::vector<int64_t>.
class OptionalIntList {
 public:
  /// No list (the schema's None).
  OptionalIntList(std::nullopt_t) {}                                        // NOLINT: implicit by design
  /// A list.
  OptionalIntList(std::initializer_list<int64_t> v) : v_(std::vector<int64_t>(v)) {}  // NOLINT
  OptionalIntList(std::vector<int64_t> v) : v_(std::move(v)) {}            // NOLINT
  /// True when a list was given.
  bool has_value() const { return v_.has_value(); }
  /// The list; only valid when has_value().
  const std::vector<int64_t>& operator*() const { return *v_; }

 private:
  std::optional<std::vector<int64_t>> v_;
};

namespace detail {

/// Slots in a context's operator-handle cache (ops.hpp static_asserts it is
/// large enough for the core table).
inline constexpr int kOpCacheSize = 512;

/// What a Context and its Tensors share: the C context (destroyed with the
/// last owner) and the cache of resolved operator handles by table position.
struct ContextState {
  explicit ContextState(bp_context_t* c) : ctx(c) {
    for (auto& op : ops) op.store(nullptr, std::memory_order_relaxed);
  }
  ~ContextState() { bp_context_destroy(ctx); }
  ContextState(const ContextState&) = delete;
  ContextState& operator=(const ContextState&) = delete;

  bp_context_t* ctx;
  std::atomic<const bp_op_t*> ops[kOpCacheSize];
};

}  // namespace detail

class Context;

// ---------------------------------------------------------------- tensor

/// A reference-counted handle to a bp_tensor_t (copy = retain, destruction =
/// release). A default-constructed Tensor is undefined (no handle).
class Tensor {
 public:
  /// An undefined tensor.
  Tensor() = default;
  /// Takes ownership of one reference to `owned` (may be NULL: undefined).
  Tensor(std::shared_ptr<detail::ContextState> state, bp_tensor_t* owned)
      : state_(std::move(state)), t_(owned) {}
  /// Retains the handle.
  Tensor(const Tensor& o) : state_(o.state_), t_(o.t_) {
    if (t_) bp_tensor_retain(t_);
  }
  /// Steals the handle; `o` becomes undefined.
  Tensor(Tensor&& o) noexcept : state_(std::move(o.state_)), t_(std::exchange(o.t_, nullptr)) {}
  /// Retains `o`'s handle, releases the old one.
  Tensor& operator=(const Tensor& o) {
    Tensor tmp(o);
    swap(tmp);
    return *this;
  }
  /// Steals `o`'s handle, releases the old one; `o` becomes undefined.
  Tensor& operator=(Tensor&& o) noexcept {
    Tensor tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  /// Releases the handle.
  ~Tensor() { bp_tensor_release(t_); }
  /// Exchanges the handles of two tensors.
  void swap(Tensor& o) noexcept {
    std::swap(state_, o.state_);
    std::swap(t_, o.t_);
  }

  /// True when the tensor holds a handle.
  bool defined() const { return t_ != nullptr; }
  /// The C handle, borrowed: valid while this Tensor holds it.
  bp_tensor_t* get() const { return t_; }
  /// The shared context state (for ops.hpp and Context functions).
  const std::shared_ptr<detail::ContextState>& context_state() const { return state_; }

  /// Rank (number of dims); 0 for a 0-dim tensor.
  int32_t dim() const { return bp_tensor_ndim(need()); }
  /// Sizes, in elements per dim.
  std::vector<int64_t> sizes() const {
    const int64_t* s = bp_tensor_sizes(need());
    return std::vector<int64_t>(s, s + dim());
  }
  /// Strides, in elements per dim (0 for broadcast dims).
  std::vector<int64_t> strides() const {
    const int64_t* s = bp_tensor_strides(need());
    return std::vector<int64_t>(s, s + dim());
  }
  /// Size of dim `d` (negative counts from the end). Throws OUT_OF_RANGE.
  int64_t size(int64_t d) const {
    int64_t n = dim();
    if (d < 0) d += n;
    if (d < 0 || d >= n) throw Error(BP_STATUS_OUT_OF_RANGE, "OUT_OF_RANGE: Tensor::size: dim out of range");
    return bp_tensor_sizes(t_)[d];
  }
  /// Offset of the first element in its storage, in elements.
  int64_t storage_offset() const { return bp_tensor_storage_offset(need()); }
  /// Number of elements (1 for a 0-dim tensor).
  int64_t numel() const { return bp_tensor_numel(need()); }
  /// Element dtype.
  DLDataType dtype() const { return bp_tensor_dtype(need()); }
  /// The device holding the storage.
  Device device() const { return Device::from_c(bp_tensor_device(need())); }
  /// Row-major contiguous (PyTorch's rule: size-1 dims' strides ignored).
  bool is_contiguous() const { return bp_tensor_is_contiguous(need()) != 0; }
  /// Makes the storage constant (bp_tensor_set_constant, ABI 1.5): Backplane
  /// never writes it again (writes fail with INVALID_ARGUMENT) and kernels
  /// may keep copies derived from its values. Irreversible; every view of
  /// the storage is constant too. Thread-safe.
  void set_constant() const { check(bp_tensor_set_constant(need())); }
  /// Whether the storage is constant (set_constant). Thread-safe.
  bool is_constant() const { return bp_tensor_is_constant(need()) != 0; }

  /// Copies the elements, row-major, into `dst` of `nbytes` (numel * itemsize).
  /// Synchronizes the tensor's stream. Throws on a size mismatch.
  void to_host_bytes(void* dst, size_t nbytes) const { check(bp_tensor_to_host(need(), dst, nbytes)); }
  /// Copies the elements, row-major, to a host vector. T must match dtype()
  /// exactly (see dtype_of), else INVALID_ARGUMENT.
  template <class T>
  std::vector<T> to_host() const {
    if (!same_dtype(dtype(), dtype_of<T>())) {
      throw Error(BP_STATUS_INVALID_ARGUMENT,
                  "INVALID_ARGUMENT: Tensor::to_host: the host type does not match the tensor's dtype");
    }
    size_t n = static_cast<size_t>(numel());
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(n);
      to_host_bytes(bytes.data(), n);
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(n);
      to_host_bytes(out.data(), n * sizeof(T));
      return out;
    }
  }
  /// A new contiguous copy on `device` (any backend to any backend).
  Tensor to(Device device) const {
    bp_tensor_t* out = nullptr;
    check(bp_tensor_to_device(need(), device.c(), &out));
    return Tensor(state_, out);
  }
  /// Exports zero-copy as DLPack; the caller calls the deleter exactly once.
  DLManagedTensor* to_dlpack() const {
    DLManagedTensor* m = nullptr;
    check(bp_tensor_to_dlpack(need(), &m));
    return m;
  }
  /// Exports zero-copy as DLPack 1.x with `flags` (DLPACK_FLAG_BITMASK_*;
  /// READ_ONLY is added for a read-only or constant tensor); the caller calls
  /// the deleter exactly once.
  DLManagedTensorVersioned* to_dlpack_versioned(uint64_t flags = 0) const {
    DLManagedTensorVersioned* m = nullptr;
    check(bp_tensor_to_dlpack_versioned(need(), flags, &m));
    return m;
  }
  /// True when the memory came from a read-only DLPack 1.x tensor: operator
  /// calls refuse to write it.
  bool is_read_only() const { return bp_tensor_is_read_only(need()) != 0; }

  /// A new uninitialized contiguous tensor of `sizes` and `dtype` on `device`.
  static Tensor empty(const Context& ctx, const std::vector<int64_t>& sizes, DLDataType dtype,
                      Device device = Device::cpu());
  /// A new contiguous tensor on `device` holding a copy of `nbytes` of
  /// row-major host data (nbytes == numel * itemsize).
  static Tensor from_host(const Context& ctx, const void* data, size_t nbytes, const std::vector<int64_t>& sizes,
                          DLDataType dtype, Device device = Device::cpu());
  /// A tensor holding `values`; sizes default to {values.size()} (1-D).
  template <class T>
  static Tensor from_vector(const Context& ctx, const std::vector<T>& values,
                            std::optional<std::vector<int64_t>> sizes = std::nullopt,
                            Device device = Device::cpu());

 private:
  bp_tensor_t* need() const {
    if (t_ == nullptr) throw Error(BP_STATUS_INVALID_ARGUMENT, "INVALID_ARGUMENT: use of an undefined bp::Tensor");
    return t_;
  }
  std::shared_ptr<detail::ContextState> state_;
  bp_tensor_t* t_ = nullptr;
};

// ---------------------------------------------------------------- context

/// One backend slot as bp_backend_info reports it (strings copied).
struct BackendInfo {
  int32_t backend = 0;  ///< dispatch key / backend id
  std::string name, version, plugin_path;
  std::string no_device_reason;  ///< empty when it has devices
  int32_t device_type = 0;       ///< DLDeviceType
  int32_t device_count = 0;
  bool loaded = false;
};

/// Owns a bp_context_t (shared with the Tensors made from it). Movable,
/// copyable (copies share the context).
class Context {
 public:
  /// Creates a context; `options` may be NULL (not strict, no discovery,
  /// log to stderr). Throws bp::Error.
  explicit Context(const bp_context_options_t* options = nullptr) {
    bp_context_t* c = nullptr;
    check(bp_context_create(options, &c));
    state_ = std::make_shared<detail::ContextState>(c);
  }
  /// The C handle, borrowed: valid while this Context or one of its tensors lives.
  bp_context_t* get() const { return state_->ctx; }
  /// The shared state tensors hold.
  const std::shared_ptr<detail::ContextState>& state() const { return state_; }

  /// Loads the plugin at `path` (see bp_plugin_load). The plugin handle is
  /// owned by the context. Throws NOT_FOUND, INVALID_ARGUMENT,
  /// INCOMPATIBLE_VERSION, ALREADY_EXISTS or the plugin's init status.
  bp_plugin_t* load_plugin(const std::string& path) {
    bp_plugin_t* p = nullptr;
    check(bp_plugin_load(get(), path.c_str(), &p));
    return p;
  }
  /// Unloads a plugin loaded by this context.
  void unload_plugin(bp_plugin_t* plugin) { check(bp_plugin_unload(get(), plugin)); }
  /// Loads plugins by discovery (BACKPLANE_PLUGINS, BACKPLANE_PLUGIN_PATH,
  /// the install directory); returns how many loaded.
  int32_t discover() {
    int32_t n = 0;
    check(bp_plugin_discover(get(), &n));
    return n;
  }
  /// Turns strict fallback mode on or off (a CPU fallback then fails with
  /// FAILED_PRECONDITION).
  void set_strict_fallback(bool strict) { check(bp_context_set_strict_fallback(get(), strict ? 1 : 0)); }

  /// Every backend slot, loaded or not, in id order.
  std::vector<BackendInfo> backends() const {
    int32_t n = 0;
    check(bp_backend_count(get(), &n));
    std::vector<BackendInfo> out;
    for (int32_t b = 0; b < n; ++b) {
      bp_backend_info_t info{};
      info.struct_size = sizeof(info);
      check(bp_backend_info(get(), b, &info));
      BackendInfo bi;
      bi.backend = info.backend;
      bi.name = info.name ? info.name : "";
      bi.version = info.version ? info.version : "";
      bi.plugin_path = info.plugin_path ? info.plugin_path : "";
      bi.no_device_reason = info.no_device_reason ? info.no_device_reason : "";
      bi.device_type = info.device_type;
      bi.device_count = info.device_count;
      bi.loaded = info.loaded != 0;
      out.push_back(std::move(bi));
    }
    return out;
  }
  /// Every device of every loaded backend (cpu first).
  std::vector<Device> devices() const {
    std::vector<Device> out;
    for (const BackendInfo& b : backends()) {
      if (!b.loaded) continue;
      for (int32_t i = 0; i < b.device_count; ++i) out.push_back(Device{b.backend, i});
    }
    return out;
  }
  /// The device named by `spec` ("cpu", "opencl:1"). Throws NOT_FOUND.
  Device device(const std::string& spec) const {
    bp_device_t d{};
    check(bp_device_parse(get(), spec.c_str(), &d));
    return Device::from_c(d);
  }
  /// The backend id named `name`. Throws NOT_FOUND.
  int32_t backend(const std::string& name) const {
    int32_t b = 0;
    check(bp_backend_find(get(), name.c_str(), &b));
    return b;
  }
  /// Properties of `device`. Throws OUT_OF_RANGE.
  bp_device_properties_t properties(Device device) const {
    bp_device_properties_t p{};
    p.struct_size = sizeof(p);
    check(bp_device_properties(get(), device.c(), &p));
    return p;
  }
  /// Waits for the device's queued work.
  void synchronize(Device device) const { check(bp_device_synchronize(get(), device.c())); }
  /// The caching allocator's statistics for `device`.
  bp_allocator_stats_t allocator_stats(Device device) const {
    bp_allocator_stats_t s{};
    s.struct_size = sizeof(s);
    check(bp_allocator_stats(get(), device.c(), &s));
    return s;
  }
  /// Returns the device's cached blocks to the backend.
  void empty_cache(Device device) const { check(bp_allocator_empty_cache(get(), device.c())); }

  /// Finds an operator by schema name ("add.Tensor"). The handle lives with
  /// the context (or the plugin defining it). Throws NOT_FOUND.
  const bp_op_t* op(const std::string& name) const {
    bp_op_t* op = nullptr;
    check(bp_op_find(get(), name.c_str(), &op));
    return op;
  }
  /// Calls `op` with boxed arguments (schema order) and returns its
  /// `num_results` results as new Tensors.
  std::vector<Tensor> call(const bp_op_t* op, const std::vector<bp_value_t>& args, int32_t num_results = 1) const {
    std::vector<bp_tensor_t*> raw(static_cast<size_t>(num_results), nullptr);
    check(bp_op_call(get(), op, args.data(), static_cast<int32_t>(args.size()), raw.data(), num_results));
    std::vector<Tensor> out;
    for (bp_tensor_t* t : raw) out.emplace_back(state_, t);
    return out;
  }
  /// How many times `op` ran on `backend` through the CPU fallback.
  uint64_t fallback_count(const bp_op_t* op, int32_t backend) const {
    uint64_t n = 0;
    check(bp_fallback_count(get(), op, backend, &n));
    return n;
  }
  /// How many times `op` ran on `backend` through the backend's own kernel.
  uint64_t native_count(const bp_op_t* op, int32_t backend) const {
    uint64_t n = 0;
    check(bp_native_count(get(), op, backend, &n));
    return n;
  }
  /// Masks (true) or restores (false) `backend`'s kernel for `op` and its
  /// variants in this context, as bp_op_set_kernel_masked: calls then take
  /// the backend fallback or the CPU fallback. Throws on error (backend 0,
  /// unknown backend id). Thread-safe; operator calls stay lock-free.
  void set_kernel_masked(const bp_op_t* op, int32_t backend, bool masked) const {
    check(bp_op_set_kernel_masked(get(), op, backend, masked ? 1 : 0));
  }
  /// Wraps a DLPack tensor zero-copy; on success the tensor owns `managed`.
  Tensor from_dlpack(DLManagedTensor* managed) const {
    bp_tensor_t* t = nullptr;
    check(bp_tensor_from_dlpack(get(), managed, &t));
    return Tensor(state_, t);
  }
  /// Wraps a DLPack 1.x tensor zero-copy (major version 1; READ_ONLY makes
  /// a read-only tensor); on success the tensor owns `managed`.
  Tensor from_dlpack_versioned(DLManagedTensorVersioned* managed) const {
    bp_tensor_t* t = nullptr;
    check(bp_tensor_from_dlpack_versioned(get(), managed, &t));
    return Tensor(state_, t);
  }

 private:
  std::shared_ptr<detail::ContextState> state_;
};

inline Tensor Tensor::empty(const Context& ctx, const std::vector<int64_t>& sizes, DLDataType dtype, Device device) {
  bp_tensor_t* t = nullptr;
  check(bp_tensor_empty(ctx.get(), device.c(), static_cast<int32_t>(sizes.size()), sizes.data(), dtype, &t));
  return Tensor(ctx.state(), t);
}

inline Tensor Tensor::from_host(const Context& ctx, const void* data, size_t nbytes,
                                const std::vector<int64_t>& sizes, DLDataType dtype, Device device) {
  bp_tensor_t* t = nullptr;
  check(bp_tensor_from_host(ctx.get(), device.c(), static_cast<int32_t>(sizes.size()), sizes.data(), dtype, data,
                            nbytes, &t));
  return Tensor(ctx.state(), t);
}

template <class T>
Tensor Tensor::from_vector(const Context& ctx, const std::vector<T>& values, std::optional<std::vector<int64_t>> sizes,
                           Device device) {
  std::vector<int64_t> s = sizes ? *sizes : std::vector<int64_t>{static_cast<int64_t>(values.size())};
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return from_host(ctx, bytes.data(), bytes.size(), s, kBool, device);
  } else {
    return from_host(ctx, values.data(), values.size() * sizeof(T), s, dtype_of<T>(), device);
  }
}

}  // namespace bp

// The boxing behind the typed operator functions of ops.hpp.
#include "backplane/detail/typed_call.hpp"
// Prepared calls (bp::Plan).
#include "backplane/plan.hpp"
// Streams and events (bp::Stream, bp::Event, bp::StreamGuard).
#include "backplane/stream.hpp"
