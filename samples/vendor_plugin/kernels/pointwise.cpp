// The three operators vendor_sim runs natively: add.Tensor and relu, for the
// plain C dtypes (float32, float64, int8, uint8, int32, int64, bool); relu
// also for float16/bfloat16 (a sign-bit test needs no arithmetic); exp for
// float32 only. register.cpp declares these dtypes (ABI 1.3 dtype masks), so
// the host routes every other dtype to the CPU fallback before it allocates
// anything, and casts an int32 exp to float32 for the kernel (the cast
// route). On an older host the kernels still decline what they lack
// (UNIMPLEMENTED before touching memory), as every kernel may.
//
// Each kernel checks its arguments and resolves its views when it is called,
// then queues the arithmetic on its stream (call->stream, queue.h): it runs
// at once on the synchronous device, later on the stream's device thread in
// async mode.
#include <cmath>
//
// A kernel receives DLTensors whose `data` is an arena handle from
// allocate(); it resolves the handle to an address inside the arena. Inputs
// arrive broadcast to the output's sizes (stride 0) and promoted to one
// dtype; the output may be any strided view (see the KERNEL CONTRACT in
// abi/ops.yaml).
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <string>
#include <vector>

#include "kernels.h"
#include "stream.h"  // kNotAStream

namespace vendor_sim {
namespace {

// A view resolved at launch: the address of element 0 and the layout, copied
// out of the call, which the host owns only until the kernel returns (the
// work may run later, on the device thread: queue.h).
template <typename T>
struct View {
  T* base = nullptr;  // nullptr: no elements
  int32_t ndim = 0;
  int64_t shape[BP_MAX_NDIM] = {};
  int64_t strides[BP_MAX_NDIM] = {};
};

// The view of `t`, after checking that every element it can reach lies inside
// its allocation. False if not (a handle that is not live); an empty view
// resolves with base nullptr.
template <typename T>
bool Resolve(State* s, const DLTensor& t, View<T>* v) {
  int64_t numel = 1, last = 0;
  v->ndim = t.ndim;
  for (int d = 0; d < t.ndim; ++d) {
    v->shape[d] = t.shape[d];
    v->strides[d] = t.strides[d];
    numel *= t.shape[d];
    if (t.shape[d] > 0) last += (t.shape[d] - 1) * t.strides[d];
  }
  if (numel == 0) return true;
  const size_t span = static_cast<size_t>(last + 1) * sizeof(T);
  v->base = reinterpret_cast<T*>(s->arena.Resolve(t.data, static_cast<size_t>(t.byte_offset), span));
  return v->base != nullptr;
}

// Walks every index of `out`'s sizes; f(out_offset, in_offsets...) in elements.
template <int N, typename To, typename Ti, typename F>
void ForEachIndex(const View<To>& out, const View<Ti> (&in)[N], F f) {
  int64_t idx[BP_MAX_NDIM] = {};
  int64_t numel = 1;
  for (int d = 0; d < out.ndim; ++d) numel *= out.shape[d];
  for (int64_t i = 0; i < numel; ++i) {
    int64_t o = 0, x[N > 0 ? N : 1] = {};
    for (int d = 0; d < out.ndim; ++d) {
      o += idx[d] * out.strides[d];
      for (int k = 0; k < N; ++k) x[k] += idx[d] * in[k].strides[d];
    }
    f(o, x);
    for (int d = out.ndim - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Queues, instead of the kernel, work that faults on the device (faults.h,
// BP_VENDOR_SIM_FAULT_OP): when the queue reaches it, the queue's sticky
// fault names the operator and the outputs are poisoned; nothing is written.
// The launch itself succeeds, as a real asynchronous fault's does.
bp_status_t LaunchFaulting(const bp_kernel_call_t* call, State* s, Queue* q) {
  std::string fault;
  std::vector<const void*> outputs;
  try {
    fault = std::string("device fault in operator '") + call->op_name +
            "' (injected by BP_VENDOR_SIM_FAULT_OP); its outputs were not written";
    for (int32_t k = 0; k < call->num_outputs; ++k) outputs.push_back(call->outputs[k]->data);
  } catch (...) {
    return KernelFail(call, BP_STATUS_OUT_OF_MEMORY, "cannot queue the kernel");
  }
  if (!q->TrySubmit(
          [s, q, fault, outputs] {
            for (const void* o : outputs) s->faults.Poison(o, fault);
            q->SetFault(fault);
          },
          ItemKind::kKernel))
    return KernelFail(call, BP_STATUS_OUT_OF_MEMORY, "cannot queue the kernel");
  return BP_STATUS_OK;
}

// Queues `work` on the queue of call->stream (stream_table.h: NULL is the
// default stream, any other value a stream from stream_create), as a kernel
// (ItemKind::kKernel: the modelled kernel duration applies). INVALID_ARGUMENT
// for a stream that is not ours, OUT_OF_MEMORY if it cannot be queued.
template <typename F>
bp_status_t Launch(const bp_kernel_call_t* call, State* s, F&& work) {
  Queue* q = s->streams.Find(call->stream);
  if (q == nullptr) return KernelFail(call, BP_STATUS_INVALID_ARGUMENT, kNotAStream);
  if (!s->faults.fault_op.empty() && call->op_name != nullptr && s->faults.fault_op == call->op_name)
    return LaunchFaulting(call, s, q);
  if (!q->TrySubmit(std::forward<F>(work), ItemKind::kKernel))
    return KernelFail(call, BP_STATUS_OUT_OF_MEMORY, "cannot queue the kernel");
  return BP_STATUS_OK;
}

// Calls f(T{}) with the C type of `t`'s dtype; false for float16/bfloat16.
template <typename F>
bool WithPlainType(const DLTensor& t, F f) {
  switch (t.dtype.code) {
    case kDLFloat:
      if (t.dtype.bits == 32) return f(float{}), true;
      if (t.dtype.bits == 64) return f(double{}), true;
      return false;
    case kDLInt:
      if (t.dtype.bits == 8) return f(int8_t{}), true;
      if (t.dtype.bits == 32) return f(int32_t{}), true;
      if (t.dtype.bits == 64) return f(int64_t{}), true;
      return false;
    case kDLUInt:
      return f(uint8_t{}), true;
    case BP_DTYPE_CODE_BOOL:
      return f(bool{}), true;
    default:
      return false;
  }
}

// self + alpha * other, wrapping for integers and "or" for bool, as torch.add.
template <typename T>
T AddOne(T x, T y, double alpha_d, int64_t alpha_i) {
  if constexpr (std::is_same<T, bool>::value) {
    return x || (alpha_i != 0 && y);
  } else if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(static_cast<uint64_t>(x) + static_cast<uint64_t>(alpha_i) * static_cast<uint64_t>(y));
  } else {
    return alpha_d == 1.0 ? x + y : static_cast<T>(x + static_cast<T>(alpha_d) * y);
  }
}

}  // namespace

bp_status_t Add(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[BP_ARG_ADD_TENSOR_SELF].u.tensor;
  const DLTensor* b = call->args[BP_ARG_ADD_TENSOR_OTHER].u.tensor;
  const DLTensor* out = call->outputs[0];
  double alpha_d = 1.0;
  int64_t alpha_i = 1;
  if (call->num_args > BP_ARG_ADD_TENSOR_ALPHA) {
    const bp_kernel_arg_t& al = call->args[BP_ARG_ADD_TENSOR_ALPHA];
    if (al.kind == BP_VALUE_INT) alpha_d = static_cast<double>(alpha_i = al.u.i);
    if (al.kind == BP_VALUE_DOUBLE) alpha_i = static_cast<int64_t>(alpha_d = al.u.d);
    if (al.kind == BP_VALUE_BOOL) alpha_d = static_cast<double>(alpha_i = al.u.b);
  }
  bp_status_t status = BP_STATUS_OK;
  const bool handled = WithPlainType(*out, [&](auto tag) {
    using T = decltype(tag);
    View<T> vo;
    View<const T> in[2];
    if (!Resolve(s, *out, &vo) || !Resolve(s, *a, &in[0]) || !Resolve(s, *b, &in[1])) {
      status = KernelFail(call, BP_STATUS_INVALID_ARGUMENT, "a tensor handle is not a live vendor_sim allocation");
      return;
    }
    if (vo.base == nullptr) return;  // zero-size
    status = Launch(call, s, [vo, in, alpha_d, alpha_i] {
      ForEachIndex<2>(vo, in, [&](int64_t o, const int64_t* x) {
        vo.base[o] = AddOne<T>(in[0].base[x[0]], in[1].base[x[1]], alpha_d, alpha_i);
      });
    });
  });
  if (!handled) {
    // No float16/bfloat16 arithmetic here: hand the call to the CPU fallback.
    return KernelFail(call, BP_STATUS_UNIMPLEMENTED, "float16/bfloat16 are not native; they fall back");
  }
  return status;
}

bp_status_t Relu(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[BP_ARG_RELU_SELF].u.tensor;
  const DLTensor* out = call->outputs[0];
  bp_status_t status = BP_STATUS_OK;
  // Resolves both views and queues body(out, in); false when a handle is bad.
  auto run = [&](auto out_tag, auto body) {
    using T = decltype(out_tag);
    View<T> vo;
    View<const T> in[1];
    if (!Resolve(s, *out, &vo) || !Resolve(s, *a, &in[0])) {
      status = KernelFail(call, BP_STATUS_INVALID_ARGUMENT, "'self' is not a live vendor_sim allocation");
      return;
    }
    if (vo.base == nullptr) return;
    status = Launch(call, s, [vo, in, body] {
      ForEachIndex<1>(vo, in, [&](int64_t o, const int64_t* x) { vo.base[o] = body(in[0].base[x[0]]); });
    });
  };
  const bool handled = WithPlainType(*out, [&](auto tag) {
    using T = decltype(tag);
    run(tag, [](T v) { return (v > T(0) || v != v) ? v : T(0); });  // NaN stays NaN, as torch.relu
  });
  if (!handled) {
    // float16/bfloat16: zero when the sign bit is set, unless NaN.
    const uint16_t exp_mask = out->dtype.code == kDLBfloat ? 0x7f80 : 0x7c00;
    const uint16_t man_mask = out->dtype.code == kDLBfloat ? 0x007f : 0x03ff;
    run(uint16_t{}, [exp_mask, man_mask](uint16_t v) {
      const bool nan = (v & exp_mask) == exp_mask && (v & man_mask) != 0;
      return ((v & 0x8000u) != 0 && !nan) ? uint16_t{0} : v;
    });
  }
  return status;
}

bp_status_t Exp(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[BP_ARG_EXP_SELF].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) {
    return KernelFail(call, BP_STATUS_UNIMPLEMENTED, "only float32 is native; other dtypes fall back");
  }
  View<float> vo;
  View<const float> in[1];
  if (!Resolve(s, *out, &vo) || !Resolve(s, *a, &in[0]))
    return KernelFail(call, BP_STATUS_INVALID_ARGUMENT, "'self' is not a live vendor_sim allocation");
  if (vo.base == nullptr) return BP_STATUS_OK;
  return Launch(call, s, [vo, in] {
    ForEachIndex<1>(vo, in, [&](int64_t o, const int64_t* x) { vo.base[o] = std::exp(in[0].base[x[0]]); });
  });
}

}  // namespace vendor_sim
