// scaled_dot_product_attention: samples and a naive double reference
// (torch.nn.functional.scaled_dot_product_attention's math, written out):
// per batch and query row, scores = q . k_j * scale (+ float mask, or -inf
// where a bool mask is False or is_causal hides key j > i), softmax, then the
// weighted sum of the value rows. A row whose every score is -inf is NaN.
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

struct Case {
  const char* desc;
  std::vector<int64_t> q, k, v;
  std::vector<int64_t> mask;  // empty: no mask
  bool float_mask;            // query's dtype (added), else bool
  bool causal;
  double scale;  // 0: None (1/sqrt(E))
  double dropout;
  Layout key_layout;
  bool quick;
};

// A case with every field spelled out (desc "error: ..." expects an error).
Case C(const char* desc, std::vector<int64_t> q, std::vector<int64_t> k, std::vector<int64_t> v,
       std::vector<int64_t> mask = {}, bool float_mask = false, bool causal = false, double scale = 0.0,
       double dropout = 0.0, Layout key_layout = Layout::kContiguous, bool quick = true) {
  return Case{desc,  std::move(q), std::move(k), std::move(v), std::move(mask), float_mask, causal,
              scale, dropout,      key_layout,   quick};
}

std::vector<Sample> attention_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  const DType B = DType::kBool;
  const Case cases[] = {
      C("self-attention [2,3,5,4], no mask", {2, 3, 5, 4}, {2, 3, 5, 4}, {2, 3, 5, 4}),
      C("L 3, S 6, E 4, Ev 5 [2,...]", {2, 3, 4}, {2, 6, 4}, {2, 6, 5}),
      C("batch broadcast: q [2,3,4,8], k [3,6,8], v [1,3,6,8]", {2, 3, 4, 8}, {3, 6, 8}, {1, 3, 6, 8}),
      C("2-D [5,4], S 7, Ev 3", {5, 4}, {7, 4}, {7, 3}),
      C("bool mask [4,6] broadcast over [2,2,4,6]", {2, 2, 4, 8}, {2, 2, 6, 8}, {2, 2, 6, 8}, {4, 6}),
      C("float mask [2,1,4,6] added", {2, 3, 4, 8}, {2, 3, 6, 8}, {2, 3, 6, 8}, {2, 1, 4, 6}, true),
      C("is_causal, L = S = 5", {2, 5, 4}, {2, 5, 4}, {2, 5, 4}, {}, false, true),
      C("is_causal, L 3 < S 6 (keys j > i hidden)", {2, 3, 4}, {2, 6, 4}, {2, 6, 4}, {}, false, true),
      C("scale 0.3 given", {3, 4, 6}, {3, 5, 6}, {3, 5, 6}, {}, false, false, 0.3),
      C("key a transposed view [2,7,16]", {2, 5, 16}, {2, 7, 16}, {2, 7, 16}, {}, false, false, 0.0, 0.0,
        Layout::kTransposed),
      C("long rows: S 300, E 64", {1, 2, 9, 64}, {1, 2, 300, 64}, {1, 2, 300, 64}, {}, false, false, 0.0, 0.0,
        Layout::kContiguous, false),
      C("zero-size batch [0,3,4]", {0, 3, 4}, {0, 5, 4}, {0, 5, 4}),
      C("error: dropout_p 0.1 (inference only)", {2, 3, 4}, {2, 3, 4}, {2, 3, 4}, {}, false, false, 0.0, 0.1),
      C("error: is_causal with attn_mask", {2, 3, 4}, {2, 3, 4}, {2, 3, 4}, {3, 3}, false, true),
      C("error: key's E 5 vs query's 4", {2, 3, 4}, {2, 3, 5}, {2, 3, 4}),
      C("error: value's S 4 vs key's 3", {2, 3, 4}, {2, 3, 4}, {2, 4, 4}),
      C("error: mask [3,4] not broadcastable to [2,3,3]", {2, 3, 4}, {2, 3, 4}, {2, 3, 4}, {3, 4}),
      C("error: query of rank 1", {4}, {2, 3, 4}, {2, 3, 4}),
  };
  std::vector<Sample> out;
  for (const Case& c : cases) {
    Sample s;
    s.desc = c.desc;
    s.quick = c.quick;
    s.expect_error = std::string(c.desc).rfind("error:", 0) == 0;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.q, dom(-2, 2))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.k, dom(-2, 2), c.key_layout)));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, c.v, dom(-2, 2))));
    if (c.mask.empty()) {
      s.args.push_back(Arg::none());
    } else {
      s.args.push_back(Arg::tensor_of(make_input(rng, c.float_mask ? d : B, c.mask, dom(-2, 2))));
    }
    s.args.push_back(Arg::double_of(c.dropout));
    s.args.push_back(Arg::bool_of(c.causal));
    s.args.push_back(c.scale != 0.0 ? Arg::double_of(c.scale) : Arg::none());
    out.push_back(std::move(s));
  }
  {
    // Row 1 of the bool mask is all False: torch gives NaN for that row.
    Sample s;
    s.desc = "bool mask with a row all False (NaN row, as torch)";
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 3, 4}, dom(-2, 2))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 4, 4}, dom(-2, 2))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {2, 4, 4}, dom(-2, 2))));
    TensorInput m = tensor_of_values(B, {1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0});
    m.t.sizes = {3, 4};
    s.args.push_back(Arg::tensor_of(std::move(m)));
    s.args.push_back(Arg::double_of(0.0));
    s.args.push_back(Arg::bool_of(false));
    s.args.push_back(Arg::none());
    out.push_back(std::move(s));
  }
  return out;
}

