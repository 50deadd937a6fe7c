// matmul, addmm, linear: samples and a naive double-precision reference.
// The tolerance grows with K: K * eps(float32 or float64) * sum|a_ik * b_kj|.
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

const Domain kDom = [] {
  Domain d;
  d.lo = -1.0; d.hi = 1.0;
  return d;
}();

// torch.matmul's shape rules, computed in double. mag gets sum |a*b|.
bool matmul_ref(const HostTensor& a, const HostTensor& b, DType out, HostTensor* r, std::vector<double>* mag,
                int64_t* klen) {
  if (a.ndim() == 0 || b.ndim() == 0) return false;
  std::vector<int64_t> as = a.sizes, bs = b.sizes;
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K) return false;
  std::vector<int64_t> abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2), batch;
  if (!broadcast_shapes(abatch, bbatch, &batch)) return false;
  HostTensor A, B;
  {
    HostTensor a2 = a, b2 = b;
    a2.sizes = as;
    b2.sizes = bs;
    std::vector<int64_t> af = batch, bf = batch;
    af.push_back(M); af.push_back(K);
    bf.push_back(K); bf.push_back(N);
    A = broadcast_to(a2, af);
    B = broadcast_to(b2, bf);
  }
  const int64_t nb = numel_of(batch);
  r->dtype = out;
  r->sizes = batch;
  if (!a1) r->sizes.push_back(M);
  if (!b1) r->sizes.push_back(N);
  r->values.assign(static_cast<size_t>(nb * M * N), 0.0);
  mag->assign(r->values.size(), 0.0);
  for (int64_t q = 0; q < nb; ++q) {
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0.0, m = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = A.values[static_cast<size_t>((q * M + i) * K + k)] *
                           B.values[static_cast<size_t>((q * K + k) * N + j)];
          acc += p;
          m += std::fabs(p);
        }
        r->values[static_cast<size_t>((q * M + i) * N + j)] = acc;
        (*mag)[static_cast<size_t>((q * M + i) * N + j)] = m;
      }
    }
  }
  *klen = K;
  return true;
}

Sample two(const std::string& desc, TensorInput a, TensorInput b, bool quick = true) {
  Sample s;
  s.desc = desc;
  s.quick = quick;
  s.args.push_back(Arg::tensor_of(std::move(a)));
  s.args.push_back(Arg::tensor_of(std::move(b)));
  return s;
}

std::vector<Sample> matmul_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  out.push_back(two("[7,17] @ [17,33]", make_input(rng, d, {7, 17}, kDom), make_input(rng, d, {17, 33}, kDom)));
  out.push_back(two("1-D dot [17] @ [17]", make_input(rng, d, {17}, kDom), make_input(rng, d, {17}, kDom)));
  out.push_back(two("[3,4] @ [4]", make_input(rng, d, {3, 4}, kDom), make_input(rng, d, {4}, kDom)));
  out.push_back(two("[4] @ [4,5]", make_input(rng, d, {4}, kDom), make_input(rng, d, {4, 5}, kDom)));
  out.push_back(two("batch [2,3,4] @ [4,5]", make_input(rng, d, {2, 3, 4}, kDom), make_input(rng, d, {4, 5}, kDom)));
  out.push_back(two("broadcast batch [2,1,3,4] @ [5,4,2]", make_input(rng, d, {2, 1, 3, 4}, kDom),
                    make_input(rng, d, {5, 4, 2}, kDom)));
  out.push_back(two("transposed views [9,6]^T-stored @ [6,4]^T-stored", make_input(rng, d, {9, 6}, kDom, Layout::kTransposed),
                    make_input(rng, d, {6, 4}, kDom, Layout::kTransposed)));
  out.push_back(two("strided view [5,8] @ [8,3]", make_input(rng, d, {5, 8}, kDom, Layout::kStrided),
                    make_input(rng, d, {8, 3}, kDom)));
  out.push_back(two("K = 0: [3,0] @ [0,4]", make_input(rng, d, {3, 0}, kDom), make_input(rng, d, {0, 4}, kDom)));
  out.push_back(two("M = 0: [0,5] @ [5,3]", make_input(rng, d, {0, 5}, kDom), make_input(rng, d, {5, 3}, kDom)));
  out.push_back(two("large K [2,1023] @ [1023,3]", make_input(rng, d, {2, 1023}, kDom), make_input(rng, d, {1023, 3}, kDom), false));
  out.push_back(two("[33,65] @ [65,17]", make_input(rng, d, {33, 65}, kDom), make_input(rng, d, {65, 17}, kDom), false));
  {
    std::vector<double> sp = special_values(d);
    sp.resize(16, 1.0);
    TensorInput a = tensor_of_values(d, sp);
    a.t.sizes = {4, 4};
    out.push_back(two("special values [4,4] @ [4,4]", a, make_input(rng, d, {4, 4}, kDom)));
  }
  Sample e = two("error: [2,3] @ [4,5] (inner sizes differ)", make_input(rng, d, {2, 3}, kDom),
                 make_input(rng, d, {4, 5}, kDom));
  e.expect_error = true;
  out.push_back(e);
  if (d == DType::kFloat32) {
    Sample m = two("error: float32 @ float64", make_input(rng, d, {2, 3}, kDom),
                   make_input(rng, DType::kFloat64, {3, 2}, kDom));
    m.expect_error = true;
    out.push_back(m);
  }
  return out;
}

