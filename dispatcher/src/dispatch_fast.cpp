// Which operators the pointwise fast path (plan_run.h's FastRun) may serve:
// worked out once per operator, when it is defined.
#include <cstring>

#include "call_plan.h"
#include "dispatch_internal.h"
#include "dtype.h"
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core {
namespace {

// Meta families whose result depends on the argument kinds, dtypes, devices
// and ranks only (never on a value), so a plan can hold it.
bool DecidedBySignature(const MetaFunctions* m) {
  using namespace meta;  // NOLINT: the family tables
  return m == &kBinaryMeta || m == &kTrueDivideMeta || m == &kComparisonMeta || m == &kUnaryNoBoolMeta ||
         m == &kUnaryFloatMeta || m == &kUnaryFloatOnlyMeta || m == &kFillMeta;
}

}  // namespace

void SetupFastPath(bp_op_t* op) {
  op->fast = false;
  if (op->kind != OpKind::kKernel || op->meta == nullptr || op->num_returns != 1) return;
  if (!DecidedBySignature(op->meta)) return;
  const Schema& s = op->schema;
  for (int32_t i = 0; i < op->num_args; ++i) {
    const Argument& a = s.arguments[i];
    if (a.type == ArgType::kTensor && !a.optional) {
      op->fast_arg[i] = FastArg::kTensor;
    } else if (a.type == ArgType::kScalar && !a.optional) {
      op->fast_arg[i] = FastArg::kScalar;
    } else {
      return;  // strings (gelu's approximate) are values the meta function reads
    }
  }
  const int32_t nmeta = op->num_meta_args;
  if (nmeta < 1 || op->fast_arg[0] != FastArg::kTensor) return;
  // The mutated argument: the trailing out= tensor, or self.
  const int32_t mut = op->mutated_arg;
  if (op->variant == OpVariant::kOut) {
    if (mut != op->num_args - 1 || mut != nmeta || op->fast_arg[mut] != FastArg::kTensor) return;
  } else if (mut > 0) {
    return;
  }
  op->fast_num_inputs = 0;
  for (int32_t i = 0; i < nmeta; ++i) {
    if (op->fast_arg[i] == FastArg::kTensor) op->fast_inputs[op->fast_num_inputs++] = static_cast<int8_t>(i);
  }
  op->fast = op->fast_num_inputs > 0;
}

}  // namespace bp::core
