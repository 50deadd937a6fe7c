// lstm_layer and gru_layer: one oneDNN RNN primitive per layer (all time
// steps, both directions), float32, forward inference.
//
// ONNX's weights [D, G*H, I] become oneDNN's ldigo [1, D, I, G, H] with the
// gates in oneDNN's order (LSTM i, f, c, o against ONNX's i, o, f, c; GRU's
// u, r, o is ONNX's z, r, h), then are reordered to the layout the primitive
// asks for. Constant weights do both once (packed_weights.h). The bias is
// small and rebuilt per call: LSTM and GRU sum Wb and Rb per gate;
// linear-before-reset GRU keeps Rb of the candidate gate as a fourth gate.
// Primitives are built once per shape and kept: creating a primitive
// descriptor costs more than a whole step of these small layers.
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common.h"
#include "dnnl_common.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "packed_weights.h"

namespace bp_cpu {
namespace {

using md = dnnl::memory::desc;
using tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;

enum class Cell { kLstm, kGru, kLbrGru };

// The ONNX gate read for each oneDNN gate.
const int kLstmGates[4] = {0, 2, 3, 1};
const int kGruGates[3] = {0, 1, 2};

struct Shape {
  Cell cell;
  int direction;  // 0 forward, 1 reverse, 2 bidirectional
  int64_t T, B, I, H;
  int threads;  // the OpenMP team size: a primitive keeps its creator's
  bool operator<(const Shape& o) const {
    return std::tie(cell, direction, T, B, I, H, threads) <
           std::tie(o.cell, o.direction, o.T, o.B, o.I, o.H, o.threads);
  }
  int64_t D() const { return direction == 2 ? 2 : 1; }
  int64_t G() const { return cell == Cell::kLstm ? 4 : 3; }
  int64_t BiasGates() const { return cell == Cell::kLbrGru ? 4 : G(); }
};

struct Primitive {
  dnnl::primitive prim;
  bool reference = false;  // oneDNN's reference implementation ("ref" in impl_info_str)
  md src_layer, src_iter, src_iter_c, w_layer, w_iter, bias, dst_layer, dst_iter, dst_iter_c, scratch;
};

Primitive Build(const Shape& s) {
  const int64_t D = s.D(), G = s.G();
  const md src_layer({s.T, s.B, s.I}, kF32, tag::tnc), dst_layer({s.T, s.B, D * s.H}, kF32, tag::tnc);
  const md iter({1, D, s.B, s.H}, kF32, tag::ldnc);
  const md w_layer({1, D, s.I, G, s.H}, kF32, tag::any), w_iter({1, D, s.H, G, s.H}, kF32, tag::any);
  const md bias({1, D, s.BiasGates(), s.H}, kF32, tag::ldgo);
  const auto dir = s.direction == 0   ? dnnl::rnn_direction::unidirectional_left2right
                   : s.direction == 1 ? dnnl::rnn_direction::unidirectional_right2left
                                      : dnnl::rnn_direction::bidirectional_concat;
  const auto inference = dnnl::prop_kind::forward_inference;
  // A user scratchpad: one primitive may run on several host threads at once.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  Primitive p;
  auto keep = [&p](const auto& pd) {
    p.reference = std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
    p.src_layer = pd.src_layer_desc();
    p.src_iter = pd.src_iter_desc();
    p.w_layer = pd.weights_layer_desc();
    p.w_iter = pd.weights_iter_desc();
    p.bias = pd.bias_desc();
    p.dst_layer = pd.dst_layer_desc();
    p.dst_iter = pd.dst_iter_desc();
    p.scratch = pd.scratchpad_desc();
  };
  if (s.cell == Cell::kLstm) {
    dnnl::lstm_forward::primitive_desc pd(
        dnnl::lstm_forward::desc(inference, dir, src_layer, iter, iter, w_layer, w_iter, bias, dst_layer, iter, iter),
        attr, Engine());
    keep(pd);
    p.src_iter_c = pd.src_iter_c_desc();
    p.dst_iter_c = pd.dst_iter_c_desc();
    p.prim = dnnl::lstm_forward(pd);
  } else if (s.cell == Cell::kGru) {
    dnnl::gru_forward::primitive_desc pd(
        dnnl::gru_forward::desc(inference, dir, src_layer, iter, w_layer, w_iter, bias, dst_layer, iter), attr,
        Engine());
    keep(pd);
    p.prim = dnnl::gru_forward(pd);
  } else {
    dnnl::lbr_gru_forward::primitive_desc pd(
        dnnl::lbr_gru_forward::desc(inference, dir, src_layer, iter, w_layer, w_iter, bias, dst_layer, iter), attr,
        Engine());
    keep(pd);
    p.prim = dnnl::lbr_gru_forward(pd);
  }
  return p;
}

// The primitive of shape `s`, built on first use. Throws dnnl::error.
const Primitive& PrimitiveFor(const Shape& s) {
  static std::mutex mu;
  static std::map<Shape, Primitive> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(s);
  if (it == cache.end()) it = cache.emplace(s, Build(s)).first;
  return it->second;  // std::map nodes do not move
}

inline float At(const DLTensor& t, int64_t a, int64_t b, int64_t c) {
  return *reinterpret_cast<const float*>(DataPtr(t) + (a * t.strides[0] + b * t.strides[1] + c * t.strides[2]) * 4);
}

// ONNX w [D, G*H, K] (any strides) as plain ldigo [1, D, K, G, H], oneDNN's gate order.
dnnl::memory PlainWeights(const DLTensor& w, const Shape& s, int64_t K) {
  const int64_t D = s.D(), G = s.G(), H = s.H;
  const int* gates = s.cell == Cell::kLstm ? kLstmGates : kGruGates;
  dnnl::memory m(md({1, D, K, G, H}, kF32, tag::ldigo), Engine());
  float* out = static_cast<float*>(m.get_data_handle());
  for (int64_t d = 0; d < D; ++d)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t row = gates[g] * H + h;
        for (int64_t k = 0; k < K; ++k) out[((d * K + k) * G + g) * H + h] = At(w, d, row, k);
      }
  return m;
}

// The primitive's weights from ONNX's w: packed once when w is constant.
dnnl::memory Weights(const bp_kernel_call_t* call, int arg, const Shape& s, int64_t K, const md& want,
                     dnnl::stream& stream) {
  const DLTensor& w = *bp_kit_tensor_arg(call, arg);
  auto plain = [&] { return PlainWeights(w, s, K); };
  const uint64_t id = bp_kit_constant_id(call, arg);
  if (id != 0) {
    const md source({w.shape[0], w.shape[1], w.shape[2]}, kF32, {w.strides[0], w.strides[1], w.strides[2]});
    return PackedWeightsFrom(id, DataPtr(w), source, want, plain, Engine(), stream);
  }
  dnnl::memory p = plain();
  if (p.get_desc() == want) return p;
  dnnl::memory r(want, Engine());
  dnnl::reorder(p, r).execute(stream, p, r);
  return r;
}

// ONNX's bias [D, 2*G*H] (Wb then Rb; NONE: zeros) as ldgo [1, D, G', H].
std::vector<float> Bias(const DLTensor* b, const Shape& s) {
  const int64_t D = s.D(), G = s.G(), H = s.H, BG = s.BiasGates();
  const int* gates = s.cell == Cell::kLstm ? kLstmGates : kGruGates;
  std::vector<float> out(static_cast<size_t>(D * BG * H), 0.0f);
  if (b == nullptr) return out;
  auto at = [&](int64_t d, int64_t k) {
    return *reinterpret_cast<const float*>(DataPtr(*b) + (d * b->strides[0] + k * b->strides[1]) * 4);
  };
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t g = 0; g < G; ++g)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t wb = gates[g] * H + h, rb = G * H + wb;
        // Linear-before-reset keeps the candidate's Rb apart (gate 3).
        const bool apart = s.cell == Cell::kLbrGru && g == 2;
        out[static_cast<size_t>((d * BG + g) * H + h)] = at(d, wb) + (apart ? 0.0f : at(d, rb));
      }
    if (s.cell == Cell::kLbrGru)
      for (int64_t h = 0; h < H; ++h) out[static_cast<size_t>((d * BG + 3) * H + h)] = at(d, G * H + 2 * H + h);
  }
  return out;
}