Expected matmul_reference(const std::string&, const Sample& s) {
  const HostTensor& a = tensor_arg(s, 0);
  const HostTensor& b = tensor_arg(s, 1);
  Expected e;
  HostTensor r;
  std::vector<double> mag;
  if (!matmul_ref(a, b, a.dtype, &r, &mag, &e.reduce_len)) return reference_error("shapes do not multiply");
  e.outputs.push_back(std::move(r));
  e.mag.push_back(std::move(mag));
  return e;
}

Arg scalar(DType d, double v) {
  return dtype_is_float(d) && v != std::floor(v) ? Arg::double_of(v) : Arg::int_of(static_cast<int64_t>(v));
}

std::vector<Sample> addmm_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  struct Shape { const char* desc; std::vector<int64_t> self; int64_t m, k, n; double beta, alpha; bool quick; };
  const Shape shapes[] = {
      {"self [5] broadcast, [4,7] @ [7,5]", {5}, 4, 7, 5, 1, 1, true},
      {"self [4,5], beta 0.5 alpha 2", {4, 5}, 4, 7, 5, 0.5, 2, true},
      {"self [1,5], [17,33] @ [33,5]", {1, 5}, 17, 33, 5, 1, 1, false},
      {"K = 0: [3,0] @ [0,4]", {3, 4}, 3, 0, 4, 1, 1, true},
  };
  for (const Shape& sh : shapes) {
    Sample s;
    s.desc = sh.desc;
    s.quick = sh.quick;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sh.self, kDom)));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {sh.m, sh.k}, kDom)));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {sh.k, sh.n}, kDom)));
    s.args.push_back(scalar(d, sh.beta));
    s.args.push_back(scalar(d, sh.alpha));
    out.push_back(s);
  }
  {
    // beta = 0: self is ignored, its NaN must not propagate (torch.addmm).
    Sample s;
    s.desc = "beta 0 ignores NaN in self";
    TensorInput self = make_input(rng, d, {3, 4}, kDom);
    self.t.values[0] = NAN;
    s.args.push_back(Arg::tensor_of(self));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {3, 2}, kDom, Layout::kTransposed)));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 4}, kDom)));
    s.args.push_back(Arg::int_of(0));
    s.args.push_back(Arg::int_of(1));
    out.push_back(s);
  }
  Sample e;
  e.desc = "error: mat1 [2,3] @ mat2 [4,5]";
  e.expect_error = true;
  e.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 5}, kDom)));
  e.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 3}, kDom)));
  e.args.push_back(Arg::tensor_of(make_input(rng, d, {4, 5}, kDom)));
  e.args.push_back(Arg::int_of(1));
  e.args.push_back(Arg::int_of(1));
  out.push_back(e);
  return out;
}

