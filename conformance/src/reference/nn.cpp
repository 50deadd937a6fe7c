// Neural-network operators (softmax, log_softmax, layer_norm, batch_norm,
// conv2d, conv2d_fused, max_pool2d, avg_pool2d): samples and naive double
// references.
#include <algorithm>
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

Domain dom(double lo, double hi) {
  Domain d;
  d.lo = lo;
  d.hi = hi;
  return d;
}

// ---- softmax / log_softmax -------------------------------------------------

std::vector<Sample> softmax_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  auto add = [&](const char* desc, TensorInput in, int64_t dim, bool quick = true) {
    Sample s;
    s.desc = desc;
    s.quick = quick;
    s.args.push_back(Arg::tensor_of(std::move(in)));
    s.args.push_back(Arg::int_of(dim));
    s.args.push_back(Arg::none());
    out.push_back(std::move(s));
  };
  add("[3,7] dim 1", make_input(rng, d, {3, 7}, dom(-4, 4)), 1);
  add("[3,7] dim 0", make_input(rng, d, {3, 7}, dom(-4, 4)), 0);
  add("[2,3,5] dim -1", make_input(rng, d, {2, 3, 5}, dom(-4, 4)), -1);
  add("transposed view [5,6] dim 1", make_input(rng, d, {5, 6}, dom(-4, 4), Layout::kTransposed), 1);
  add("large magnitudes [4,9] (stability)", make_input(rng, d, {4, 9}, dom(-1e4, 1e4)), 1);
  add("long rows [2,1023]", make_input(rng, d, {2, 1023}, dom(-8, 8)), 1, false);
  add("0-dim", make_input(rng, d, {}, dom(-4, 4)), 0);
  add("zero-size (1,0,3) dim 2", make_input(rng, d, {1, 0, 3}, dom(-4, 4)), 2);
  {
    std::vector<double> sp = {-INFINITY, 0.0, 1.0, 2.0, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                              INFINITY, 1.0, 2.0, 3.0, NAN, 0.0, 1.0, 2.0};
    TensorInput in = tensor_of_values(d, sp);
    in.t.sizes = {4, 4};
    add("special rows: -inf entries, all -inf, +inf, NaN", in, 1);
  }
  Sample e;
  e.desc = "error: dim 2 out of range for [3,7]";
  e.expect_error = true;
  e.args.push_back(Arg::tensor_of(make_input(rng, d, {3, 7}, dom(-1, 1))));
  e.args.push_back(Arg::int_of(2));
  e.args.push_back(Arg::none());
  out.push_back(e);
  return out;
}

// Iterates the 1-D lanes of `t` along `dim`: fn(base offset, stride, length).
template <typename Fn>
void for_each_lane(const HostTensor& t, int64_t dim, Fn fn) {
  if (t.ndim() == 0) {
    fn(0, 1, 1);
    return;
  }
  const int64_t n = t.sizes[static_cast<size_t>(dim)];
  const std::vector<int64_t> st = contiguous_strides(t.sizes);
  const int64_t stride = st[static_cast<size_t>(dim)];
  const int64_t total = t.numel();
  if (total == 0) return;
  for (int64_t k = 0; k < total; ++k) {
    if ((k / stride) % n != 0) continue;  // k is the start of a lane
    fn(k, stride, n);
  }
}

Expected softmax_reference(const std::string& op, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  int64_t dim = s.args.at(1).i;
  if (dim < 0) dim += std::max(in.ndim(), 1);
  const bool log = op == "log_softmax.int";
  HostTensor r = in;
  std::vector<double> mag(in.values.size(), 0.0);
  int64_t len = 1;
  for_each_lane(in, dim, [&](int64_t base, int64_t stride, int64_t n) {
    len = n;
    double mx = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      const double x = in.values[static_cast<size_t>(base + i * stride)];
      nan = nan || std::isnan(x);
      mx = std::max(mx, x);
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(in.values[static_cast<size_t>(base + i * stride)] - mx);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(base + i * stride);
      const double z = in.values[k] - mx;
      double v = log ? z - std::log(sum) : std::exp(z) / sum;
      if (nan || std::isinf(mx)) v = mx == -INFINITY || nan ? NAN : v;
      if (std::isinf(mx) && mx > 0) v = NAN;  // +inf in the row: inf - inf
      r.values[k] = v;
      mag[k] = log ? std::fabs(z) + std::fabs(std::log(sum)) + 1.0 : 1.0;
    }
  });
  Expected e = single_output(std::move(r));
  e.mag.push_back(std::move(mag));
  e.reduce_len = len;
  return e;
}

