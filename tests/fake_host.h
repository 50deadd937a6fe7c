// The one fake host every plugin test uses (CPU, vendor sample, OpenCL, GPU):
// a stand-in for libbackplane that negotiates with a plugin, runs its init
// with a bp_host_api_t whose register_kernel records kernels in a map, and
// calls those kernels directly with DLTensors in the form the kernel contract
// (abi/ops.yaml) describes. No libbackplane needed.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backplane/backend.h"
#include "boxed_values.h"

namespace bp_test {

// The message and status of the last host.set_error on this thread.
std::string& LastError();
bp_status_t LastErrorCode();

struct Registered {
  bp_kernel_fn fn = nullptr;
  void* data = nullptr;
};

// A host table bound to one plugin entry. Not copyable: the plugin keeps
// pointers to the host table and registrar (this object).
class FakeHost {
 public:
  FakeHost() = default;
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;
  ~FakeHost() { Shutdown(); }

  // Negotiates BP_ABI_VERSION and runs init on `entry` with a bp_backend_t of
  // `backend_struct_size` bytes (a shorter one models an older host). Returns
  // negotiate's status when it fails, else init's.
  bp_status_t Init(const bp_plugin_entry_t* entry, size_t backend_struct_size = sizeof(bp_backend_t));
  // Calls backend.shutdown once if init succeeded and the plugin set it; forgets the kernels.
  void Shutdown();

  bp_backend_t& backend() { return backend_; }
  const bp_backend_t& backend() const { return backend_; }
  uint32_t abi_version() const { return api_.abi_version; }
  const std::map<std::string, Registered>& kernels() const { return kernels_; }
  bool has_kernel(const std::string& op) const { return kernels_.count(op) != 0; }
  size_t num_kernels() const { return kernels_.size(); }
  // Messages the plugin logged through host.log, oldest first.
  const std::vector<std::string>& logs() const { return logs_; }
  static const std::string& last_error() { return LastError(); }
  static bp_status_t last_code() { return LastErrorCode(); }

  // Calls the kernel registered for `op`; NOT_FOUND (with a message) when none is.
  bp_status_t Call(const std::string& op, const std::vector<bp_kernel_arg_t>& args,
                   const std::vector<DLTensor*>& outs, bp_stream_t stream = nullptr, int32_t device = 0) const;

 private:
  static bp_status_t SetError(bp_status_t code, const char* message);
  static void Log(bp_registrar_t* r, int32_t level, const char* message);
  static bp_status_t RegisterKernel(bp_registrar_t* r, const char* op, bp_kernel_fn fn, void* data, uint32_t flags);
  static bp_status_t RegisterFallback(bp_registrar_t*, bp_kernel_fn, void*, uint32_t) { return BP_STATUS_OK; }
  static bp_status_t DefineOp(bp_registrar_t*, const char*, bp_kernel_fn, void*, bp_meta_fn, void*) {
    return BP_STATUS_OK;
  }

  bp_host_api_t api_{};
  bp_backend_t backend_{};
  bool inited_ = false;
  std::map<std::string, Registered> kernels_;
  std::vector<std::string> logs_;
};

// A plugin dlopened from `path` and initialized through a FakeHost. The
// library stays mapped: OpenMP/oneDNN threads and vendor runtimes' atexit
// handlers may still reference it.
struct LoadedPlugin {
  FakeHost host;
  bp_backend_t& backend = host.backend();
  void* handle = nullptr;
  const bp_plugin_entry_t* entry = nullptr;
  bp_status_t init_status = BP_STATUS_UNKNOWN;

  explicit LoadedPlugin(const char* path);
  const std::map<std::string, Registered>& kernels() const { return host.kernels(); }
};

// A host tensor with its own storage; `dl` views it (sizes/strides editable).
struct HostTensor {
  std::vector<unsigned char> storage;
  std::vector<int64_t> shape, strides;
  DLTensor dl{};

  HostTensor(DLDataType dtype, std::vector<int64_t> sizes, int32_t device_type = kDLCPU)
      : shape(std::move(sizes)) {
    strides.assign(shape.size(), 1);
    int64_t n = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      strides[d] = n;
      n *= shape[d];
    }
    storage.assign(static_cast<size_t>(n * (dtype.bits / 8)) + 1, 0);
    dl.data = storage.data();
    dl.device = DLDevice{static_cast<DLDeviceType>(device_type), 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
    dl.strides = strides.data();
    dl.byte_offset = 0;
  }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(storage.data());
  }
  template <typename T>
  void Set(const std::vector<T>& v) {
    std::memcpy(storage.data(), v.data(), v.size() * sizeof(T));
  }
  template <typename T>
  std::vector<T> Get(size_t n) const {
    std::vector<T> v(n);
    std::memcpy(v.data(), storage.data(), n * sizeof(T));
    return v;
  }
  void SetView(std::vector<int64_t> sizes, std::vector<int64_t> st, uint64_t byte_offset = 0) {
    shape = std::move(sizes);
    strides = std::move(st);
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.shape = shape.data();
    dl.strides = strides.data();
    dl.byte_offset = byte_offset;
  }
};

inline DLDataType F32() { return DLDataType{kDLFloat, 32, 1}; }
inline DLDataType F64() { return DLDataType{kDLFloat, 64, 1}; }
inline DLDataType F16() { return DLDataType{kDLFloat, 16, 1}; }
inline DLDataType BF16() { return DLDataType{kDLBfloat, 16, 1}; }
inline DLDataType I8() { return DLDataType{kDLInt, 8, 1}; }
inline DLDataType U8() { return DLDataType{kDLUInt, 8, 1}; }
inline DLDataType I32() { return DLDataType{kDLInt, 32, 1}; }
inline DLDataType I64() { return DLDataType{kDLInt, 64, 1}; }
inline DLDataType Bool() { return DLDataType{BP_DTYPE_CODE_BOOL, 8, 1}; }

// Boxed kernel arguments (bp_kernel_arg_t); lists must outlive the call.
inline bp_kernel_arg_t TArg(const DLTensor* t) { return bp_box::Tensor<bp_kernel_arg_t>(t); }
inline bp_kernel_arg_t TArg(const HostTensor& t) { return TArg(&t.dl); }
inline bp_kernel_arg_t TListArg(const std::vector<const DLTensor*>& v) {
  return bp_box::TensorList<bp_kernel_arg_t>(v);
}
inline bp_kernel_arg_t IArg(int64_t v) { return bp_box::Int<bp_kernel_arg_t>(v); }
inline bp_kernel_arg_t DArg(double v) { return bp_box::Double<bp_kernel_arg_t>(v); }
inline bp_kernel_arg_t BArg(bool v) { return bp_box::Bool<bp_kernel_arg_t>(v); }
inline bp_kernel_arg_t SArg(const char* s) { return bp_box::String<bp_kernel_arg_t>(s); }
inline bp_kernel_arg_t NoneArg() { return bp_box::None<bp_kernel_arg_t>(); }
inline bp_kernel_arg_t LArg(const std::vector<int64_t>& v) { return bp_box::IntList<bp_kernel_arg_t>(v); }

// Calls the kernel registered for `op` with `args` and host-tensor outputs.
inline bp_status_t CallKernel(const LoadedPlugin& p, const char* op, const std::vector<bp_kernel_arg_t>& args,
                              const std::vector<HostTensor*>& outs) {
  std::vector<DLTensor*> out_ptrs;
  for (HostTensor* t : outs) out_ptrs.push_back(&t->dl);
  return p.host.Call(op, args, out_ptrs);
}

}  // namespace bp_test
