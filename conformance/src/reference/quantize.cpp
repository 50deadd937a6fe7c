// quantize_linear, dequantize_linear, matmul_integer and conv_integer:
// samples and naive references from ONNX's QuantizeLinear-13 /
// DequantizeLinear-13 / MatMulInteger-10 / ConvInteger-10 equations. The
// quotient
// x / scale is taken in float32, as ONNX specifies (x and scale are float32),
// so an element whose float32 quotient is exactly a half rounds as the
// device must; everything after it is exact in double.
#include <cmath>
#include <string>
#include <vector>

#include "family.h"

namespace bpc {
namespace {

Domain floats(double lo, double hi) {
  Domain d;
  d.lo = lo;
  d.hi = hi;
  return d;
}
Domain ints(double lo, double hi) {
  Domain d;
  d.ilo = lo;
  d.ihi = hi;
  return d;
}

// One parameter tensor (scale or zero point): 0-D when `len` is 0, else [len].
TensorInput param(DType d, int64_t len, const std::vector<double>& values) {
  TensorInput t;
  t.t.dtype = d;
  if (len > 0) t.t.sizes = {len};
  for (int64_t k = 0; k < (len > 0 ? len : 1); ++k)
    t.t.values.push_back(values[static_cast<size_t>(k) % values.size()]);
  return t;
}

// The size of dim `axis` (negative counts from the end) of `sizes`.
int64_t axis_len(const std::vector<int64_t>& sizes, int64_t axis) {
  const int64_t r = static_cast<int64_t>(sizes.size());
  return sizes[static_cast<size_t>(axis < 0 ? axis + r : axis)];
}

struct QCase {
  const char* desc;
  std::vector<int64_t> sizes;
  int64_t axis;     // per axis: the dim; kPerTensor: one scale
  DType q;          // the quantized dtype (output of quantize; zero point)
  bool zero_point;  // a zero point argument
  bool dtype_arg;   // quantize: pass q as `dtype` too
  Layout layout;
  const char* error;  // nullptr, or what the sample gets wrong
};
constexpr int64_t kPerTensor = -100;
constexpr DType kI8 = DType::kInt8, kU8 = DType::kUInt8;
constexpr Layout kDense = Layout::kContiguous, kTransposed = Layout::kTransposed, kStrided = Layout::kStrided;

// Quantize: x float32. Scales 0.05 over x in [-8, 8] give quotients up to
// +-160: with a zero point of 100 or -3 both ends saturate.
// One case a line:
// clang-format off
const QCase kQuantizeCases[] = {
    {"per tensor, uint8, zero point 100 (saturates both ends)", {3, 4}, kPerTensor, kU8, true, false, kDense, nullptr},
    {"per tensor, int8, zero point -3 (saturates both ends)", {3, 4}, kPerTensor, kI8, true, false, kDense, nullptr},
    {"per tensor, no zero point (uint8 by default)", {2, 5}, kPerTensor, kU8, false, false, kDense, nullptr},
    {"per tensor, no zero point, dtype int8", {2, 5}, kPerTensor, kI8, false, true, kDense, nullptr},
    {"per tensor, zero point and dtype int8 agree", {7}, kPerTensor, kI8, true, true, kDense, nullptr},
    {"per axis 1, int8", {2, 3, 4}, 1, kI8, true, false, kDense, nullptr},
    {"per axis 0, uint8", {4, 5}, 0, kU8, true, false, kDense, nullptr},
    {"per axis -1, int8, no zero point", {2, 3, 4}, -1, kI8, false, true, kDense, nullptr},
    {"per axis 0, uint8, transposed x", {3, 4}, 0, kU8, true, false, kTransposed, nullptr},
    {"per axis 1, uint8, strided x", {3, 6}, 1, kU8, true, false, kStrided, nullptr},
    {"per tensor, 0-D x", {}, kPerTensor, kU8, true, false, kDense, nullptr},
    {"empty x [0, 3], per axis 1", {0, 3}, 1, kI8, true, false, kDense, nullptr},
    {"per tensor, uint8, 70000 elements (threaded)", {70000}, kPerTensor, kU8, true, false, kDense, nullptr},
    {"error: scale length 4 for axis 1 of size 3", {2, 3, 4}, 1, kI8, true, false, kDense, "scale length"},
    {"error: axis 3 of a 3-D x", {2, 3, 4}, 3, kI8, true, false, kDense, "axis"},
    {"error: zero point uint8, dtype int8", {2, 3}, kPerTensor, kI8, true, true, kDense, "zero point dtype"},
    {"error: a scale of 0", {2, 3}, kPerTensor, kU8, true, false, kDense, "zero scale"},
};
// clang-format on

// One case a line:
// clang-format off
const QCase kDequantizeCases[] = {
    {"per tensor, zero point", {3, 4}, kPerTensor, kI8, true, false, kDense, nullptr},
    {"per tensor, no zero point", {2, 5}, kPerTensor, kI8, false, false, kDense, nullptr},
    {"per axis 1", {2, 3, 4}, 1, kI8, true, false, kDense, nullptr},
    {"per axis 0, no zero point", {4, 5}, 0, kI8, false, false, kDense, nullptr},
    {"per axis -1", {2, 3, 4}, -1, kI8, true, false, kDense, nullptr},
    {"per axis 0, transposed x", {3, 4}, 0, kI8, true, false, kTransposed, nullptr},
    {"per tensor, 0-D x", {}, kPerTensor, kI8, true, false, kDense, nullptr},
    {"empty x [3, 0], per axis 0", {3, 0}, 0, kI8, true, false, kDense, nullptr},
    {"per tensor, 70000 elements (threaded)", {70000}, kPerTensor, kI8, true, false, kDense, nullptr},
    {"error: scale length 4 for axis 0 of size 3", {3, 4}, 0, kI8, true, false, kDense, "scale length"},
    {"error: axis -3 of a 2-D x", {3, 4}, -3, kI8, true, false, kDense, "axis"},
    {"error: zero point of another dtype", {3, 4}, kPerTensor, kI8, true, false, kDense, "zero point dtype"},
};
// clang-format on

bool is(const char* error, const char* what) { return error != nullptr && std::string(error) == what; }

// scale and zero point for a case: per tensor one element ([1], or 0-D
// for a 0-D x), per axis one per index of the axis (one too many for the
// "scale length" error; 2 for an axis out of range).
void add_params(const QCase& c, Rng& rng, DType zp_dtype, double zp_lo, double zp_hi, Sample* s) {
  int64_t len = 1;
  if (c.axis != kPerTensor) {
    const int64_t r = static_cast<int64_t>(c.sizes.size());
    len = c.axis >= r || c.axis < -r ? 2 : axis_len(c.sizes, c.axis) + (is(c.error, "scale length") ? 1 : 0);
  } else if (c.sizes.empty()) {
    len = 0;
  }
  std::vector<double> scales = {0.05, 0.1, 0.025, 0.2, 0.075};
  if (is(c.error, "zero scale")) scales = {0.0};
  for (double& v : scales) v = static_cast<double>(static_cast<float>(v));
  s->args.push_back(Arg::tensor_of(param(DType::kFloat32, len, scales)));
  if (c.zero_point) {
    const std::vector<double> zps = random_values(rng, zp_dtype, len > 0 ? len : 1, ints(zp_lo, zp_hi));
    s->args.push_back(Arg::tensor_of(param(zp_dtype, len, zps)));
  } else {
    s->args.push_back(Arg::none());
  }
  s->args.push_back(Arg::int_of(c.axis == kPerTensor ? 1 : c.axis));
}

std::vector<Sample> quantize_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  for (const QCase& c : kQuantizeCases) {
    Sample s;
    s.desc = c.desc;
    s.quick = c.sizes.empty() || numel_of(c.sizes) < 1000;
    s.expect_error = c.error != nullptr;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.sizes, floats(-8, 8), c.layout)));
    const DType zp_dtype = is(c.error, "zero point dtype") ? DType::kUInt8 : c.q;
    const bool u = zp_dtype == DType::kUInt8;
    add_params(c, rng, zp_dtype, u ? 90 : -5, u ? 110 : 5, &s);
    if (c.dtype_arg) s.args.push_back(Arg::dtype_of(c.q));
    out.push_back(std::move(s));
  }
  // Exact halves: x / scale = 2.5 -> 2, 3.5 -> 4, -2.5 -> -2, ... (round half
  // to even), and halves at the saturation bounds.
  const std::vector<double> halves = {1.25, 1.75, -1.25, -0.25, 0.25, 0.75, -0.75, 63.25, 63.75, -64.25, 0.0, -0.0};
  for (DType q : {DType::kInt8, DType::kUInt8}) {
    Sample s;
    s.desc = std::string("halves round to even, scale 0.5, ") + (q == DType::kInt8 ? "int8" : "uint8 zero point 128");
    s.args.push_back(Arg::tensor_of(tensor_of_values(d, halves)));
    s.args.push_back(Arg::tensor_of(param(DType::kFloat32, 1, {0.5})));
    s.args.push_back(q == DType::kInt8 ? Arg::none() : Arg::tensor_of(param(q, 1, {128})));
    s.args.push_back(Arg::int_of(1));
    s.args.push_back(Arg::dtype_of(q));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Sample> dequantize_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  for (const QCase& c : kDequantizeCases) {
    Sample s;
    s.desc = c.desc;
    s.quick = c.sizes.empty() || numel_of(c.sizes) < 1000;
    s.expect_error = c.error != nullptr;
    Domain all;
    all.full_int_range = true;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.sizes, all, c.layout)));
    const DType zp_dtype = is(c.error, "zero point dtype") ? (d == DType::kInt32 ? DType::kInt8 : DType::kInt32) : d;
    add_params(c, rng, zp_dtype, d == DType::kUInt8 ? 100 : -5, d == DType::kUInt8 ? 140 : 5, &s);
    out.push_back(std::move(s));
  }
  return out;
}

