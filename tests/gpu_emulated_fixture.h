// What the emulated GPU kernel tests share: a host tensor with any strides
// (Tensor, Make), deterministic fills, argument builders and a fixture that
// calls a kernel entry the way the host does. Built with BP_GPU_EMULATE, so
// the kernels' headers bring in the host-thread runtime (gpu_emulator.h).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "fake_host.h"  // the shared kernel-argument builders
#include "kernels/kernel_util.h"
#include "kernels/kernels.h"
#include "kernels/numeric.h"

namespace {

using bp_gpu::BFloat16;
using bp_gpu::Half;

std::string g_error;
inline bp_status_t SetError(bp_status_t code, const char* msg) {
  g_error = msg ? msg : "";
  return code;
}

const DLDataType kF32{kDLFloat, 32, 1}, kF64{kDLFloat, 64, 1}, kF16{kDLFloat, 16, 1}, kBF16{kDLBfloat, 16, 1},
    kI32{kDLInt, 32, 1}, kI64{kDLInt, 64, 1}, kBool{BP_DTYPE_CODE_BOOL, 8, 1}, kU8{kDLUInt, 8, 1};

// A host tensor with arbitrary strides over its own storage.
struct Tensor {
  DLDataType dtype{};
  std::vector<int64_t> shape, strides;
  std::vector<unsigned char> storage;
  DLTensor dl{};

  int64_t numel() const { return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>()); }
  int item() const { return dtype.bits / 8; }
  int64_t Offset(const std::vector<int64_t>& idx) const {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    return off;
  }
  double Get(const std::vector<int64_t>& idx) const { return GetAt(Offset(idx)); }
  void Set(const std::vector<int64_t>& idx, double v) { SetAt(Offset(idx), v); }
  double GetAt(int64_t off) const {
    const unsigned char* p = storage.data() + off * item();
    switch (bp_gpu::DtypeOf(dtype)) {
      case bp_gpu::DType::kFloat32:
        return Load<float>(p);
      case bp_gpu::DType::kFloat64:
        return Load<double>(p);
      case bp_gpu::DType::kFloat16:
        return bp_gpu::HalfBitsToFloat(Load<uint16_t>(p));
      case bp_gpu::DType::kBFloat16:
        return bp_gpu::BFloat16BitsToFloat(Load<uint16_t>(p));
      case bp_gpu::DType::kInt32:
        return Load<int32_t>(p);
      case bp_gpu::DType::kInt64:
        return static_cast<double>(Load<int64_t>(p));
      case bp_gpu::DType::kUInt8:
        return *p;
      case bp_gpu::DType::kBool:
        return *p ? 1.0 : 0.0;
      default:
        return NAN;
    }
  }
  void SetAt(int64_t off, double v) {
    unsigned char* p = storage.data() + off * item();
    switch (bp_gpu::DtypeOf(dtype)) {
      case bp_gpu::DType::kFloat32:
        return Store(p, static_cast<float>(v));
      case bp_gpu::DType::kFloat64:
        return Store(p, v);
      case bp_gpu::DType::kFloat16:
        return Store(p, bp_gpu::FloatToHalfBits(static_cast<float>(v)));
      case bp_gpu::DType::kBFloat16:
        return Store(p, bp_gpu::FloatToBFloat16Bits(static_cast<float>(v)));
      case bp_gpu::DType::kInt32:
        return Store(p, static_cast<int32_t>(v));
      case bp_gpu::DType::kInt64:
        return Store(p, static_cast<int64_t>(v));
      case bp_gpu::DType::kUInt8:
        *p = static_cast<uint8_t>(v);
        return;
      case bp_gpu::DType::kBool:
        *p = v != 0.0;
        return;
      default:
        return;
    }
  }

 private:
  // Unaligned-safe element access (storage is bytes).
  template <typename E>
  static E Load(const unsigned char* p) {
    E e;
    std::memcpy(&e, p, sizeof e);
    return e;
  }
  template <typename E>
  static void Store(unsigned char* p, E e) {
    std::memcpy(p, &e, sizeof e);
  }
};

// Contiguous when `strides` is empty; otherwise storage spans the view.
inline Tensor Make(DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {}) {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  if (strides.empty()) {
    strides.assign(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  }
  t.strides = strides;
  int64_t span = 1;
  for (size_t d = 0; d < shape.size(); ++d) span += (shape[d] - 1) * strides[d];
  t.storage.assign(static_cast<size_t>(span * (dtype.bits / 8)), 0);
  t.dl.data = t.storage.data();
  t.dl.device = DLDevice{kDLCUDA, 0};
  t.dl.ndim = static_cast<int32_t>(shape.size());
  t.dl.dtype = dtype;
  t.dl.shape = t.shape.data();
  t.dl.strides = t.strides.data();
  return t;
}
// DLTensor pointers into vectors must be refreshed after a copy/move.
inline void Fix(Tensor& t) {
  t.dl.data = t.storage.data();
  t.dl.shape = t.shape.data();
  t.dl.strides = t.strides.data();
}

inline void ForEach(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = i;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      idx[d] = r % shape[d];
      r /= shape[d];
    }
    f(idx);
  }
}

inline void FillPattern(Tensor& t, int seed, bool integral = false) {
  int64_t k = 0;
  ForEach(t.shape, [&](const std::vector<int64_t>& idx) {
    const int64_t h = (k++ * 7919 + seed * 104729) % 97;
    t.Set(idx, integral ? static_cast<double>(h % 11 - 5) : (static_cast<double>(h) - 48.0) / 16.0);
  });
}

inline bp_kernel_arg_t TArg(Tensor& t) {
  Fix(t);
  return bp_test::TArg(&t.dl);
}
using bp_test::DArg;
using bp_test::IArg;
using bp_test::LArg;
using bp_test::SArg;

class EmulatedKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.struct_size = sizeof api_;
    api_.set_error = SetError;
    state_.host = &api_;
    g_error.clear();
  }
  bp_status_t Call(bp_kernel_fn fn, const char* op, int32_t op_id, std::vector<bp_kernel_arg_t> args, Tensor& out) {
    Fix(out);
    DLTensor* outs[1] = {&out.dl};
    bp_kernel_call_t call{};
    call.struct_size = sizeof call;
    call.op_name = op;
    call.args = args.data();
    call.num_args = static_cast<int32_t>(args.size());
    call.num_outputs = 1;
    call.outputs = outs;
    call.kernel_data = bp_gpu::OpData(op_id);
    call.backend_data = &state_;
    return fn(&call);
  }
  bp_host_api_t api_{};
  bp_gpu::PluginState state_;
};

inline void ExpectNear(double got, double want, double tol, const std::string& where) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << where;
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << where;
  } else {
    EXPECT_NEAR(got, want, tol + tol * std::fabs(want)) << where;
  }
}

}  // namespace