// ---- layer_norm / batch_norm -------------------------------------------------

std::vector<Sample> layer_norm_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  auto add = [&](const char* desc, std::vector<int64_t> sizes, size_t norm_dims, bool affine, Layout layout,
                 bool quick = true, bool error = false) {
    Sample s;
    s.desc = desc;
    s.quick = quick;
    s.expect_error = error;
    std::vector<int64_t> ns(sizes.end() - static_cast<long>(norm_dims), sizes.end());
    if (error) ns.back() += 1;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sizes, dom(-3, 3), layout)));
    s.args.push_back(Arg::ints_of(ns));
    s.args.push_back(affine ? Arg::tensor_of(make_input(rng, d, ns, dom(0.5, 1.5))) : Arg::none());
    s.args.push_back(affine ? Arg::tensor_of(make_input(rng, d, ns, dom(-1, 1))) : Arg::none());
    s.args.push_back(Arg::double_of(1e-5));
    s.args.push_back(Arg::bool_of(true));
    out.push_back(std::move(s));
  };
  add("[4,7] over [7], weight and bias", {4, 7}, 1, true, Layout::kContiguous);
  add("[2,3,5] over [3,5], no affine", {2, 3, 5}, 2, false, Layout::kContiguous);
  add("transposed view [6,5] over [5]", {6, 5}, 1, true, Layout::kTransposed);
  add("long [3,1023] over [1023]", {3, 1023}, 1, true, Layout::kContiguous, false);
  add("zero-size batch [0,4]", {0, 4}, 1, true, Layout::kContiguous);
  add("error: normalized_shape does not match the trailing dims", {4, 7}, 1, true, Layout::kContiguous, true, true);
  return out;
}

Expected layer_norm_reference(const std::string&, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  const int64_t n = numel_of(s.args.at(1).ints);
  const HostTensor* w = s.args.at(2).kind == Arg::kTensor ? &s.args[2].tensor.t : nullptr;
  const HostTensor* b = s.args.at(3).kind == Arg::kTensor ? &s.args[3].tensor.t : nullptr;
  const double eps = s.args.at(4).d;
  HostTensor r = in;
  std::vector<double> mag(in.values.size(), 0.0);
  const int64_t groups = n == 0 ? 0 : in.numel() / n;
  for (int64_t g = 0; g < groups; ++g) {
    double mean = 0.0, var = 0.0, amax = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += in.values[static_cast<size_t>(g * n + i)];
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
      const double x = in.values[static_cast<size_t>(g * n + i)];
      var += (x - mean) * (x - mean);
      amax = std::max(amax, std::fabs(x));
    }
    var /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(g * n + i);
      const double wi = w ? w->values[static_cast<size_t>(i)] : 1.0;
      const double bi = b ? b->values[static_cast<size_t>(i)] : 0.0;
      r.values[k] = (in.values[k] - mean) * rstd * wi + bi;
      mag[k] = std::fabs(wi) * (amax + std::fabs(mean)) * rstd + std::fabs(bi);
    }
  }
  Expected e = single_output(std::move(r));
  e.mag.push_back(std::move(mag));
  e.reduce_len = n;
  return e;
}

