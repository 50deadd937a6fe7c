// A minimal stand-in for libbackplane, enough to drive the OpenCL plugin
// through its C ABI in unit tests: negotiate, init with a host table whose
// register_kernel stores kernels in a map, allocate and copy through the
// plugin, and call kernels with DLTensors built as the kernel contract says
// (data = cl_mem, byte_offset = view offset, strides in elements, never NULL).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backplane/backend.h"

namespace bpcl_test {

inline DLDataType F32() { return DLDataType{kDLFloat, 32, 1}; }
inline DLDataType F64() { return DLDataType{kDLFloat, 64, 1}; }
inline DLDataType F16() { return DLDataType{kDLFloat, 16, 1}; }
inline DLDataType BF16() { return DLDataType{kDLBfloat, 16, 1}; }
inline DLDataType I8() { return DLDataType{kDLInt, 8, 1}; }
inline DLDataType U8() { return DLDataType{kDLUInt, 8, 1}; }
inline DLDataType I32() { return DLDataType{kDLInt, 32, 1}; }
inline DLDataType I64() { return DLDataType{kDLInt, 64, 1}; }
inline DLDataType Bool() { return DLDataType{BP_DTYPE_CODE_BOOL, 8, 1}; }

// A view over a device buffer. Owns the buffer when `owner` is set.
struct DevTensor {
  void* mem = nullptr;
  size_t bytes = 0;
  bool owner = false;
  std::vector<int64_t> shape, strides;
  DLTensor dl{};
  DLTensor* get() {
    dl.data = mem;
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.shape = shape.data();
    dl.strides = strides.data();
    return &dl;
  }
};

class FakeHost {
 public:
  ~FakeHost() { Shutdown(); }
  // Negotiates and runs init on `entry`; returns init's status.
  bp_status_t Init(const bp_plugin_entry_t* entry);
  void Shutdown();

  bp_backend_t& backend() { return backend_; }
  int32_t device_count();
  bool has_kernel(const std::string& op) const { return kernels_.count(op) != 0; }
  size_t num_kernels() const { return kernels_.size(); }
  static const std::string& last_error();
  static bp_status_t last_code();

  // A contiguous device tensor (uninitialized, or with host data).
  DevTensor Empty(std::vector<int64_t> shape, DLDataType dt, int32_t device = 0);
  template <typename T>
  DevTensor FromHost(std::vector<int64_t> shape, DLDataType dt, const std::vector<T>& data, int32_t device = 0) {
    DevTensor t = Empty(std::move(shape), dt, device);
    if (!data.empty())
      backend_.copy_host_to_device(backend_.backend_data, device, data.data(), t.mem, 0, data.size() * sizeof(T),
                                   nullptr);
    return t;
  }
  // A view of `base`'s buffer with other sizes, strides and element offset.
  static DevTensor View(const DevTensor& base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                        int64_t offset_elems);
  void Free(DevTensor* t);
  // Reads a tensor back element by element in row-major order (any strides).
  template <typename T>
  std::vector<T> ToHost(DevTensor& t, int32_t device = 0) {
    std::vector<T> all(t.bytes / sizeof(T));
    if (!all.empty())
      backend_.copy_device_to_host(backend_.backend_data, device, t.mem, 0, all.data(), t.bytes, nullptr);
    std::vector<T> out;
    int64_t n = 1;
    for (int64_t s : t.shape) n *= s;
    const int64_t base = static_cast<int64_t>(t.dl.byte_offset / sizeof(T));
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = base;
      for (size_t k = t.shape.size(); k-- > 0;) {
        off += (rem % t.shape[k]) * t.strides[k];
        rem /= t.shape[k];
      }
      out.push_back(all[static_cast<size_t>(off)]);
    }
    return out;
  }

  // Calls the kernel registered for `op` on device 0's default stream.
  bp_status_t Call(const std::string& op, std::vector<bp_kernel_arg_t> args, std::vector<DevTensor*> outs,
                   int32_t device = 0);

 private:
  static bp_status_t SetError(bp_status_t code, const char* message);
  static void Log(bp_registrar_t*, int32_t, const char*) {}
  static bp_status_t RegisterKernel(bp_registrar_t* r, const char* op, bp_kernel_fn fn, void* data, uint32_t flags);
  static bp_status_t RegisterFallback(bp_registrar_t*, bp_kernel_fn, void*, uint32_t) { return BP_STATUS_OK; }
  static bp_status_t DefineOp(bp_registrar_t*, const char*, bp_kernel_fn, void*, bp_meta_fn, void*) {
    return BP_STATUS_OK;
  }

  bp_host_api_t api_{};
  bp_backend_t backend_{};
  bool inited_ = false;
  std::map<std::string, std::pair<bp_kernel_fn, void*>> kernels_;
};

// Boxed argument helpers.
bp_kernel_arg_t TensorArg(DevTensor& t);
bp_kernel_arg_t IntArg(int64_t v);
bp_kernel_arg_t DoubleArg(double v);
bp_kernel_arg_t BoolArg(bool v);
bp_kernel_arg_t NoneArg();
bp_kernel_arg_t StrArg(const char* s);
bp_kernel_arg_t IntListArg(const std::vector<int64_t>& v);  // v must outlive the call
bp_kernel_arg_t TensorListArg(const std::vector<const DLTensor*>& v);

}  // namespace bpcl_test
