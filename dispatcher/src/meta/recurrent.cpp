// Meta functions of lstm_layer and gru_layer: one recurrent layer over every
// time step, ONNX LSTM-14 / GRU-14 semantics with layout 0.
//
//   input [T, B, I], h0 (c0) [D, B, H], w_ih [D, G*H, I], w_hh [D, G*H, H],
//   bias NONE or [D, 2*G*H], direction 0 (forward), 1 (reverse) or
//   2 (bidirectional, D = 2); G = 4 (LSTM) or 3 (GRU).
//   outputs: output [T, B, D*H], h_n [D, B, H] (and c_n for LSTM).
//
// H comes from w_hh (its last dim); every other size is checked against it,
// so a kernel can trust all of them. All tensors share input's dtype: the
// kernels run one precision end to end, as oneDNN's RNN primitives do.
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

struct Layout {
  int input, h0, c0, w_ih, w_hh, bias, direction;  // c0 -1 for GRU
  int gates;
};
constexpr Layout kLstm = {0, 1, 2, 3, 4, 5, 6, 4};
constexpr Layout kGru = {0, 1, -1, 2, 3, 4, 5, 3};

std::string Num(int64_t v) { return std::to_string(v); }

// Requires args[i] to be a tensor of `d` with exactly `want` sizes.
Status RequireShape(const MetaCallInfo& info, const MetaArg* args, int i, DType d, const int64_t* want,
                    int32_t ndim) {
  DType got;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, i, &got));
  const Geometry& g = *args[i].tensor;
  bool same = g.ndim == ndim;
  for (int32_t k = 0; same && k < ndim; ++k) same = g.sizes[k] == want[k];
  if (!same) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, i) + "expected sizes " + SizesText(want, ndim) + ", got " + SizesText(g));
  }
  if (got != d) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected dtype " + DtypeName(d) +
                                                 " (input's), got " + DtypeName(got));
  }
  return Status::Ok();
}

Status RecurrentInfer(const Layout& L, const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, L.input, &d));
  const Geometry& x = *args[L.input].tensor;
  if (x.ndim != 3) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, L.input) + "expected a 3-D tensor [T, B, I], got sizes " + SizesText(x));
  }
  int64_t direction = 0;
  if (Has(info, args, L.direction)) BP_RETURN_IF_ERROR(IntArg(info, args, L.direction, &direction));
  if (direction < 0 || direction > 2) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, L.direction) +
                                                 "expected 0 (forward), 1 (reverse) or 2 (bidirectional), got " +
                                                 Num(direction));
  }
  const int64_t T = x.sizes[0], B = x.sizes[1], I = x.sizes[2], D = direction == 2 ? 2 : 1;
  // H from w_hh [D, G*H, H]: its rank and last dim first, then the full shape.
  DType wd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, L.w_hh, &wd));
  const Geometry& whh = *args[L.w_hh].tensor;
  if (whh.ndim != 3) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, L.w_hh) + "expected a 3-D tensor [D, G*H, H], got sizes " + SizesText(whh));
  }
  const int64_t H = whh.sizes[2], G = L.gates;
  const int64_t w_hh_sizes[3] = {D, G * H, H}, w_ih_sizes[3] = {D, G * H, I}, state[3] = {D, B, H};
  const int64_t bias_sizes[2] = {D, 2 * G * H};
  BP_RETURN_IF_ERROR(RequireShape(info, args, L.w_hh, d, w_hh_sizes, 3));
  BP_RETURN_IF_ERROR(RequireShape(info, args, L.w_ih, d, w_ih_sizes, 3));
  BP_RETURN_IF_ERROR(RequireShape(info, args, L.h0, d, state, 3));
  if (L.c0 >= 0) BP_RETURN_IF_ERROR(RequireShape(info, args, L.c0, d, state, 3));
  if (Has(info, args, L.bias)) BP_RETURN_IF_ERROR(RequireShape(info, args, L.bias, d, bias_sizes, 2));
  RewriteInt(plan, L.direction, direction);
  const int64_t out_sizes[3] = {T, B, D * H};
  plan->num_outputs = L.c0 >= 0 ? 3 : 2;
  plan->no_output_alias = true;
  BP_RETURN_IF_ERROR(SetOutput(info, plan, 0, d, out_sizes, 3, x.device));
  BP_RETURN_IF_ERROR(SetOutput(info, plan, 1, d, state, 3, x.device));
  if (L.c0 >= 0) BP_RETURN_IF_ERROR(SetOutput(info, plan, 2, d, state, 3, x.device));
  return Status::Ok();
}

// lstm_layer(input, h0, c0, w_ih, w_hh, bias, direction)
Status LstmInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  return RecurrentInfer(kLstm, info, args, plan);
}

// gru_layer(input, h0, w_ih, w_hh, bias, direction, linear_before_reset)
Status GruInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  constexpr int kLinearBeforeReset = 6;
  if (Has(info, args, kLinearBeforeReset) && args[kLinearBeforeReset].kind != BP_VALUE_BOOL &&
      args[kLinearBeforeReset].kind != BP_VALUE_INT) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kLinearBeforeReset) + "expected a bool");
  }
  return RecurrentInfer(kGru, info, args, plan);
}

}  // namespace

const MetaFunctions kLstmLayerMeta = {"lstm_layer", LstmInfer, AsIsPrepare};
const MetaFunctions kGruLayerMeta = {"gru_layer", GruInfer, AsIsPrepare};

}  // namespace bp::core::meta