// Index of element k's position along `axis` (row-major sizes), or 0 per tensor.
int64_t param_index(const HostTensor& x, const HostTensor& scale, int64_t axis, int64_t k) {
  if (scale.values.size() == 1) return 0;
  const int64_t r = x.ndim();
  if (axis < 0) axis += r;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.sizes[static_cast<size_t>(d)];
  return (k / inner) % x.sizes[static_cast<size_t>(axis)];
}

Expected quantize_reference(const std::string&, const Sample& s) {
  const HostTensor& x = tensor_arg(s, 0);
  const HostTensor& scale = tensor_arg(s, 1);
  const HostTensor* zp = s.args.at(2).kind == Arg::kTensor ? &tensor_arg(s, 2) : nullptr;
  const int64_t axis = s.args.at(3).i;
  DType q = zp != nullptr ? zp->dtype : DType::kUInt8;
  if (s.args.size() > 4 && s.args[4].kind == Arg::kDType) q = s.args[4].dtype;
  const double lo = q == DType::kInt8 ? -128 : 0, hi = q == DType::kInt8 ? 127 : 255;
  HostTensor y;
  y.dtype = q;
  y.sizes = x.sizes;
  y.values.resize(x.values.size());
  for (int64_t k = 0; k < static_cast<int64_t>(x.values.size()); ++k) {
    const int64_t j = param_index(x, scale, axis, k);
    const float quotient =
        static_cast<float>(x.values[static_cast<size_t>(k)]) / static_cast<float>(scale.values[static_cast<size_t>(j)]);
    double v = std::nearbyint(static_cast<double>(quotient));  // the default mode: half to even
    if (zp != nullptr) v += zp->values[static_cast<size_t>(j)];
    y.values[static_cast<size_t>(k)] = v < lo ? lo : v > hi ? hi : v;
  }
  return single_output(std::move(y));
}

