// The oneDNN path of the CPU convolution (conv.h): plain strided user
// memory, the primitive's own layouts, a primitive cache, constant weights
// kept packed, conv2d_fused's epilogue as post-ops.
#include <omp.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "conv.h"
#include "dnnl_common.h"
#include "packed_weights.h"

namespace bp_cpu {
namespace {

dnnl::memory::dims Dims(const DLTensor& t) { return dnnl::memory::dims(t.shape, t.shape + t.ndim); }
dnnl::memory::dims Strides(const DLTensor& t) {
  dnnl::memory::dims s(t.strides, t.strides + t.ndim);
  for (auto& v : s)
    if (v == 0) v = 1;  // size-1 dims may come with stride 0
  return s;
}

// The same as oneDNN post-ops on DnnlConv's primitive (the residual is
// reordered into its destination first, then summed).
dnnl::post_ops PostOps(const Fused& f) {
  using alg = dnnl::algorithm;
  dnnl::post_ops ops;
  if (f.residual != nullptr) ops.append_sum(1.0f);
  const float a = static_cast<float>(f.alpha), b = static_cast<float>(f.beta);
  switch (f.act) {
    case Act::kNone:
      break;
    case Act::kRelu:
      ops.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f);
      break;
    case Act::kLeakyRelu:
      ops.append_eltwise(1.0f, alg::eltwise_relu, a, 0.0f);
      break;
    case Act::kClip:
      ops.append_eltwise(1.0f, alg::eltwise_clip, a, b);
      break;
    case Act::kHardswish:
      ops.append_eltwise(1.0f, alg::eltwise_hardswish, 0.0f, 0.0f);
      break;
    case Act::kHardsigmoid:  // oneDNN 2.6 has no hardsigmoid: alpha * x + beta, clipped to [0, 1]
      ops.append_eltwise(1.0f, alg::eltwise_linear, a, b);
      ops.append_eltwise(1.0f, alg::eltwise_clip, 0.0f, 1.0f);
      break;
    case Act::kSigmoid:
      ops.append_eltwise(1.0f, alg::eltwise_logistic, 0.0f, 0.0f);
      break;
    case Act::kSilu:
      ops.append_eltwise(1.0f, alg::eltwise_swish, 1.0f, 0.0f);
      break;
    case Act::kGelu:
      ops.append_eltwise(1.0f, alg::eltwise_gelu_erf, 0.0f, 0.0f);
      break;
  }
  return ops;
}

// Convolution primitives by everything that shapes them. Creating the
// primitive descriptor on every call cost 5-10 us, more than the whole
// convolution of a squeeze-excitation block's 1 x 1 image (mobilenet_v3
// runs 18 of those). The operands' user layouts are kept with it, so a call
// that hits the cache builds no descriptor. Primitives run with a user
// scratchpad, so one cached primitive may execute on several host threads at
// once.
struct CachedConv {
  dnnl::convolution_forward prim;
  dnnl::memory::desc src, weights, dst, scratchpad;  // the primitive's layouts
  dnnl::memory::desc x_user, w_user, y_user, bias;   // the operands' (bias: empty without one)
};

PrimitiveCache<CachedConv>& GetConvCache() {
  static auto* cache = new PrimitiveCache<CachedConv>;
  return *cache;
}

template <typename V>
void Append(std::string* key, const V& v) {
  key->append(reinterpret_cast<const char*>(&v), sizeof v);
}
void AppendTensor(std::string* key, const DLTensor* t) {
  if (t == nullptr) {
    key->push_back('-');
    return;
  }
  key->append(reinterpret_cast<const char*>(t->shape), sizeof(int64_t) * static_cast<size_t>(t->ndim));
  key->append(reinterpret_cast<const char*>(t->strides), sizeof(int64_t) * static_cast<size_t>(t->ndim));
  key->push_back('|');
}

// Builds the primitive for `c` (a cache miss).
std::shared_ptr<CachedConv> MakeConv(const Conv& c, dnnl::memory::data_type dt, const Fused* fused) {
  using md = dnnl::memory::desc;
  using tag = dnnl::memory::format_tag;
  const DLTensor &x = *c.x, &w = *c.w, &y = *c.y;
  auto prim = std::make_shared<CachedConv>();
  prim->x_user = md(Dims(x), dt, Strides(x));
  prim->y_user = md(Dims(y), dt, Strides(y));
  if (c.groups == 1) {
    prim->w_user = md(Dims(w), dt, Strides(w));
  } else {
    const int64_t ocg = w.shape[0] / c.groups;
    prim->w_user = md({c.groups, ocg, w.shape[1], w.shape[2], w.shape[3]}, dt,
                      {w.strides[0] * ocg, w.strides[0], w.strides[1], w.strides[2], w.strides[3]});
  }
  if (c.bias != nullptr) prim->bias = md({c.bias->shape[0]}, dt, {c.bias->strides[0] == 0 ? 1 : c.bias->strides[0]});
  // float32, ungrouped, channels in multiples of 16: activations in
  // nChw16c (the jit kernel's layout, as libtorch asks). Left to oneDNN
  // (tag::any) it picks the nhwc brgconv kernel, whose weight layout takes
  // about twice as long to reorder from the plain weights on every call:
  // resnet18 batch 1 spends 8.5-9.2 ms per run reordering weights that way
  // against 4.8 ms, batch 8 431 ms in oneDNN against 381 ms (DNNL_VERBOSE=1,
  // one thread; docs/benchmarks.md, "Real models beside torch").
  // A channels-last (NHWC) input and output stay as they are: oneDNN's NHWC
  // kernels take them without reorders (the output follows the input's
  // layout: the conv2d meta function).
  const bool nhwc = x.shape[1] > 1 && x.strides[1] == 1 && y.shape[1] > 1 && y.strides[1] == 1;
  const bool blocked16 =
      !nhwc && dt == dnnl::memory::data_type::f32 && c.groups == 1 && x.shape[1] % 16 == 0 && y.shape[1] % 16 == 0;
  const tag act = blocked16 ? tag::aBcd16b : nhwc ? tag::acdb : tag::any;
  const md x_any(Dims(x), dt, act), y_any(Dims(y), dt, act), w_any(prim->w_user.dims(), dt, tag::any);
  const dnnl::memory::dims strides = {c.stride[0], c.stride[1]};
  const dnnl::memory::dims dilates = {c.dil[0] - 1, c.dil[1] - 1};
  const dnnl::memory::dims pad = {c.pad[0], c.pad[1]};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (fused != nullptr) attr.set_post_ops(PostOps(*fused));
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  const dnnl::convolution_forward::primitive_desc pd =
      c.bias != nullptr
          ? dnnl::convolution_forward::primitive_desc(
                dnnl::convolution_forward::desc(kind, alg, x_any, w_any, prim->bias, y_any, strides, dilates, pad, pad),
                attr, Engine())
          : dnnl::convolution_forward::primitive_desc(
                dnnl::convolution_forward::desc(kind, alg, x_any, w_any, y_any, strides, dilates, pad, pad), attr,
                Engine());
  prim->prim = dnnl::convolution_forward(pd);
  prim->src = pd.src_desc();
  prim->weights = pd.weights_desc();
  prim->dst = pd.dst_desc();
  prim->scratchpad = pd.scratchpad_desc();
  return prim;
}

std::shared_ptr<CachedConv> GetConv(const Conv& c, dnnl::memory::data_type dt, const Fused* fused) {
  thread_local std::string key;  // its capacity stays: a cache hit allocates nothing
  key.clear();
  Append(&key, dt);
  Append(&key, omp_get_max_threads());  // a primitive keeps its creator's team size
  AppendTensor(&key, c.x);
  AppendTensor(&key, c.w);
  AppendTensor(&key, c.y);
  AppendTensor(&key, c.bias);
  for (int k = 0; k < 2; ++k) {
    Append(&key, c.stride[k]);
    Append(&key, c.pad[k]);
    Append(&key, c.dil[k]);
  }
  Append(&key, c.groups);
  if (fused != nullptr) {
    key.push_back(fused->residual != nullptr ? 'r' : 'f');
    Append(&key, fused->act);
    Append(&key, fused->alpha);
    Append(&key, fused->beta);
  }
  if (std::shared_ptr<CachedConv> hit = GetConvCache().Find(key)) return hit;
  std::shared_ptr<CachedConv> prim = MakeConv(c, dt, fused);
  GetConvCache().Insert(key, prim);
  return prim;
}

}  // namespace

