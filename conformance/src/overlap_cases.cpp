// Overlap cases of the in-place and out= variants of pointwise operators
// (libtorch's rules, as the core applies them): the written tensor may be
// exactly an input, but may not partially overlap one, nor overlap itself.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "opdb.h"

namespace bpc {
namespace {

constexpr int64_t kN = 3;

// A 3x3 tensor of dtype d with small values every pointwise operator takes
// for every dtype (no zero divisor, no overflow in pow, in every domain that
// matters here).
HostTensor square(DType d) {
  static const double kNumbers[9] = {1, 2, 3, 2, 3, 1, 3, 1, 2};
  static const double kBools[9] = {1, 0, 1, 0, 1, 1, 1, 1, 0};
  HostTensor t;
  t.dtype = d;
  t.sizes = {kN, kN};
  t.values.assign(d == DType::kBool ? kBools : kNumbers, (d == DType::kBool ? kBools : kNumbers) + 9);
  return t;
}

HostTensor transposed(const HostTensor& t) {
  HostTensor r = t;
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < kN; ++j)
      r.values[static_cast<size_t>(i * kN + j)] = t.values[static_cast<size_t>(j * kN + i)];
  }
  return r;
}

// The values of t's first row broadcast over kN rows (an expand of [1, kN]).
TensorInput expanded_row(const HostTensor& t) {
  TensorInput in;
  in.t = t;
  for (int64_t i = 1; i < kN; ++i) {
    for (int64_t j = 0; j < kN; ++j) in.t.values[static_cast<size_t>(i * kN + j)] = t.values[static_cast<size_t>(j)];
  }
  in.layout = Layout::kExpanded;
  in.expand_from = {1, kN};
  return in;
}

TensorInput alias_of(int arg, const HostTensor& values, Layout layout) {
  TensorInput in;
  in.t = values;
  in.layout = layout;
  in.alias_of = arg;
  return in;
}

}  // namespace

std::vector<OverlapSample> overlap_samples(const OpClaim& claim, const OpDef& def, DType d,
                                           const std::vector<Sample>& samples) {
  std::vector<OverlapSample> out;
  if (claim.variant == 0 || std::string(claim.kind) != "pointwise" || std::string(claim.meta) == "ternary_where") {
    return out;
  }
  // The scalar arguments (alpha, rounding mode) of the first sample that
  // takes only tensors of dtype d on the device.
  const Sample* tmpl = nullptr;
  for (const Sample& s : samples) {
    bool fits = !s.expect_error && !s.args.empty() && s.args[0].kind == Arg::kTensor;
    for (const Arg& a : s.args) {
      fits = fits && a.kind != Arg::kTensorList &&
             (a.kind != Arg::kTensor || (a.tensor.t.dtype == d && !a.tensor.cpu_scalar));
    }
    if (fits) {
      tmpl = &s;
      break;
    }
  }
  if (tmpl == nullptr) return out;
  const HostTensor x = square(d);
  Sample base = *tmpl;
  base.quick = true;
  base.ulp_override = -1.0;
  std::vector<int> tensors;
  for (size_t i = 0; i < base.args.size(); ++i) {
    if (base.args[i].kind != Arg::kTensor) continue;
    base.args[i].tensor = TensorInput();
    base.args[i].tensor.t = x;
    tensors.push_back(static_cast<int>(i));
  }
  // Only where the result is written back as it is (self's dtype and sizes).
  Expected expected;
  try {
    expected = def.reference(claim.functional, base);
  } catch (const std::exception&) {
    return out;
  }
  if (expected.outputs.empty() || expected.outputs[0].dtype != d || expected.outputs[0].sizes != x.sizes) return out;

  auto add = [&](Sample s, std::string desc, bool error) {
    s.desc = std::move(desc);
    s.expect_error = error;
    out.push_back(OverlapSample{std::move(s), error ? Expected() : expected});
  };
  if (claim.variant == 1) {  // in-place: self (argument 0) is written
    base.written_arg = 0;
    if (tensors.size() >= 2) {
      Sample same = base;
      same.args[static_cast<size_t>(tensors[1])].tensor = alias_of(0, x, Layout::kContiguous);
      add(same, "overlap: the second input is self (exact alias) [in-place]", false);
      Sample partial = base;
      partial.args[static_cast<size_t>(tensors[1])].tensor = alias_of(0, transposed(x), Layout::kTransposed);
      add(partial, "error: overlap: the second input is self transposed (partial overlap) [in-place]", true);
    }
    Sample internal = base;
    internal.args[0].tensor = expanded_row(x);
    add(internal, "error: overlap: self is a broadcast view (stride 0, internal overlap) [in-place]", true);
  } else {  // out=: the trailing out tensor is written
    base.written_arg = static_cast<int>(base.args.size());
    auto with_out = [&](TensorInput t) {
      Sample s = base;
      Arg a;
      a.kind = Arg::kOut;
      a.tensor = std::move(t);
      s.args.push_back(std::move(a));
      return s;
    };
    add(with_out(alias_of(0, x, Layout::kContiguous)), "overlap: out is self (exact alias) [out=]", false);
    add(with_out(alias_of(0, transposed(x), Layout::kTransposed)),
        "error: overlap: out is self transposed (partial overlap) [out=]", true);
    add(with_out(expanded_row(x)), "error: overlap: out is a broadcast view (stride 0, internal overlap) [out=]", true);
  }
  return out;
}

}  // namespace bpc