// Row-major strides of `sizes`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) st[i - 1] = st[i] * sizes[i];
  return st;
}

// Offset in `t` of batch index `idx` (the output's batch dims, nb of them)
// plus row `row` of its last-but-one dim: broadcasting as torch (missing
// leading dims and size-1 dims read index 0).
int64_t offset_of(const HostTensor& t, const std::vector<int64_t>& idx, int64_t row) {
  const std::vector<int64_t> st = strides_of(t.sizes);
  const int64_t n = t.ndim(), nb = static_cast<int64_t>(idx.size());
  int64_t off = (t.sizes[static_cast<size_t>(n - 2)] == 1 ? 0 : row) * st[static_cast<size_t>(n - 2)];
  for (int64_t d = 0; d < n - 2; ++d) {
    const int64_t od = nb - (n - 2) + d;
    if (t.sizes[static_cast<size_t>(d)] != 1) off += idx[static_cast<size_t>(od)] * st[static_cast<size_t>(d)];
  }
  return off;
}

Expected attention_reference(const std::string&, const Sample& s) {
  const HostTensor& q = tensor_arg(s, 0);
  const HostTensor& k = tensor_arg(s, 1);
  const HostTensor& v = tensor_arg(s, 2);
  const HostTensor* mask = s.args.at(3).kind == Arg::kTensor ? &s.args[3].tensor.t : nullptr;
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2 || (mask != nullptr && mask->ndim() < 2)) {
    return reference_error("query, key, value and attn_mask need rank >= 2 here");
  }
  const bool causal = s.args.at(5).b;
  const int64_t L = q.sizes.end()[-2], E = q.sizes.back(), S = k.sizes.end()[-2], Ev = v.sizes.back();
  const double scale = s.args.at(6).kind == Arg::kDouble ? s.args[6].d : 1.0 / std::sqrt(static_cast<double>(E));
  // The broadcast batch sizes.
  size_t nb = 0;
  for (const HostTensor* t : {&q, &k, &v}) nb = std::max(nb, t->sizes.size() - 2);
  std::vector<int64_t> batch(nb, 1);
  for (const HostTensor* t : {&q, &k, &v}) {
    const size_t lead = nb - (t->sizes.size() - 2);
    for (size_t d = 0; d + 2 < t->sizes.size(); ++d) {
      if (t->sizes[d] != 1) batch[lead + d] = t->sizes[d];
    }
  }
  HostTensor o;
  o.dtype = q.dtype;
  o.sizes = batch;
  o.sizes.push_back(L);
  o.sizes.push_back(Ev);
  o.values.assign(static_cast<size_t>(o.numel()), 0.0);
  std::vector<double> mag(o.values.size(), 0.0);
  int64_t nbatch = 1;
  for (int64_t b : batch) nbatch *= b;
  std::vector<int64_t> idx(nb, 0);
  std::vector<double> p(static_cast<size_t>(S));
  const std::vector<int64_t> mst = mask != nullptr ? strides_of(mask->sizes) : std::vector<int64_t>();
  for (int64_t b = 0; b < nbatch; ++b) {
    for (int64_t r = b, d = static_cast<int64_t>(nb) - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = r % batch[static_cast<size_t>(d)];
      r /= batch[static_cast<size_t>(d)];
    }
    for (int64_t i = 0; i < L; ++i) {
      const int64_t qo = offset_of(q, idx, i);
      double mx = -INFINITY, spread = 0.0;
      for (int64_t j = 0; j < S; ++j) {
        const int64_t ko = offset_of(k, idx, j);
        double dot = 0.0, absdot = 0.0;
        for (int64_t e = 0; e < E; ++e) {
          dot += q.values[static_cast<size_t>(qo + e)] * k.values[static_cast<size_t>(ko + e)];
          absdot += std::fabs(q.values[static_cast<size_t>(qo + e)] * k.values[static_cast<size_t>(ko + e)]);
        }
        double sc = dot * scale;
        absdot *= std::fabs(scale);
        if (causal && j > i) sc = -INFINITY;
        if (mask != nullptr) {
          const int64_t mo = offset_of(*mask, idx, i) + (mask->sizes.back() == 1 ? 0 : j * mst.back());
          const double m = mask->values[static_cast<size_t>(mo)];
          if (mask->dtype == DType::kBool) {
            if (m == 0.0) sc = -INFINITY;
          } else {
            sc += m;
            absdot += std::fabs(m);
          }
        }
        p[static_cast<size_t>(j)] = sc;
        mx = std::max(mx, sc);
        spread = std::max(spread, absdot);
      }
      double sum = 0.0;
      for (int64_t j = 0; j < S; ++j) sum += std::exp(p[static_cast<size_t>(j)] - mx);
      const size_t oo = static_cast<size_t>((b * L + i) * Ev);
      for (int64_t c = 0; c < Ev; ++c) {
        double acc = 0.0, absacc = 0.0;
        for (int64_t j = 0; j < S; ++j) {
          const double pj = std::exp(p[static_cast<size_t>(j)] - mx) / sum;
          const double vj = v.values[static_cast<size_t>(offset_of(v, idx, j) + c)];
          acc += pj * vj;
          absacc += std::fabs(pj * vj);
        }
        o.values[oo + static_cast<size_t>(c)] = mx == -INFINITY ? NAN : acc;
        // A score's rounding (its E-term dot product and the mask) moves its
        // weight by about that much relative: the weighted |v| sum, scaled
        // by the largest score magnitude, bounds the effect on the output.
        mag[oo + static_cast<size_t>(c)] = absacc * (2.0 + spread);
      }
    }
  }
  Expected e = single_output(std::move(o));
  e.mag.push_back(std::move(mag));
  e.reduce_len = E + S + 2;
  return e;
}

}  // namespace

void register_attention_ops(std::vector<OpDef>* defs) {
  defs->push_back({"scaled_dot_product_attention", attention_samples, attention_reference, 0.0});
}

}  // namespace bpc