double scalar_value(const Arg& a) { return a.kind == Arg::kDouble ? a.d : static_cast<double>(a.i); }

Expected addmm_reference(const std::string&, const Sample& s) {
  const HostTensor& self = tensor_arg(s, 0);
  Expected e;
  HostTensor r;
  std::vector<double> mag;
  if (!matmul_ref(tensor_arg(s, 1), tensor_arg(s, 2), self.dtype, &r, &mag, &e.reduce_len)) {
    return reference_error("shapes do not multiply");
  }
  const double beta = scalar_value(s.args.at(3)), alpha = scalar_value(s.args.at(4));
  const HostTensor sb = broadcast_to(self, r.sizes);
  for (size_t i = 0; i < r.values.size(); ++i) {
    const double term = beta == 0.0 ? 0.0 : beta * sb.values[i];
    r.values[i] = term + alpha * r.values[i];
    mag[i] = std::fabs(term) + std::fabs(alpha) * mag[i];
  }
  e.outputs.push_back(std::move(r));
  e.mag.push_back(std::move(mag));
  return e;
}

std::vector<Sample> linear_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  struct Shape { const char* desc; std::vector<int64_t> in; int64_t n; bool bias; };
  const Shape shapes[] = {
      {"[5,4] x W[3,4] + b", {5, 4}, 3, true},
      {"[5,4] x W[3,4], no bias", {5, 4}, 3, false},
      {"1-D input [4]", {4}, 3, true},
      {"3-D input [2,5,7]", {2, 5, 7}, 6, true},
      {"zero-size batch [0,4]", {0, 4}, 3, true},
  };
  for (const Shape& sh : shapes) {
    Sample s;
    s.desc = sh.desc;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sh.in, kDom)));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {sh.n, sh.in.back()}, kDom)));
    s.args.push_back(sh.bias ? Arg::tensor_of(make_input(rng, d, {sh.n}, kDom)) : Arg::none());
    out.push_back(s);
  }
  Sample e;
  e.desc = "error: input [5,4] with weight [3,5]";
  e.expect_error = true;
  e.args.push_back(Arg::tensor_of(make_input(rng, d, {5, 4}, kDom)));
  e.args.push_back(Arg::tensor_of(make_input(rng, d, {3, 5}, kDom)));
  e.args.push_back(Arg::none());
  out.push_back(e);
  return out;
}

Expected linear_reference(const std::string&, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  const HostTensor& w = tensor_arg(s, 1);
  HostTensor wt;  // W^T [K, N]
  wt.dtype = w.dtype;
  wt.sizes = {w.sizes[1], w.sizes[0]};
  wt.values.resize(w.values.size());
  for (int64_t i = 0; i < w.sizes[0]; ++i)
    for (int64_t k = 0; k < w.sizes[1]; ++k)
      wt.values[static_cast<size_t>(k * w.sizes[0] + i)] = w.values[static_cast<size_t>(i * w.sizes[1] + k)];
  Expected e;
  HostTensor r;
  std::vector<double> mag;
  if (!matmul_ref(in, wt, in.dtype, &r, &mag, &e.reduce_len)) return reference_error("shapes do not multiply");
  if (s.args.size() > 2 && s.args[2].kind == Arg::kTensor) {
    const HostTensor bb = broadcast_to(s.args[2].tensor.t, r.sizes);
    for (size_t i = 0; i < r.values.size(); ++i) {
      r.values[i] += bb.values[i];
      mag[i] += std::fabs(bb.values[i]);
    }
  }
  e.outputs.push_back(std::move(r));
  e.mag.push_back(std::move(mag));
  return e;
}

}  // namespace

void register_linalg_ops(std::vector<OpDef>* defs) {
  defs->push_back({"matmul", matmul_samples, matmul_reference, 0.0});
  defs->push_back({"addmm", addmm_samples, addmm_reference, 0.0});
  defs->push_back({"linear", linear_samples, linear_reference, 0.0});
}

}  // namespace bpc
