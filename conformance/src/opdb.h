// The op database: what ops.yaml claims (generated at build time) and, per
// functional operator, how to make sample inputs and the suite's own
// reference results. Variants (in-place, out=) reuse their functional
// operator's samples and reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare.h"
#include "sample.h"

namespace bpc {

// One row of the claims table generated from abi/ops.yaml.
struct OpClaim {
  const char* name;        // "add_.Tensor"
  const char* functional;  // "add.Tensor"
  int variant;             // 0 functional, 1 in-place, 2 out=
  const char* kind;        // "pointwise", "view", "composite", ...
  const char* meta;        // meta family, as in ops.yaml
  uint32_t dtype_mask;     // bit (1 << column) per claimed dtype
  const char* tolerance_reason;  // ops.yaml's tolerance override reason, "" if none
  bool claims(DType d) const { return (dtype_mask >> static_cast<int>(d)) & 1u; }
};
const std::vector<OpClaim>& op_claims();
const OpClaim* find_claim(const std::string& name);  // nullptr if not in ops.yaml

using SampleFn = std::vector<Sample> (*)(const std::string& op, DType d, uint64_t seed, bool full);
using ReferenceFn = Expected (*)(const std::string& op, const Sample& s);

// How the suite tests one functional operator.
struct OpDef {
  const char* name;       // functional name, "add.Tensor"
  SampleFn samples;
  ReferenceFn reference;
  double ulp;             // ULP bound for float32/float64 outputs; 0: rtol/atol
};
const OpDef* find_opdef(const std::string& functional);

// One runnable case: the sample (args for the operator being tested,
// variant args included), what the reference says, and the tolerance.
struct Case {
  int index = 0;          // the sample number (--sample)
  Sample sample;
  Expected expected;
  Tolerance tol;
};

// Every case of `claim` x `d` for `seed` (deterministic). `full` selects the
// full tier. Variants drop samples they cannot take (an in-place result of
// another dtype or size). Returns an empty list when the suite has no
// samples for the operator (`*why` says so).
std::vector<Case> make_cases(const OpClaim& claim, DType d, uint64_t seed, bool full,
                             std::string* why);

// The overlap cases of an in-place or out= variant of a pointwise operator
// (overlap_cases.cpp): the written tensor exactly an input (must pass),
// partially overlapping one or with a broadcast dim (must be refused, nothing
// written). Samples in the variant's form (out= appended, written_arg set);
// `samples` are the functional operator's, for its scalar arguments. Empty
// for other operators and where the result cannot be written back.
struct OverlapSample {
  Sample sample;
  Expected expected;
};
std::vector<OverlapSample> overlap_samples(const OpClaim& claim, const OpDef& def, DType d,
                                           const std::vector<Sample>& samples);

// Family registration (one per reference/*.cpp).
void register_binary_ops(std::vector<OpDef>* defs);
void register_unary_ops(std::vector<OpDef>* defs);
void register_reduction_ops(std::vector<OpDef>* defs);
void register_linalg_ops(std::vector<OpDef>* defs);
void register_nn_ops(std::vector<OpDef>* defs);
void register_attention_ops(std::vector<OpDef>* defs);
void register_resample_ops(std::vector<OpDef>* defs);
void register_indexing_ops(std::vector<OpDef>* defs);
void register_gather_scatter_ops(std::vector<OpDef>* defs);
void register_conv_transpose_ops(std::vector<OpDef>* defs);
void register_sort_ops(std::vector<OpDef>* defs);
void register_recurrent_ops(std::vector<OpDef>* defs);
void register_quantize_ops(std::vector<OpDef>* defs);
void register_copy_ops(std::vector<OpDef>* defs);
void register_view_ops(std::vector<OpDef>* defs);

}  // namespace bpc