Expected dequantize_reference(const std::string&, const Sample& s) {
  const HostTensor& x = tensor_arg(s, 0);
  const HostTensor& scale = tensor_arg(s, 1);
  const HostTensor* zp = s.args.at(2).kind == Arg::kTensor ? &tensor_arg(s, 2) : nullptr;
  const int64_t axis = s.args.at(3).i;
  HostTensor y;
  y.dtype = DType::kFloat32;
  y.sizes = x.sizes;
  y.values.resize(x.values.size());
  for (int64_t k = 0; k < static_cast<int64_t>(x.values.size()); ++k) {
    const int64_t j = param_index(x, scale, axis, k);
    const double z = zp != nullptr ? zp->values[static_cast<size_t>(j)] : 0.0;
    y.values[static_cast<size_t>(k)] = (x.values[static_cast<size_t>(k)] - z) * scale.values[static_cast<size_t>(j)];
  }
  return single_output(std::move(y));
}

// matmul_integer: a of the sample's dtype, b of `b_other` ? the other
// quantized dtype : the same; zero points NONE, one element ('t') or one
// per row / column ('v').
struct MmCase {
  const char* desc;
  std::vector<int64_t> a, b;
  bool b_other;
  char azp, bzp;  // 0, 't' or 'v'
  Layout b_layout;
  const char* error;  // nullptr, "K", "zero point dtype", "zero point length"
};

