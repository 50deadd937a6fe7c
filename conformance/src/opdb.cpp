#include "opdb.h"

#include <stdexcept>

#include "gen.h"

namespace bpc {

const std::vector<OpClaim>& op_claims() {
  static const std::vector<OpClaim> claims = {
#include "op_claims.inc"
  };
  return claims;
}

const OpClaim* find_claim(const std::string& name) {
  for (const OpClaim& c : op_claims()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

static const std::vector<OpDef>& opdefs() {
  static const std::vector<OpDef> defs = [] {
    std::vector<OpDef> d;
    register_binary_ops(&d);
    register_unary_ops(&d);
    register_reduction_ops(&d);
    register_linalg_ops(&d);
    register_nn_ops(&d);
    register_attention_ops(&d);
    register_resample_ops(&d);
    register_indexing_ops(&d);
    register_gather_scatter_ops(&d);
    register_conv_transpose_ops(&d);
    register_sort_ops(&d);
    register_recurrent_ops(&d);
    register_quantize_ops(&d);
    register_copy_ops(&d);
    register_view_ops(&d);
    return d;
  }();
  return defs;
}

const OpDef* find_opdef(const std::string& functional) {
  for (const OpDef& d : opdefs()) {
    if (functional == d.name) return &d;
  }
  return nullptr;
}

namespace {

// A tensor argument the variant writes: its sizes and dtype must be the result's.
bool can_write_result(const TensorInput& in, const HostTensor& result) {
  return in.layout != Layout::kExpanded && !in.cpu_scalar && in.t.dtype == result.dtype &&
         in.t.sizes == result.sizes;
}

// The out= tensor: result sizes and dtype, filled with a sentinel the kernel
// must overwrite, unlike the expected value (`like`'s) at every element.
Arg out_arg(const HostTensor& like) {
  Arg a;
  a.kind = Arg::kOut;
  a.tensor.t = like;
  for (double& v : a.tensor.t.values) v = dtype_value_unlike(like.dtype, v);
  return a;
}

Tolerance tolerance_for(const OpDef& def, const Sample& s, const Expected& e) {
  const DType out = e.outputs.empty() ? DType::kFloat32 : e.outputs[0].dtype;
  Tolerance t = default_tolerance(out);
  t.ulp = s.ulp_override >= 0.0 ? s.ulp_override : def.ulp;
  // float64 references are themselves rounded: allow one more ULP for them.
  if (t.ulp > 0.0 && out == DType::kFloat64 && t.ulp > 0.5) t.ulp += 1.0;
  if (e.reduce_len > 0 && dtype_is_float(out)) {
    t.reduce_eps = static_cast<double>(e.reduce_len) * accumulation_epsilon(out);
  }
  return t;
}

}  // namespace

std::vector<Case> make_cases(const OpClaim& claim, DType d, uint64_t seed, bool full,
                             std::string* why) {
  std::vector<Case> cases;
  const OpDef* def = find_opdef(claim.functional);
  if (def == nullptr) {
    if (why) *why = std::string("bp-conformance has no samples for ") + claim.functional;
    return cases;
  }
  // Seeded by the functional name so every variant sees the same inputs.
  const uint64_t s = hash_name(seed, std::string(claim.functional) + "/" + dtype_name(d));
  // Always generate the full tier, so sample numbers and values do not depend
  // on the tier; --quick then drops the samples not marked quick.
  std::vector<Sample> samples = def->samples(claim.functional, d, s, true);
  std::vector<OverlapSample> overlaps = overlap_samples(claim, *def, d, samples);
  int index = 0;
  bool promotion_error_added = false;
  for (Sample& sample : samples) {
    Case c;
    c.index = index++;
    if (!full && !sample.quick) continue;
    if (!sample.expect_error) {
      try {
        c.expected = def->reference(claim.functional, sample);
      } catch (const std::exception& ex) {
        c.expected.error = ex.what();
      }
    }
    if (claim.variant == 1) {
      // In-place: self (argument 0) is written; skip samples whose result
      // has another dtype or size than self.
      if (sample.args.empty() || sample.args[0].kind != Arg::kTensor) continue;
      if (sample.args[0].tensor.layout == Layout::kExpanded || sample.args[0].tensor.cpu_scalar) continue;
      if (!sample.expect_error && !c.expected.outputs.empty() &&
          c.expected.outputs[0].dtype != sample.args[0].tensor.t.dtype &&
          c.expected.outputs[0].sizes == sample.args[0].tensor.t.sizes && !promotion_error_added) {
        // As torch: a result that promotes (exp_ of int32 -> float32) cannot
        // be written back into self; the call must fail and leave self alone.
        promotion_error_added = true;
        sample.expect_error = true;
        sample.desc = std::string("error: in-place result ") + dtype_name(c.expected.outputs[0].dtype) +
                      " cannot be written to " + dtype_name(sample.args[0].tensor.t.dtype) + " self (" +
                      sample.desc + ")";
        c.expected = Expected();
      }
      if (!sample.expect_error &&
          (c.expected.outputs.empty() || !can_write_result(sample.args[0].tensor, c.expected.outputs[0]))) {
        continue;
      }
      sample.written_arg = 0;
      sample.desc += " [in-place]";
    } else if (claim.variant == 2) {
      HostTensor like;
      if (sample.expect_error) {
        like.dtype = sample.args[0].kind == Arg::kTensor ? sample.args[0].tensor.t.dtype : d;
        like.sizes = {2, 3};
        like.values.assign(6, 0.0);
      } else {
        if (c.expected.outputs.empty()) continue;
        like = c.expected.outputs[0];
      }
      sample.args.push_back(out_arg(like));
      sample.written_arg = static_cast<int>(sample.args.size()) - 1;
      sample.desc += " [out=]";
    }
    c.tol = tolerance_for(*def, sample, c.expected);
    c.sample = std::move(sample);
    cases.push_back(std::move(c));
  }
  for (OverlapSample& o : overlaps) {
    Case c;
    c.index = index++;
    c.expected = std::move(o.expected);
    c.tol = tolerance_for(*def, o.sample, c.expected);
    c.sample = std::move(o.sample);
    cases.push_back(std::move(c));
  }
  if (cases.empty() && why) *why = "no sample fits this variant";
  return cases;
}

}  // namespace bpc