bool IsContiguous(const DLTensor& t) {
  int64_t expect = 1;
  for (int k = t.ndim - 1; k >= 0; --k) {
    if (t.shape[k] != 1 && t.strides[k] != expect) return false;
    expect *= t.shape[k];
  }
  return true;
}

// A dense row-major float32 view of `t`: itself, or a copy kept in `buf`
// (oneDNN's RNN primitives take plain layouts only). Inputs are copied in
// (`load`); outputs are written there and copied back after the primitive.
struct Dense {
  DLTensor view;
  int64_t strides[3];
  std::vector<float> buf;
  Dense(const DLTensor& t, bool load) : view(t) {
    if (IsContiguous(t)) return;
    buf.resize(static_cast<size_t>(Numel(t)));
    int64_t s = 1;
    for (int k = t.ndim - 1; k >= 0; --k) {
      strides[k] = s;
      s *= t.shape[k];
    }
    view.data = buf.data();
    view.byte_offset = 0;
    view.strides = strides;
    if (load) CopyTensor(view, t);  // cannot fail: same dtype and sizes
  }
  Dense(const Dense&) = delete;
  bool copied() const { return !buf.empty(); }
  void* data() const { return DataPtr(view); }
};

bp_status_t Run(const bp_kernel_call_t* call, Cell cell, int a_x, int a_h0, int a_c0, int a_wih, int a_whh, int a_bias,
                int a_dir) {
  const DLTensor* x = bp_kit_tensor_arg(call, a_x);
  const DLTensor* h0 = bp_kit_tensor_arg(call, a_h0);
  const DLTensor* c0 = a_c0 >= 0 ? bp_kit_tensor_arg(call, a_c0) : nullptr;
  const DLTensor* wih = bp_kit_tensor_arg(call, a_wih);
  const DLTensor* whh = bp_kit_tensor_arg(call, a_whh);
  if (x == nullptr || h0 == nullptr || wih == nullptr || whh == nullptr || (a_c0 >= 0 && c0 == nullptr))
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected the input, initial state and weight tensors");
  if (DtypeOf(x->dtype) != DType::kFloat32) return FailDtype(call, *x);
  const int num_out = a_c0 >= 0 ? 3 : 2;
  Shape s{cell,
          static_cast<int>(bp_kit_int_arg(call, a_dir, 0)),
          x->shape[0],
          x->shape[1],
          x->shape[2],
          whh->shape[2],
          omp_get_max_threads()};
  const DLTensor &y = *call->outputs[0], &hn = *call->outputs[1];
  if (Numel(hn) == 0) return BP_STATUS_OK;  // no batch or no hidden units: nothing to write
  if (s.T == 0) {                           // no step: the final state is the initial one
    bp_status_t st = CopyTensor(hn, *h0);
    if (st == BP_STATUS_OK && c0 != nullptr) st = CopyTensor(*call->outputs[2], *c0);
    return st;
  }
  try {
    // oneDNN's reference RNN (the only lbr_gru it has here) ran the GRU net
    // of docs/benchmarks.md 2.3x slower on two threads than on one: where
    // it is the implementation and a step is small, the layer runs on the
    // calling thread, as small matmuls do. (Its LSTM gains from threads.)
    const int64_t step_macs = s.D() * s.B * s.G() * s.H * (s.I + s.H);
    const bool single = s.threads > 1 && step_macs < kDnnlParallelMacs && PrimitiveFor(s).reference;
    if (single) s.threads = 1;
    const SingleThreadScope single_thread(single);
    const Primitive& p = PrimitiveFor(s);
    dnnl::stream stream(Engine());
    const Dense dx(*x, true), dh0(*h0, true);
    Dense dy(y, false), dhn(hn, false);
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC_LAYER, dnnl::memory(p.src_layer, Engine(), dx.data())},
        {DNNL_ARG_SRC_ITER, dnnl::memory(p.src_iter, Engine(), dh0.data())},
        {DNNL_ARG_WEIGHTS_LAYER, Weights(call, a_wih, s, s.I, p.w_layer, stream)},
        {DNNL_ARG_WEIGHTS_ITER, Weights(call, a_whh, s, s.H, p.w_iter, stream)},
        {DNNL_ARG_DST_LAYER, dnnl::memory(p.dst_layer, Engine(), dy.data())},
        {DNNL_ARG_DST_ITER, dnnl::memory(p.dst_iter, Engine(), dhn.data())}};
    std::vector<float> bias = Bias(bp_kit_tensor_arg(call, a_bias), s);
    args[DNNL_ARG_BIAS] = dnnl::memory(p.bias, Engine(), bias.data());
    Dense dc0(c0 != nullptr ? *c0 : *h0, c0 != nullptr), dcn(num_out == 3 ? *call->outputs[2] : hn, false);
    if (c0 != nullptr) {
      args[DNNL_ARG_SRC_ITER_C] = dnnl::memory(p.src_iter_c, Engine(), dc0.data());
      args[DNNL_ARG_DST_ITER_C] = dnnl::memory(p.dst_iter_c, Engine(), dcn.data());
    }
    args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(p.scratch, Engine(), ScratchpadBuffer(p.scratch.get_size()));
    p.prim.execute(stream, args);
    stream.wait();
    bp_status_t st = BP_STATUS_OK;
    if (dy.copied()) st = CopyTensor(y, dy.view);
    if (st == BP_STATUS_OK && dhn.copied()) st = CopyTensor(hn, dhn.view);
    if (st == BP_STATUS_OK && c0 != nullptr && dcn.copied()) st = CopyTensor(*call->outputs[2], dcn.view);
    return st;
  } catch (const dnnl::error& e) {
    return Fail(call, BP_STATUS_UNIMPLEMENTED, "oneDNN has no RNN primitive for T=%lld B=%lld I=%lld H=%lld: %s",
                static_cast<long long>(s.T), static_cast<long long>(s.B), static_cast<long long>(s.I),
                static_cast<long long>(s.H), e.what());
  } catch (const std::bad_alloc&) {
    return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
}