std::vector<Sample> batch_norm_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  auto add = [&](const char* desc, std::vector<int64_t> sizes, bool affine, Layout layout) {
    const int64_t c = sizes.at(1);
    Sample s;
    s.desc = desc;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sizes, dom(-3, 3), layout)));
    s.args.push_back(affine ? Arg::tensor_of(make_input(rng, d, {c}, dom(0.5, 1.5))) : Arg::none());
    s.args.push_back(affine ? Arg::tensor_of(make_input(rng, d, {c}, dom(-1, 1))) : Arg::none());
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {c}, dom(-1, 1))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {c}, dom(0.25, 2))));
    s.args.push_back(Arg::bool_of(false));
    s.args.push_back(Arg::double_of(0.1));
    s.args.push_back(Arg::double_of(1e-5));
    s.args.push_back(Arg::bool_of(true));
    out.push_back(std::move(s));
  };
  add("[2,3,4,5] with weight and bias", {2, 3, 4, 5}, true, Layout::kContiguous);
  add("[4,3] no affine", {4, 3}, false, Layout::kContiguous);
  add("[2,5,7] transposed view", {2, 5, 7}, true, Layout::kTransposed);
  add("zero-size batch [0,3,2]", {0, 3, 2}, true, Layout::kContiguous);
  return out;
}

Expected batch_norm_reference(const std::string&, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  const HostTensor* w = s.args.at(1).kind == Arg::kTensor ? &s.args[1].tensor.t : nullptr;
  const HostTensor* b = s.args.at(2).kind == Arg::kTensor ? &s.args[2].tensor.t : nullptr;
  const HostTensor& rm = tensor_arg(s, 3);
  const HostTensor& rv = tensor_arg(s, 4);
  const double eps = s.args.at(7).d;
  const int64_t c = in.sizes.at(1);
  int64_t inner = 1;
  for (size_t i = 2; i < in.sizes.size(); ++i) inner *= in.sizes[i];
  HostTensor r = in;
  for (int64_t k = 0; k < in.numel(); ++k) {
    const size_t ch = static_cast<size_t>((k / inner) % c);
    const double scale = (w ? w->values[ch] : 1.0) / std::sqrt(rv.values[ch] + eps);
    r.values[static_cast<size_t>(k)] = (in.values[static_cast<size_t>(k)] - rm.values[ch]) * scale + (b ? b->values[ch] : 0.0);
  }
  return single_output(std::move(r));
}

// ---- conv2d and pooling -------------------------------------------------------

std::vector<Sample> conv_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  struct Shape {
    const char* desc;
    std::vector<int64_t> in, w;
    bool bias;
    std::vector<int64_t> stride, pad, dil;
    int64_t groups;
    bool error;
  };
  const Shape shapes[] = {
      {"[1,3,7,7] * [4,3,3,3] + bias", {1, 3, 7, 7}, {4, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1, false},
      {"stride 2, padding 1, groups 2", {2, 4, 9, 8}, {6, 2, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 2, false},
      {"dilation 2, stride [1,2], padding [2,1]", {1, 2, 10, 10}, {2, 2, 3, 3}, true, {1, 2}, {2, 1}, {2, 2}, 1, false},
      {"unbatched [3,6,6]", {3, 6, 6}, {2, 3, 2, 2}, true, {1, 1}, {0, 0}, {1, 1}, 1, false},
      {"1x1 kernel [2,5,4,4]", {2, 5, 4, 4}, {3, 5, 1, 1}, false, {1, 1}, {0, 0}, {1, 1}, 1, false},
      {"error: weight channels 4 for input channels 3", {1, 3, 5, 5}, {2, 4, 3, 3}, false, {1, 1}, {0, 0}, {1, 1}, 1, true},
  };
  for (const Shape& sh : shapes) {
    Sample s;
    s.desc = sh.desc;
    s.expect_error = sh.error;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sh.in, dom(-1, 1))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sh.w, dom(-1, 1))));
    s.args.push_back(sh.bias ? Arg::tensor_of(make_input(rng, d, {sh.w[0]}, dom(-1, 1))) : Arg::none());
    s.args.push_back(Arg::ints_of(sh.stride));
    s.args.push_back(Arg::ints_of(sh.pad));
    s.args.push_back(Arg::ints_of(sh.dil));
    s.args.push_back(Arg::int_of(sh.groups));
    out.push_back(std::move(s));
  }
  return out;
}

