// ONNX Einsum -> Backplane permute, reshape, expand, sum and matmul (the op
// model has no einsum). The equation is parsed on the host; a label repeated
// within one operand takes the diagonal (a 0/1 mask, then a sum); labels no
// later operand or the output needs are summed out early; operands are then
// contracted left to right, each pair as one batched matmul
// [batch, m, k] x [batch, k, n]; the result is permuted to the output order.
// Ellipsis dims broadcast, aligned from the right.
#include <algorithm>
#include <cctype>
#include <string>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

constexpr int kEllipsis = 256;  // labels of ellipsis dims: 256, 257, ...

struct Term {
  bp_tensor_t* t = nullptr;
  std::vector<int> labels;  // one per dim of t
};

[[noreturn]] void bad_equation(const OnnxNode& n, const std::string& eq, const std::string& why) {
  throw CallFailed{n.op_type + ": INVALID_ARGUMENT: equation '" + eq + "': " + why};
}

// Labels of one term ("ab...c"); `rank` the operand's rank (-1 for the
// output), `ell` the number of ellipsis dims of the widest operand.
std::vector<int> parse_term(const OnnxNode& n, const std::string& eq, const std::string& s, int64_t rank, int64_t ell,
                            int64_t* ell_here) {
  std::vector<int> letters;
  size_t dots = std::string::npos;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s.compare(k, 3, "...") == 0 && dots == std::string::npos) {
      dots = letters.size();
      k += 2;
    } else if (std::isalpha(static_cast<unsigned char>(s[k]))) {
      letters.push_back(static_cast<unsigned char>(s[k]));
    } else {
      bad_equation(n, eq, std::string("unexpected character '") + s[k] + "'");
    }
  }
  const int64_t e = dots == std::string::npos ? 0 : (rank < 0 ? ell : rank - static_cast<int64_t>(letters.size()));
  if (e < 0 || (dots == std::string::npos && rank >= 0 && rank != static_cast<int64_t>(letters.size())))
    bad_equation(n, eq, "term '" + s + "' does not match an operand of rank " + std::to_string(rank));
  *ell_here = e;
  std::vector<int> out(letters.begin(), letters.begin() + (dots == std::string::npos ? letters.size() : dots));
  for (int64_t j = 0; j < e; ++j) out.push_back(kEllipsis + static_cast<int>(ell - e + j));
  if (dots != std::string::npos) out.insert(out.end(), letters.begin() + static_cast<int64_t>(dots), letters.end());
  return out;
}

bp_tensor_t* sum_dims(Exec& ex, bp_tensor_t* t, std::vector<int64_t> dims) {
  if (dims.empty()) return t;
  std::sort(dims.begin(), dims.end());
  return ex.call("sum.dim_IntList", {vt(t), vl(dims), vb(false)});
}

// Sums out the labels of `a` for which keep(label) is false.
template <typename Keep>
void reduce_unneeded(Exec& ex, Term* a, Keep keep) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t k = 0; k < a->labels.size(); ++k) {
    if (keep(a->labels[k])) {
      kept.push_back(a->labels[k]);
    } else {
      dims.push_back(static_cast<int64_t>(k));
    }
  }
  a->t = sum_dims(ex, a->t, dims);
  a->labels = kept;
}

// Takes the diagonal of every label repeated within the term.
void diagonals(Exec& ex, const OnnxNode& n, const std::string& eq, Term* a) {
  for (size_t p = 0; p < a->labels.size(); ++p) {
    for (size_t q = p + 1; q < a->labels.size(); ++q) {
      if (a->labels[p] != a->labels[q]) continue;
      const std::vector<int64_t> s = sizes_of(a->t);
      if (s[p] != s[q])
        bad_equation(n, eq,
                     "a repeated label spans dims of sizes " + std::to_string(s[p]) + " and " + std::to_string(s[q]));
      HostTensor eye;
      eye.dtype = dtype_of(a->t);
      eye.sizes.assign(s.size(), 1);
      eye.sizes[p] = eye.sizes[q] = s[p];
      for (int64_t i = 0; i < s[p]; ++i) {
        for (int64_t j = 0; j < s[p]; ++j) eye.values.push_back(i == j ? 1.0 : 0.0);
      }
      a->t = sum_dims(ex, ex.call("mul.Tensor", {vt(a->t), vt(ex.upload(eye))}), {static_cast<int64_t>(q)});
      a->labels.erase(a->labels.begin() + static_cast<int64_t>(q));
      --q;
    }
  }
}

