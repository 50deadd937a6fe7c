// The two operators vendor_sim runs natively: add.Tensor and relu, float32.
// Every other operator, and these two for other dtypes (the kernels answer
// UNIMPLEMENTED before touching memory), run through the core's CPU fallback.
//
// A kernel receives DLTensors whose `data` is an arena handle from
// allocate(); it resolves the handle to an address inside the arena. Inputs
// arrive broadcast to the output's sizes (stride 0) and promoted to one
// dtype; the output may be any strided view (see the KERNEL CONTRACT in
// dispatcher/ops.yaml).
#include <cstring>

#include "vendor_sim.h"

namespace vendor_sim {
namespace {

bool IsFloat32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }

// Address of element 0 of a view, after checking that every element the
// view can reach lies inside its allocation. nullptr if not.
float* Base(State* s, const DLTensor& t) {
  int64_t numel = 1, last = 0;
  for (int d = 0; d < t.ndim; ++d) {
    numel *= t.shape[d];
    if (t.shape[d] > 0) last += (t.shape[d] - 1) * t.strides[d];
  }
  if (numel == 0) return nullptr;
  const size_t span = static_cast<size_t>(last + 1) * sizeof(float);
  return reinterpret_cast<float*>(s->arena.Resolve(t.data, static_cast<size_t>(t.byte_offset), span));
}

// Walks every index of `out`'s sizes; f(out_offset, in_offsets...) in elements.
template <int N, typename F>
void ForEachIndex(const DLTensor& out, const DLTensor* const (&in)[N], F f) {
  int64_t idx[BP_MAX_NDIM] = {};
  int64_t numel = 1;
  for (int d = 0; d < out.ndim; ++d) numel *= out.shape[d];
  for (int64_t i = 0; i < numel; ++i) {
    int64_t o = 0, x[N > 0 ? N : 1] = {};
    for (int d = 0; d < out.ndim; ++d) {
      o += idx[d] * out.strides[d];
      for (int k = 0; k < N; ++k) x[k] += idx[d] * in[k]->strides[d];
    }
    f(o, x);
    for (int d = out.ndim - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
}

bp_status_t Add(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[0].u.tensor;
  const DLTensor* b = call->args[1].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (!IsFloat32(*out)) {
    return Fail(s, BP_STATUS_UNIMPLEMENTED, "add.Tensor", "only float32 runs natively; other dtypes fall back");
  }
  float alpha = 1.0f;
  if (call->num_args > 2) {
    const bp_kernel_arg_t& al = call->args[2];
    if (al.kind == BP_VALUE_INT) alpha = static_cast<float>(al.u.i);
    if (al.kind == BP_VALUE_DOUBLE) alpha = static_cast<float>(al.u.d);
    if (al.kind == BP_VALUE_BOOL) alpha = al.u.b ? 1.0f : 0.0f;
  }
  float* po = Base(s, *out);
  const float* pa = Base(s, *a);
  const float* pb = Base(s, *b);
  if (po == nullptr) return BP_STATUS_OK;  // zero-size
  if (pa == nullptr || pb == nullptr) {
    return Fail(s, BP_STATUS_INVALID_ARGUMENT, "add.Tensor", "a tensor handle is not a live vendor_sim allocation");
  }
  const DLTensor* in[2] = {a, b};
  ForEachIndex<2>(*out, in, [&](int64_t o, const int64_t* x) { po[o] = pa[x[0]] + alpha * pb[x[1]]; });
  return BP_STATUS_OK;
}

bp_status_t Relu(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[0].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (!IsFloat32(*out)) {
    return Fail(s, BP_STATUS_UNIMPLEMENTED, "relu", "only float32 runs natively; other dtypes fall back");
  }
  float* po = Base(s, *out);
  const float* pa = Base(s, *a);
  if (po == nullptr) return BP_STATUS_OK;
  if (pa == nullptr) return Fail(s, BP_STATUS_INVALID_ARGUMENT, "relu", "'self' is not a live vendor_sim allocation");
  const DLTensor* in[1] = {a};
  ForEachIndex<1>(*out, in, [&](int64_t o, const int64_t* x) {
    const float v = pa[x[0]];
    po[o] = (v > 0.0f || v != v) ? v : 0.0f;  // NaN stays NaN, as torch.relu
  });
  return BP_STATUS_OK;
}

}  // namespace

bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, State* state) {
  const struct {
    const char* op;
    bp_kernel_fn fn;
  } kernels[] = {{"add.Tensor", Add}, {"relu", Relu}};
  for (const auto& k : kernels) {
    const bp_status_t st = args->host->register_kernel(args->registrar, k.op, k.fn, state, 0);
    if (st != BP_STATUS_OK) return st;
  }
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