bp_status_t LstmLayer(const bp_kernel_call_t* call) {
  return Run(call, Cell::kLstm, BP_ARG_LSTM_LAYER_INPUT, BP_ARG_LSTM_LAYER_H0, BP_ARG_LSTM_LAYER_C0,
             BP_ARG_LSTM_LAYER_W_IH, BP_ARG_LSTM_LAYER_W_HH, BP_ARG_LSTM_LAYER_BIAS, BP_ARG_LSTM_LAYER_DIRECTION);
}

bp_status_t GruLayer(const bp_kernel_call_t* call) {
  const Cell cell = bp_kit_bool_arg(call, BP_ARG_GRU_LAYER_LINEAR_BEFORE_RESET, 0) ? Cell::kLbrGru : Cell::kGru;
  return Run(call, cell, BP_ARG_GRU_LAYER_INPUT, BP_ARG_GRU_LAYER_H0, -1, BP_ARG_GRU_LAYER_W_IH, BP_ARG_GRU_LAYER_W_HH,
             BP_ARG_GRU_LAYER_BIAS, BP_ARG_GRU_LAYER_DIRECTION);
}

const KernelDef kKernels[] = {
    {BP_OP_LSTM_LAYER, LstmLayer, nullptr},
    {BP_OP_GRU_LAYER, GruLayer, nullptr},
};

}  // namespace

const KernelDef* RecurrentKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