Expected conv_reference(const std::string&, const Sample& s) {
  HostTensor in = tensor_arg(s, 0);
  const bool unbatched = in.ndim() == 3;
  if (unbatched) in.sizes.insert(in.sizes.begin(), 1);
  const HostTensor& w = tensor_arg(s, 1);
  const HostTensor* bias = s.args.at(2).kind == Arg::kTensor ? &s.args[2].tensor.t : nullptr;
  const auto& st = s.args.at(3).ints;
  const auto& pd = s.args.at(4).ints;
  const auto& dl = s.args.at(5).ints;
  const int64_t g = s.args.at(6).i;
  const int64_t N = in.sizes[0], C = in.sizes[1], H = in.sizes[2], W = in.sizes[3];
  const int64_t O = w.sizes[0], CG = w.sizes[1], KH = w.sizes[2], KW = w.sizes[3];
  const int64_t OH = (H + 2 * pd[0] - dl[0] * (KH - 1) - 1) / st[0] + 1;
  const int64_t OW = (W + 2 * pd[1] - dl[1] * (KW - 1) - 1) / st[1] + 1;
  const int64_t OG = O / g;
  HostTensor r;
  r.dtype = in.dtype;
  r.sizes = {N, O, OH, OW};
  r.values.assign(static_cast<size_t>(N * O * OH * OW), 0.0);
  std::vector<double> mag(r.values.size(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          double acc = bias ? bias->values[static_cast<size_t>(o)] : 0.0, m = std::fabs(acc);
          const int64_t grp = o / OG;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t iy = y * st[0] - pd[0] + i * dl[0], ix = x * st[1] - pd[1] + j * dl[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const int64_t ci = grp * CG + c;
                const double p = in.values[static_cast<size_t>(((n * C + ci) * H + iy) * W + ix)] *
                                 w.values[static_cast<size_t>(((o * CG + c) * KH + i) * KW + j)];
                acc += p;
                m += std::fabs(p);
              }
          const size_t k = static_cast<size_t>(((n * O + o) * OH + y) * OW + x);
          r.values[k] = acc;
          mag[k] = m;
        }
  if (unbatched) r.sizes.erase(r.sizes.begin());
  Expected e = single_output(std::move(r));
  e.mag.push_back(std::move(mag));
  e.reduce_len = CG * KH * KW;
  return e;
}

// conv2d_fused: conv2d's arguments, then residual, activation, alpha, beta.
// One sample per activation, with and without bias and residual, grouped and
// depthwise, unbatched; errors: residual of other sizes, unknown activation.
std::vector<Sample> conv_fused_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  struct Case {
    const char* desc;
    std::vector<int64_t> in, w;
    bool bias, residual;
    int64_t stride, pad, groups;
    const char* act;
    double alpha, beta;
    bool error;
  };
  const Case cases[] = {
      {"none, bias + residual", {1, 3, 7, 7}, {4, 3, 3, 3}, true, true, 1, 1, 1, "none", 0, 0, false},
      {"relu, bias, no residual", {2, 3, 6, 6}, {5, 3, 3, 3}, true, false, 1, 0, 1, "relu", 0, 0, false},
      {"relu, residual, no bias, stride 2", {1, 4, 9, 8}, {4, 4, 3, 3}, false, true, 2, 1, 1, "relu", 0, 0, false},
      {"clip -0.5..0.5 (relu6-like), groups 2", {2, 4, 6, 6}, {6, 2, 3, 3}, true, true, 1, 1, 2, "clip", -0.5, 0.5,
       false},
      {"clip 0..6, 1x1 kernel", {1, 8, 4, 4}, {16, 8, 1, 1}, true, false, 1, 0, 1, "clip", 0.0, 6.0, false},
      {"hardswish, depthwise [1,6,7,7] groups 6", {1, 6, 7, 7}, {6, 1, 3, 3}, true, false, 1, 1, 6, "hardswish", 0, 0,
       false},
      {"hardsigmoid alpha 0.2 beta 0.5, residual", {1, 3, 5, 5}, {4, 3, 3, 3}, true, true, 1, 1, 1, "hardsigmoid",
       0.2, 0.5, false},
      {"sigmoid, depthwise, no bias", {2, 4, 5, 5}, {4, 1, 3, 3}, false, false, 1, 1, 4, "sigmoid", 0, 0, false},
      {"silu, bias + residual, 16 channels", {1, 16, 5, 5}, {16, 16, 3, 3}, true, true, 1, 1, 1, "silu", 0, 0, false},
      {"gelu (erf), bias", {1, 3, 6, 6}, {4, 3, 3, 3}, true, false, 1, 1, 1, "gelu", 0, 0, false},
      {"leaky_relu slope 0.1, residual, groups 2", {1, 4, 6, 6}, {4, 2, 3, 3}, false, true, 1, 1, 2, "leaky_relu",
       0.1, 0, false},
      {"unbatched [3,6,6], residual, relu", {3, 6, 6}, {2, 3, 2, 2}, true, true, 1, 0, 1, "relu", 0, 0, false},
      {"error: residual of other sizes", {1, 3, 5, 5}, {2, 3, 3, 3}, true, true, 1, 0, 1, "relu", 0, 0, true},
      {"error: unknown activation 'tanh'", {1, 3, 5, 5}, {2, 3, 3, 3}, true, false, 1, 0, 1, "tanh", 0, 0, true},
  };
  // res: 0 contiguous, 1 expanded from [N, C_out, 1, 1] (stride 0: the CPU's direct path), 2 transposed view.
  auto add = [&](const Case& c, int res) {
    Sample s;
    s.desc = c.desc;
    s.expect_error = c.error;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.in, dom(-1, 1))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.w, dom(-1, 1))));
    s.args.push_back(c.bias ? Arg::tensor_of(make_input(rng, d, {c.w[0]}, dom(-1, 1))) : Arg::none());
    s.args.push_back(Arg::ints_of({c.stride, c.stride}));
    s.args.push_back(Arg::ints_of({c.pad, c.pad}));
    s.args.push_back(Arg::ints_of({1, 1}));
    s.args.push_back(Arg::int_of(c.groups));
    if (c.residual) {
      const size_t sp = c.in.size() - 2;  // output sizes (the error case asks for one row more)
      std::vector<int64_t> rs(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(sp - 1));
      rs.push_back(c.w[0]);
      for (size_t k = sp; k < c.in.size(); ++k) rs.push_back((c.in[k] + 2 * c.pad - c.w[k - sp + 2]) / c.stride + 1);
      if (c.error) rs.back() += 1;
      if (res == 1) {
        std::vector<int64_t> base = rs;
        base[base.size() - 1] = base[base.size() - 2] = 1;
        s.args.push_back(Arg::tensor_of(make_expanded(rng, d, base, rs, dom(-1, 1))));
      } else {
        s.args.push_back(
            Arg::tensor_of(make_input(rng, d, rs, dom(-1, 1), res == 2 ? Layout::kTransposed : Layout::kContiguous)));
      }
    } else {
      s.args.push_back(Arg::none());
    }
    s.args.push_back(Arg::string_of(c.act));
    s.args.push_back(Arg::double_of(c.alpha));
    s.args.push_back(Arg::double_of(c.beta));
    out.push_back(std::move(s));
  };
  for (const Case& c : cases) add(c, 0);
  add({"relu, residual expanded from [1,4,1,1]", {1, 3, 7, 7}, {4, 3, 3, 3}, true, true, 1, 1, 1, "relu", 0, 0, false},
      1);
  add({"silu, transposed residual view", {1, 3, 7, 7}, {4, 3, 3, 3}, true, true, 1, 1, 1, "silu", 0, 0, false}, 2);
  return out;
}