bool has(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

int64_t size_of(const Term& a, int l) {
  const std::vector<int64_t> s = sizes_of(a.t);
  for (size_t k = 0; k < a.labels.size(); ++k) {
    if (a.labels[k] == l) return s[k];
  }
  return 1;
}

// a's dims in `order` (labels a lacks become size-1 dims), each expanded to `sizes`.
bp_tensor_t* arrange(Exec& ex, const Term& a, const std::vector<int>& order, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> perm, shape;
  for (int l : order) {
    for (size_t k = 0; k < a.labels.size(); ++k) {
      if (a.labels[k] == l) perm.push_back(static_cast<int64_t>(k));
    }
    shape.push_back(size_of(a, l));
  }
  bp_tensor_t* t = ex.call("permute", {vt(a.t), vl(perm)});
  t = ex.call("reshape", {vt(t), vl(shape)});
  return ex.call("expand", {vt(t), vl(sizes)});
}

// a x b over the labels both hold that `keep` does not need.
template <typename Keep>
Term contract(Exec& ex, Term a, Term b, Keep keep) {
  reduce_unneeded(ex, &a, [&](int l) { return keep(l) || has(b.labels, l); });
  reduce_unneeded(ex, &b, [&](int l) { return keep(l) || has(a.labels, l); });
  std::vector<int> batch, left, mid, right;
  for (int l : a.labels) (has(b.labels, l) ? (keep(l) ? batch : mid) : left).push_back(l);
  for (int l : b.labels) {
    if (!has(a.labels, l)) right.push_back(l);
  }
  std::vector<int64_t> bs, ls, ms, rs;
  int64_t nb = 1, m = 1, k = 1, nn = 1;
  for (int l : batch) nb *= bs.emplace_back(std::max(size_of(a, l), size_of(b, l)));
  for (int l : left) m *= ls.emplace_back(size_of(a, l));
  for (int l : mid) k *= ms.emplace_back(std::max(size_of(a, l), size_of(b, l)));
  for (int l : right) nn *= rs.emplace_back(size_of(b, l));
  std::vector<int> ao = batch, bo = batch;
  ao.insert(ao.end(), left.begin(), left.end());
  ao.insert(ao.end(), mid.begin(), mid.end());
  bo.insert(bo.end(), mid.begin(), mid.end());
  bo.insert(bo.end(), right.begin(), right.end());
  std::vector<int64_t> as = bs, bsz = bs;
  as.insert(as.end(), ls.begin(), ls.end());
  as.insert(as.end(), ms.begin(), ms.end());
  bsz.insert(bsz.end(), ms.begin(), ms.end());
  bsz.insert(bsz.end(), rs.begin(), rs.end());
  bp_tensor_t* x = ex.call("reshape", {vt(arrange(ex, a, ao, as)), vl({nb, m, k})});
  bp_tensor_t* y = ex.call("reshape", {vt(arrange(ex, b, bo, bsz)), vl({nb, k, nn})});
  std::vector<int64_t> out_sizes = bs;
  out_sizes.insert(out_sizes.end(), ls.begin(), ls.end());
  out_sizes.insert(out_sizes.end(), rs.begin(), rs.end());
  Term r;
  r.t = ex.call("reshape", {vt(ex.call("matmul", {vt(x), vt(y)})), vl(out_sizes)});
  r.labels = batch;
  r.labels.insert(r.labels.end(), left.begin(), left.end());
  r.labels.insert(r.labels.end(), right.begin(), right.end());
  return r;
}

}  // namespace

void register_einsum(MapTable* t) {
  (*t)["Einsum"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "matmul", d);
    std::string eq;
    for (char c : n.get_string("equation", "")) {
      if (c != ' ') eq += c;
    }
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (size_t start = 0;;) {
      const size_t comma = lhs.find(',', start);
      terms.push_back(lhs.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (terms.size() != in.size())
      bad_equation(n, eq, std::to_string(terms.size()) + " terms for " + std::to_string(in.size()) + " inputs");
    int64_t ell = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t nd = terms[i].find("...") == std::string::npos ? 0 : 3;
      ell = std::max(ell, bp_tensor_ndim(in[i].t) - static_cast<int64_t>(terms[i].size() - nd));
    }
    std::vector<Term> ops(in.size());
    std::vector<int> all;
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t e = 0;
      ops[i].t = in[i].t;
      ops[i].labels = parse_term(n, eq, terms[i], bp_tensor_ndim(in[i].t), ell, &e);
      all.insert(all.end(), ops[i].labels.begin(), ops[i].labels.end());
    }
    std::vector<int> out;
    if (arrow != std::string::npos) {
      int64_t e = 0;
      out = parse_term(n, eq, eq.substr(arrow + 2), -1, ell, &e);
    } else {
      // Implicit output: the ellipsis dims, then the letters used once, sorted.
      for (int64_t j = 0; j < ell; ++j) out.push_back(kEllipsis + static_cast<int>(j));
      std::vector<int> once;
      for (int l : all) {
        if (l < kEllipsis && std::count(all.begin(), all.end(), l) == 1) once.push_back(l);
      }
      std::sort(once.begin(), once.end());
      out.insert(out.end(), once.begin(), once.end());
    }
    for (int l : out) {
      if (!has(all, l)) bad_equation(n, eq, "an output label appears in no input");
    }
    for (Term& op : ops) diagonals(ex, n, eq, &op);
    Term cur = ops[0];
    for (size_t i = 1; i < ops.size(); ++i) {
      // Labels still needed after this pair: the output's and the later operands'.
      auto keep = [&](int l) {
        if (has(out, l)) return true;
        for (size_t j = i + 1; j < ops.size(); ++j) {
          if (has(ops[j].labels, l)) return true;
        }
        return false;
      };
      cur = contract(ex, cur, ops[i], keep);
    }
    reduce_unneeded(ex, &cur, [&](int l) { return has(out, l); });
    std::vector<int64_t> perm;
    for (int l : out) perm.push_back(std::find(cur.labels.begin(), cur.labels.end(), l) - cur.labels.begin());
    bp_tensor_t* y = ex.call("permute", {vt(cur.t), vl(perm)});
    return {ex.call("contiguous", {vt(y)})};
  };
}

}  // namespace bponnx