// One case a line:
// clang-format off
const MmCase kMatmulIntegerCases[] = {
    {"[3, 4] @ [4, 5], zero points per tensor", {3, 4}, {4, 5}, false, 't', 't', kDense, nullptr},
    {"[3, 4] @ [4, 5], b of the other dtype", {3, 4}, {4, 5}, true, 't', 't', kDense, nullptr},
    {"[3, 4] @ [4, 5], zero points per row and per column", {3, 4}, {4, 5}, true, 'v', 'v', kDense, nullptr},
    {"[2, 7] @ [7, 3], no zero points", {2, 7}, {7, 3}, false, 0, 0, kDense, nullptr},
    {"batch broadcast [2, 1, 3, 4] @ [3, 4, 2]", {2, 1, 3, 4}, {3, 4, 2}, false, 't', 'v', kDense, nullptr},
    {"1-D a [4] @ [4, 5]", {4}, {4, 5}, false, 't', 't', kDense, nullptr},
    {"[3, 4] @ 1-D b [4]", {3, 4}, {4}, true, 'v', 't', kDense, nullptr},
    {"transposed b", {3, 6}, {6, 4}, false, 't', 'v', kTransposed, nullptr},
    {"K = 0: zeros", {3, 0}, {0, 2}, false, 't', 't', kDense, nullptr},
    {"empty M", {0, 4}, {4, 3}, false, 0, 't', kDense, nullptr},
    {"[64, 96] @ [96, 80] (threaded)", {64, 96}, {96, 80}, true, 'v', 'v', kDense, nullptr},
    {"error: K 4 and 5", {3, 4}, {5, 2}, false, 0, 0, kDense, "K"},
    {"error: a_zero_point of b's dtype", {3, 4}, {4, 2}, true, 't', 0, kDense, "zero point dtype"},
    {"error: b_zero_point of 3 for N = 2", {3, 4}, {4, 2}, false, 0, 'v', kDense, "zero point length"},
};
// clang-format on

std::vector<Sample> matmul_integer_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  Domain all;
  all.full_int_range = true;
  for (const MmCase& c : kMatmulIntegerCases) {
    const DType bd = c.b_other ? (d == kI8 ? kU8 : kI8) : d;
    Sample s;
    s.desc = c.desc;
    s.expect_error = c.error != nullptr;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.a, all)));
    s.args.push_back(Arg::tensor_of(make_input(rng, bd, c.b, all, c.b_layout)));
    const int64_t M = c.a.size() >= 2 ? c.a[c.a.size() - 2] : 1, N = c.b.size() >= 2 ? c.b.back() : 1;
    auto zp = [&](char kind, DType zd, int64_t len) {
      if (kind == 0) return Arg::none();
      return Arg::tensor_of(make_input(rng, zd, {kind == 't' ? 1 : len}, all));
    };
    s.args.push_back(zp(c.azp, is(c.error, "zero point dtype") ? bd : d, M));
    s.args.push_back(zp(c.bzp, bd, is(c.error, "zero point length") ? N + 1 : N));
    out.push_back(std::move(s));
  }
  return out;
}

// Naive sums of matmul with torch.matmul's 1-D and batch rules, in double:
// exact, every product and sum here being far below 2^53.
Expected matmul_integer_reference(const std::string&, const Sample& s) {
  const HostTensor& a = tensor_arg(s, 0);
  const HostTensor& b = tensor_arg(s, 1);
  const HostTensor* za = s.args.at(2).kind == Arg::kTensor ? &tensor_arg(s, 2) : nullptr;
  const HostTensor* zb = s.args.at(3).kind == Arg::kTensor ? &tensor_arg(s, 3) : nullptr;
  std::vector<int64_t> as = a.sizes, bs = b.sizes;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  std::vector<int64_t> abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2), batch;
  if (!broadcast_shapes(abatch, bbatch, &batch)) return reference_error("batch dims do not broadcast");
  std::vector<int64_t> af = batch, bf = batch;
  af.push_back(M);
  af.push_back(K);
  bf.push_back(K);
  bf.push_back(N);
  HostTensor a2 = a, b2 = b;
  a2.sizes = as;
  b2.sizes = bs;
  const HostTensor ab = broadcast_to(a2, af), bb = broadcast_to(b2, bf);
  const int64_t nb = numel_of(batch);
  auto zero = [](const HostTensor* z, int64_t i) {
    return z == nullptr ? 0.0 : z->values[z->values.size() == 1 ? 0 : static_cast<size_t>(i)];
  };
  HostTensor y;
  y.dtype = DType::kInt32;
  for (int64_t v : batch) y.sizes.push_back(v);
  if (a.sizes.size() > 1) y.sizes.push_back(M);
  if (b.sizes.size() > 1) y.sizes.push_back(N);
  y.values.assign(static_cast<size_t>(nb * M * N), 0.0);
  for (int64_t q = 0; q < nb; ++q) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          acc += (ab.values[static_cast<size_t>((q * M + m) * K + k)] - zero(za, m)) *
                 (bb.values[static_cast<size_t>((q * K + k) * N + n)] - zero(zb, n));
        }
        y.values[static_cast<size_t>((q * M + m) * N + n)] = acc;
      }
    }
  }
  return single_output(std::move(y));
}