Expected conv_fused_reference(const std::string& op, const Sample& s) {
  Expected e = conv_reference(op, s);
  HostTensor& y = e.outputs[0];
  std::vector<double>& mag = e.mag[0];
  const HostTensor* res = s.args.at(7).kind == Arg::kTensor ? &s.args[7].tensor.t : nullptr;
  const std::string act = s.args.at(8).s;
  const double a = s.args.at(9).d, b = s.args.at(10).d;
  for (size_t k = 0; k < y.values.size(); ++k) {
    double x = y.values[k];
    if (res != nullptr) {
      x += res->values[k];
      mag[k] += std::fabs(res->values[k]);
    }
    if (act == "relu") {
      x = x > 0 ? x : 0.0;
    } else if (act == "clip") {
      x = std::min(std::max(x, a), b);
    } else if (act == "hardswish") {
      x = x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    } else if (act == "hardsigmoid") {
      x = std::min(std::max(a * x + b, 0.0), 1.0);
    } else if (act == "sigmoid") {
      x = 1.0 / (1.0 + std::exp(-x));
    } else if (act == "silu") {
      x = x / (1.0 + std::exp(-x));
    } else if (act == "gelu") {
      x = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    } else if (act == "leaky_relu") {
      x = x < 0 ? a * x : x;
    }
    y.values[k] = x;
    mag[k] *= 1.5;  // no activation here has a slope above 1.5: rounding of the sum grows at most that much
  }
  return e;
}