void DnnlConv(const Conv& c, dnnl::memory::data_type dt, const Fused* fused) {
  using md = dnnl::memory::desc;
  const DLTensor &x = *c.x, &w = *c.w, &y = *c.y;
  // A squeeze-excitation block's 1 x 1 convolutions and other small ones
  // run on the calling thread (the primitive is keyed by the team size).
  const int64_t macs = y.shape[0] * y.shape[1] * y.shape[2] * y.shape[3] * w.shape[1] * w.shape[2] * w.shape[3];
  const SingleThreadScope single(macs < kDnnlParallelMacs);
  std::shared_ptr<CachedConv> prim = GetConv(c, dt, fused);
  thread_local dnnl::stream s(Engine());  // in-order, waited for below: reusable
  auto prepare = [&](const md& user, const md& want, void* ptr, int slot) {
    dnnl::memory m = OperandMemory(prim, slot, user, ptr);
    if (want == user) return m;
    dnnl::memory r(want, Engine());
    dnnl::reorder(m, r).execute(s, m, r);
    return r;
  };
  dnnl::memory xm = prepare(prim->x_user, prim->src, DataPtr(x), DNNL_ARG_SRC);
  // Constant weights are reordered once and kept (packed_weights.h).
  dnnl::memory wm = c.weight_id != 0 && prim->weights != prim->w_user
                        ? PackedWeights(c.weight_id, prim->w_user, DataPtr(w), prim->weights, Engine(), s)
                        : prepare(prim->w_user, prim->weights, DataPtr(w), DNNL_ARG_WEIGHTS);
  const bool direct_dst = prim->dst == prim->y_user;
  dnnl::memory y_mem = OperandMemory(prim, DNNL_ARG_DST, prim->y_user, DataPtr(y));
  dnnl::memory ym = direct_dst ? y_mem : dnnl::memory(prim->dst, Engine());
  if (fused != nullptr && fused->residual != nullptr) {  // the sum post-op adds what dst holds
    const DLTensor& r = *fused->residual;
    if (direct_dst) {
      // y is the destination as it is: the residual copied in by the
      // backend's own strided copy (no reorder primitive to create per call).
      if (CopyTensor(y, r) != BP_STATUS_OK) throw dnnl::error(dnnl_unimplemented, "residual copy");
    } else {
      dnnl::memory rm(md(Dims(r), dt, Strides(r)), Engine(), DataPtr(r));
      dnnl::reorder(rm, ym).execute(s, rm, ym);
    }
  }
  // The argument map keeps its nodes from call to call on this thread.
  thread_local std::unordered_map<int, dnnl::memory> args;
  args[DNNL_ARG_SRC] = xm;
  args[DNNL_ARG_WEIGHTS] = wm;
  args[DNNL_ARG_DST] = ym;
  if (c.bias != nullptr) {
    args[DNNL_ARG_BIAS] = OperandMemory(prim, DNNL_ARG_BIAS, prim->bias, DataPtr(*c.bias));
  } else {
    args.erase(DNNL_ARG_BIAS);
  }
  args[DNNL_ARG_SCRATCHPAD] =
      OperandMemory(prim, DNNL_ARG_SCRATCHPAD, prim->scratchpad, ScratchpadBuffer(prim->scratchpad.get_size()));
  prim->prim.execute(s, args);
  for (auto& kv : args) kv.second = dnnl::memory();  // hold no operand past the call
  if (!direct_dst) dnnl::reorder(ym, y_mem).execute(s, ym, y_mem);
  s.wait();
}

}  // namespace bp_cpu
