// The shared fake host (tests/fake_host.h) with device tensors, enough to
// drive the OpenCL plugin through its C ABI in unit tests: allocate and copy
// through the plugin, and call kernels with DLTensors built as the kernel
// contract says (data = cl_mem, byte_offset = view offset, strides in
// elements, never NULL).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fake_host.h"

namespace bpcl_test {

using bp_test::BF16;
using bp_test::Bool;
using bp_test::F16;
using bp_test::F32;
using bp_test::F64;
using bp_test::I32;
using bp_test::I64;
using bp_test::I8;
using bp_test::U8;

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

class FakeHost : public bp_test::FakeHost {
 public:
  int32_t device_count();

  // A contiguous device tensor (uninitialized, or with host data).
  DevTensor Empty(std::vector<int64_t> shape, DLDataType dt, int32_t device = 0);
  template <typename T>
  DevTensor FromHost(std::vector<int64_t> shape, DLDataType dt, const std::vector<T>& data, int32_t device = 0) {
    DevTensor t = Empty(std::move(shape), dt, device);
    if (!data.empty())
      backend().copy_host_to_device(backend().backend_data, device, data.data(), t.mem, 0, data.size() * sizeof(T),
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
      backend().copy_device_to_host(backend().backend_data, device, t.mem, 0, all.data(), t.bytes, nullptr);
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
  // ... on `stream` (NULL: the device's default queue).
  bp_status_t CallOn(bp_stream_t stream, const std::string& op, std::vector<bp_kernel_arg_t> args,
                     std::vector<DevTensor*> outs, int32_t device = 0);

};

// Boxed argument helpers (the shared ones under this suite's names).
inline bp_kernel_arg_t TensorArg(DevTensor& t) { return bp_test::TArg(t.get()); }
inline bp_kernel_arg_t IntArg(int64_t v) { return bp_test::IArg(v); }
inline bp_kernel_arg_t DoubleArg(double v) { return bp_test::DArg(v); }
inline bp_kernel_arg_t BoolArg(bool v) { return bp_test::BArg(v); }
inline bp_kernel_arg_t NoneArg() { return bp_test::NoneArg(); }
inline bp_kernel_arg_t StrArg(const char* s) { return bp_test::SArg(s); }
inline bp_kernel_arg_t IntListArg(const std::vector<int64_t>& v) { return bp_test::LArg(v); }  // v outlives the call
inline bp_kernel_arg_t TensorListArg(const std::vector<const DLTensor*>& v) { return bp_test::TListArg(v); }

}  // namespace bpcl_test