// conv_integer: input of the sample's dtype, weight of `w_other` ? the other
// quantized dtype : the same; input_zero_point NONE or one element ('t');
// weight_zero_point NONE, 't' or one per output channel ('v').
struct CiCase {
  const char* desc;
  std::vector<int64_t> in, w, stride, pad, dil;
  int64_t groups;
  bool w_other;
  char xzp, wzp;
  Layout in_layout;
  const char* error;  // nullptr, "channels", "zero point dtype", "zero point length"
};

// One case a line:
// clang-format off
const CiCase kConvIntegerCases[] = {
    {"[1,3,7,7] * [4,3,3,3], zero points per tensor", {1, 3, 7, 7}, {4, 3, 3, 3}, {1}, {0}, {1}, 1, false, 't', 't', kDense, nullptr},
    {"weight of the other dtype, per-channel weight zero points", {2, 3, 6, 5}, {4, 3, 3, 2}, {1}, {0}, {1}, 1, true, 't', 'v', kDense, nullptr},
    {"no zero points", {1, 2, 5, 5}, {3, 2, 2, 2}, {1}, {0}, {1}, 1, false, 0, 0, kDense, nullptr},
    {"stride 2, padding 1 (padding is the input zero point)", {2, 4, 9, 8}, {6, 4, 3, 3}, {2}, {1}, {1}, 1, true, 't', 'v', kDense, nullptr},
    {"dilation 2, stride [1,2], padding [2,1]", {1, 2, 10, 10}, {2, 2, 3, 3}, {1, 2}, {2, 1}, {2, 2}, 1, false, 't', 't', kDense, nullptr},
    {"groups 2", {2, 4, 6, 6}, {6, 2, 3, 3}, {1}, {1}, {1}, 2, true, 't', 'v', kDense, nullptr},
    {"depthwise (groups = channels = 8)", {2, 8, 7, 7}, {8, 1, 3, 3}, {1}, {1}, {1}, 8, false, 't', 'v', kDense, nullptr},
    {"1x1 kernel", {2, 5, 4, 4}, {3, 5, 1, 1}, {1}, {0}, {1}, 1, true, 0, 't', kDense, nullptr},
    {"unbatched [3,6,6]", {3, 6, 6}, {2, 3, 2, 2}, {1}, {0}, {1}, 1, false, 't', 't', kDense, nullptr},
    {"empty batch", {0, 3, 5, 5}, {2, 3, 3, 3}, {1}, {0}, {1}, 1, false, 't', 't', kDense, nullptr},
    {"strided input (a view)", {1, 3, 5, 6}, {2, 3, 3, 3}, {1}, {1}, {1}, 1, false, 't', 'v', kStrided, nullptr},
    {"transposed input (a view)", {1, 2, 6, 6}, {3, 2, 3, 3}, {1}, {0}, {1}, 1, true, 't', 't', kTransposed, nullptr},
    {"[1,64,14,14] * [64,64,3,3], padding 1 (threaded)", {1, 64, 14, 14}, {64, 64, 3, 3}, {1}, {1}, {1}, 1, true, 't', 'v', kDense, nullptr},
    {"error: weight channels 4 for input channels 3", {1, 3, 5, 5}, {2, 4, 3, 3}, {1}, {0}, {1}, 1, false, 0, 0, kDense, "channels"},
    {"error: input_zero_point of weight's dtype", {1, 3, 5, 5}, {2, 3, 3, 3}, {1}, {0}, {1}, 1, true, 't', 0, kDense, "zero point dtype"},
    {"error: weight_zero_point of 3 for C_out = 2", {1, 3, 5, 5}, {2, 3, 3, 3}, {1}, {0}, {1}, 1, false, 0, 'v', kDense, "zero point length"},
};
// clang-format on