std::vector<Sample> pool_samples(const std::string& op, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  const bool avg = op == "avg_pool2d";
  std::vector<Sample> out;
  struct Shape {
    const char* desc;
    std::vector<int64_t> in, k, st, pad;
    bool ceil, include_pad;
    int64_t divisor;  // 0: None
  };
  const Shape shapes[] = {
      {"[1,2,7,7] k3 s2 p1", {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, false, true, 0},
      {"ceil_mode, [2,3,8,7] k3 s2", {2, 3, 8, 7}, {3, 3}, {2, 2}, {0, 0}, true, true, 0},
      {"stride defaults to kernel, k2", {1, 1, 6, 5}, {2, 2}, {}, {0, 0}, false, true, 0},
      {"unbatched [2,6,6] k[2,3] s[1,2] p[1,1]", {2, 6, 6}, {2, 3}, {1, 2}, {1, 1}, false, false, 0},
      {"ceil_mode with padding, count_include_pad false", {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, true, false, 0},
  };
  for (const Shape& sh : shapes) {
    Sample s;
    s.desc = sh.desc;
    TensorInput in = make_input(rng, d, sh.in, dom(-4, 4));
    if (!avg) in.t.values[3] = NAN;  // max pooling propagates NaN
    s.args.push_back(Arg::tensor_of(in));
    s.args.push_back(Arg::ints_of(sh.k));
    s.args.push_back(Arg::ints_of(sh.st));
    s.args.push_back(Arg::ints_of(sh.pad));
    if (avg) {
      s.args.push_back(Arg::bool_of(sh.ceil));
      s.args.push_back(Arg::bool_of(sh.include_pad));
      s.args.push_back(Arg::none());
    } else {
      s.args.push_back(Arg::ints_of({1, 1}));
      s.args.push_back(Arg::bool_of(sh.ceil));
    }
    out.push_back(std::move(s));
  }
  if (avg) {
    Sample s = out[0];
    s.desc = "divisor_override 5";
    s.args[6] = Arg::int_of(5);
    out.push_back(s);
  } else {
    Sample s = out[0];
    s.desc = "dilation 2";
    s.args[4] = Arg::ints_of({2, 2});
    out.push_back(s);
  }
  Sample e = out[0];
  e.desc = "error: padding 2 larger than half the kernel 3";
  e.expect_error = true;
  e.args[3] = Arg::ints_of({2, 2});
  out.push_back(e);
  return out;
}

int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  int64_t o = span / s + 1;
  if (ceil && (o - 1) * s >= in + p) --o;  // the last window must start inside the input or left padding
  return o;
}

Expected pool_reference(const std::string& op, const Sample& s) {
  const bool avg = op == "avg_pool2d";
  HostTensor in = tensor_arg(s, 0);
  const bool unbatched = in.ndim() == 3;
  if (unbatched) in.sizes.insert(in.sizes.begin(), 1);
  const auto& k = s.args.at(1).ints;
  const std::vector<int64_t> st = s.args.at(2).ints.empty() ? k : s.args.at(2).ints;
  const auto& pd = s.args.at(3).ints;
  const std::vector<int64_t> dl = avg ? std::vector<int64_t>{1, 1} : s.args.at(4).ints;
  const bool ceil = avg ? s.args.at(4).b : s.args.at(5).b;
  const bool include_pad = avg && s.args.at(5).b;
  const int64_t divisor = avg && s.args.at(6).kind == Arg::kInt ? s.args[6].i : 0;
  const int64_t N = in.sizes[0], C = in.sizes[1], H = in.sizes[2], W = in.sizes[3];
  const int64_t OH = pool_out(H, k[0], st[0], pd[0], dl[0], ceil);
  const int64_t OW = pool_out(W, k[1], st[1], pd[1], dl[1], ceil);
  HostTensor r;
  r.dtype = in.dtype;
  r.sizes = {N, C, OH, OW};
  std::vector<double> mag;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t x = 0; x < OW; ++x) {
        const double* base = in.values.data() + nc * H * W;
        if (!avg) {
          double m = -INFINITY;
          for (int64_t i = 0; i < k[0]; ++i)
            for (int64_t j = 0; j < k[1]; ++j) {
              const int64_t iy = y * st[0] - pd[0] + i * dl[0], ix = x * st[1] - pd[1] + j * dl[1];
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              const double v = base[iy * W + ix];
              if (std::isnan(v) || v > m) m = v;
              if (std::isnan(m)) break;
            }
          r.values.push_back(m);
          mag.push_back(0.0);
          continue;
        }
        // torch's avg_pool2d: the window is clipped to input + padding for
        // the pad-inclusive count, then to the input for the sum.
        int64_t y0 = y * st[0] - pd[0], x0 = x * st[1] - pd[1];
        int64_t y1 = std::min(y0 + k[0], H + pd[0]), x1 = std::min(x0 + k[1], W + pd[1]);
        const int64_t pool_size = (y1 - y0) * (x1 - x0);
        y0 = std::max<int64_t>(y0, 0);
        x0 = std::max<int64_t>(x0, 0);
        y1 = std::min(y1, H);
        x1 = std::min(x1, W);
        double sum = 0.0, m = 0.0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) {
            sum += base[iy * W + ix];
            m += std::fabs(base[iy * W + ix]);
          }
        const int64_t div = divisor ? divisor : include_pad ? pool_size : (y1 - y0) * (x1 - x0);
        r.values.push_back(sum / static_cast<double>(div));
        mag.push_back(m / static_cast<double>(div));
      }
  if (unbatched) r.sizes.erase(r.sizes.begin());
  Expected e = single_output(std::move(r));
  if (avg) {
    e.mag.push_back(std::move(mag));
    e.reduce_len = k[0] * k[1];
  }
  return e;
}

}  // namespace

void register_nn_ops(std::vector<OpDef>* defs) {
  defs->push_back({"softmax.int", softmax_samples, softmax_reference, 0.0});
  defs->push_back({"log_softmax.int", softmax_samples, softmax_reference, 0.0});
  defs->push_back({"layer_norm", layer_norm_samples, layer_norm_reference, 0.0});
  defs->push_back({"batch_norm", batch_norm_samples, batch_norm_reference, 0.0});
  defs->push_back({"conv2d", conv_samples, conv_reference, 0.0});
  defs->push_back({"conv2d_fused", conv_fused_samples, conv_fused_reference, 0.0});
  defs->push_back({"max_pool2d", pool_samples, pool_reference, 0.0});
  defs->push_back({"avg_pool2d", pool_samples, pool_reference, 0.0});
}

}  // namespace bpc
