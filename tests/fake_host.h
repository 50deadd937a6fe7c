// A minimal host for plugin tests: dlopens a plugin, negotiates, runs init
// with a bp_host_api_t whose register_kernel records kernels in a map, and
// calls kernels directly with hand-built DLTensors in the form the kernel
// contract (dispatcher/ops.yaml) describes. No libbackplane needed.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backplane/backend.h"

namespace bp_test {

inline std::string& LastError() {
  static thread_local std::string msg;
  return msg;
}

struct Registered {
  bp_kernel_fn fn = nullptr;
  void* data = nullptr;
};

inline std::map<std::string, Registered>& Kernels() {
  static std::map<std::string, Registered> k;
  return k;
}

inline bp_status_t FakeSetError(bp_status_t code, const char* message) {
  LastError() = message != nullptr ? message : "";
  return code;
}
inline void FakeLog(bp_registrar_t*, int32_t, const char*) {}
inline bp_status_t FakeRegister(bp_registrar_t*, const char* op, bp_kernel_fn fn, void* data, uint32_t) {
  if (op == nullptr || fn == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (Kernels().count(op) != 0) return BP_STATUS_ALREADY_EXISTS;
  Kernels()[op] = Registered{fn, data};
  return BP_STATUS_OK;
}
inline bp_status_t FakeRegisterFallback(bp_registrar_t*, bp_kernel_fn, void*, uint32_t) {
  return BP_STATUS_OK;
}
inline bp_status_t FakeDefineOp(bp_registrar_t*, const char*, bp_kernel_fn, void*, bp_meta_fn, void*) {
  return BP_STATUS_OK;
}

// One loaded plugin. Kernels() holds its registrations.
struct LoadedPlugin {
  void* handle = nullptr;
  bp_host_api_t host{};
  bp_backend_t backend{};
  bp_status_t init_status = BP_STATUS_UNKNOWN;
  uint32_t version = 0;

  explicit LoadedPlugin(const char* path) {
    Kernels().clear();
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return;
    auto entry = reinterpret_cast<bp_plugin_entry_fn>(dlsym(handle, BP_PLUGIN_ENTRY_SYMBOL));
    if (entry == nullptr) return;
    const bp_plugin_entry_t* e = entry();
    version = BP_ABI_VERSION;
    if (e->negotiate(&version) != BP_STATUS_OK) return;
    host.struct_size = sizeof host;
    host.abi_version = version;
    host.set_error = FakeSetError;
    host.log = FakeLog;
    host.register_kernel = FakeRegister;
    host.register_fallback = FakeRegisterFallback;
    host.define_op = FakeDefineOp;
    backend.struct_size = sizeof backend;
    bp_plugin_init_args_t args{};
    args.struct_size = sizeof args;
    args.abi_version = version;
    args.host = &host;
    args.registrar = nullptr;
    args.backend = &backend;
    init_status = e->init(&args);
  }
  ~LoadedPlugin() {
    if (init_status == BP_STATUS_OK && backend.shutdown != nullptr) backend.shutdown(backend.backend_data);
    Kernels().clear();
    // Kept mapped: OpenMP/oneDNN threads may still reference the library.
  }
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

inline bp_kernel_arg_t TArg(const HostTensor& t) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_TENSOR;
  a.u.tensor = &t.dl;
  return a;
}
inline bp_kernel_arg_t IArg(int64_t v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_INT;
  a.u.i = v;
  return a;
}
inline bp_kernel_arg_t DArg(double v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_DOUBLE;
  a.u.d = v;
  return a;
}
inline bp_kernel_arg_t BArg(bool v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_BOOL;
  a.u.b = v ? 1 : 0;
  return a;
}
inline bp_kernel_arg_t SArg(const char* s) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_STRING;
  a.u.str = s;
  return a;
}
inline bp_kernel_arg_t NoneArg() {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_NONE;
  return a;
}
inline bp_kernel_arg_t LArg(const std::vector<int64_t>& v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_INT_LIST;
  a.u.int_list.data = v.data();
  a.u.int_list.size = static_cast<int64_t>(v.size());
  return a;
}

// Calls the kernel registered for `op` with `args` and outputs.
inline bp_status_t CallKernel(const LoadedPlugin& p, const char* op, const std::vector<bp_kernel_arg_t>& args,
                              const std::vector<HostTensor*>& outs) {
  auto it = Kernels().find(op);
  if (it == Kernels().end()) {
    LastError() = std::string("test: no kernel registered for ") + op;
    return BP_STATUS_NOT_FOUND;
  }
  std::vector<DLTensor*> out_ptrs;
  for (HostTensor* t : outs) out_ptrs.push_back(&t->dl);
  bp_kernel_call_t call{};
  call.struct_size = sizeof call;
  call.op_name = op;
  call.args = args.data();
  call.num_args = static_cast<int32_t>(args.size());
  call.num_outputs = static_cast<int32_t>(outs.size());
  call.outputs = out_ptrs.data();
  call.stream = nullptr;
  call.device_index = 0;
  call.kernel_data = it->second.data;
  call.backend_data = p.backend.backend_data;
  LastError().clear();
  return it->second.fn(&call);
}

}  // namespace bp_test