std::vector<Sample> conv_integer_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  Domain all;
  all.full_int_range = true;
  for (const CiCase& c : kConvIntegerCases) {
    const DType wd = c.w_other ? (d == kI8 ? kU8 : kI8) : d;
    Sample s;
    s.desc = c.desc;
    s.expect_error = c.error != nullptr;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.in, all, c.in_layout)));
    s.args.push_back(Arg::tensor_of(make_input(rng, wd, c.w, all)));
    auto zp = [&](char kind, DType zd, int64_t len) {
      if (kind == 0) return Arg::none();
      return Arg::tensor_of(make_input(rng, zd, {kind == 't' ? 1 : len}, all));
    };
    s.args.push_back(zp(c.xzp, is(c.error, "zero point dtype") ? wd : d, 1));
    s.args.push_back(zp(c.wzp, wd, is(c.error, "zero point length") ? c.w[0] + 1 : c.w[0]));
    s.args.push_back(Arg::ints_of(c.stride));
    s.args.push_back(Arg::ints_of(c.pad));
    s.args.push_back(Arg::ints_of(c.dil));
    s.args.push_back(Arg::int_of(c.groups));
    out.push_back(std::move(s));
  }
  return out;
}

// Naive sums of ONNX's ConvInteger in double (exact: far below 2^53);
// padding reads the input zero point, so it adds 0 after the shift.
Expected conv_integer_reference(const std::string&, const Sample& s) {
  HostTensor in = tensor_arg(s, 0);
  const bool unbatched = in.ndim() == 3;
  if (unbatched) in.sizes.insert(in.sizes.begin(), 1);
  const HostTensor& w = tensor_arg(s, 1);
  const double zx = s.args.at(2).kind == Arg::kTensor ? tensor_arg(s, 2).values.at(0) : 0.0;
  const HostTensor* zw = s.args.at(3).kind == Arg::kTensor ? &tensor_arg(s, 3) : nullptr;
  auto pair = [&](int i, int k) {
    const auto& v = s.args.at(static_cast<size_t>(i)).ints;
    return v.size() > 1 ? v[static_cast<size_t>(k)] : v.at(0);
  };
  const int64_t g = s.args.at(7).i;
  const int64_t N = in.sizes[0], C = in.sizes[1], H = in.sizes[2], W = in.sizes[3];
  const int64_t O = w.sizes[0], CG = w.sizes[1], KH = w.sizes[2], KW = w.sizes[3];
  if (CG * g != C || O % g != 0) return reference_error("channels do not match groups");
  const int64_t st[2] = {pair(4, 0), pair(4, 1)}, pd[2] = {pair(5, 0), pair(5, 1)}, dl[2] = {pair(6, 0), pair(6, 1)};
  const int64_t OH = (H + 2 * pd[0] - dl[0] * (KH - 1) - 1) / st[0] + 1;
  const int64_t OW = (W + 2 * pd[1] - dl[1] * (KW - 1) - 1) / st[1] + 1;
  const int64_t OG = O / g;
  HostTensor r;
  r.dtype = DType::kInt32;
  r.sizes = {N, O, OH, OW};
  r.values.assign(static_cast<size_t>(N * O * OH * OW), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      const double zo = zw == nullptr ? 0.0 : zw->values[zw->values.size() == 1 ? 0 : static_cast<size_t>(o)];
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          double acc = 0;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t iy = y * st[0] - pd[0] + i * dl[0], ix = x * st[1] - pd[1] + j * dl[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const int64_t ci = o / OG * CG + c;
                acc += (in.values[static_cast<size_t>(((n * C + ci) * H + iy) * W + ix)] - zx) *
                       (w.values[static_cast<size_t>(((o * CG + c) * KH + i) * KW + j)] - zo);
              }
          r.values[static_cast<size_t>(((n * O + o) * OH + y) * OW + x)] = acc;
        }
    }
  if (unbatched) r.sizes.erase(r.sizes.begin());
  return single_output(std::move(r));
}

}  // namespace

void register_quantize_ops(std::vector<OpDef>* defs) {
  defs->push_back({"quantize_linear", quantize_samples, quantize_reference, 0.0});
  defs->push_back({"dequantize_linear", dequantize_samples, dequantize_reference, 0.0});
  defs->push_back({"matmul_integer", matmul_integer_samples, matmul_integer_reference, 0.0});
  defs->push_back({"conv_integer", conv_integer_samples, conv_integer_reference, 0.0});
}

}  // namespace bpc
