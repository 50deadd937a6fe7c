// Catching a kernel that writes its output and then fails or declines. The
// dispatcher hides it: a declined call (UNIMPLEMENTED) is served by the CPU
// fallback, which rewrites the output, and a failed functional call frees its
// output. So the case is called again through the operator's out= variant,
// whose out tensor the runner owns: filled with poison (a value unlike the
// expected one at every element), with the fallback refused (strict), the
// backend's kernel is the only thing that can touch it. A failed call that
// changed it wrote before failing.
#include <sstream>

#include "runner.h"

namespace bpc {

namespace {

// The out= variant of `claim`'s functional operator, nullptr if it has none.
const OpClaim* out_variant(const OpClaim& claim) {
  if (claim.variant == 2) return &claim;
  for (const OpClaim& c : op_claims()) {
    if (c.variant == 2 && std::string(c.functional) == claim.functional) return &c;
  }
  return nullptr;
}

// Poison for element i: a value unlike the expected one.
double poison_at(DType d, const std::vector<double>& expected, size_t i) {
  return dtype_value_unlike(d, i < expected.size() ? expected[i] : 0.0);
}

}  // namespace

void Runner::check_write_on_error(const OpEntry& op, const Case& c, int32_t backend, bp_device_t dev, CaseResult* r) {
  if (op.claim == nullptr || op.claim->variant == 1) return;
  const OpClaim* out_claim = out_variant(*op.claim);
  bp_op_t* out_op = out_claim == nullptr ? nullptr : find_op(out_claim->name);
  if (out_op == nullptr) return;
  int32_t kind = BP_DISPATCH_NONE;
  if (bp_op_dispatch_kind(ctx_, out_op, backend, &kind) != BP_STATUS_OK || kind != BP_DISPATCH_NATIVE) return;

  Sample probe = c.sample;
  const std::vector<double> no_values;
  const std::vector<double>& expected = c.expected.outputs.empty() ? no_values : c.expected.outputs[0].values;
  if (op.claim->variant == 0) {  // append the out= tensor, as make_cases does for the out= rows
    Arg out;
    out.kind = Arg::kOut;
    if (!c.expected.outputs.empty()) {
      out.tensor.t = c.expected.outputs[0];
    } else {  // a bad input: the out= rows use a [2, 3] tensor of self's dtype
      out.tensor.t.dtype =
          !probe.args.empty() && probe.args[0].kind == Arg::kTensor ? probe.args[0].tensor.t.dtype : DType::kFloat32;
      out.tensor.t.sizes = {2, 3};
      out.tensor.t.values.assign(6, 0.0);
    }
    probe.args.push_back(std::move(out));
    probe.written_arg = static_cast<int>(probe.args.size()) - 1;
  }
  if (probe.written_arg < 0) return;
  const size_t w = static_cast<size_t>(probe.written_arg);
  // An out= that is a view of an input (overlap cases) shows the input's
  // values: it cannot be poisoned apart from it. The case's own run already
  // checked that a refused call left it unchanged.
  if (probe.args[w].tensor.alias_of >= 0) return;
  HostTensor& poisoned = probe.args[w].tensor.t;
  for (size_t i = 0; i < poisoned.values.size(); ++i) poisoned.values[i] = poison_at(poisoned.dtype, expected, i);

  TensorPool pool;
  CallArgs call;
  std::string err;
  if (!make_args(probe, dev, &pool, &call, &err)) return;
  bp_context_set_strict_fallback(ctx_, 1);  // a declined call fails instead of falling back
  bp_tensor_t* result = nullptr;
  const bp_status_t st =
      bp_op_call(ctx_, out_op, call.values.data(), static_cast<int32_t>(call.values.size()), &result, 1);
  const std::string message = st == BP_STATUS_OK ? "" : bp_last_error_message();
  bp_context_set_strict_fallback(ctx_, 0);
  pool.hold(result);
  if (st == BP_STATUS_OK) return;  // the kernel completed this time: nothing to say

  DType dtype;
  std::vector<int64_t> sizes;
  std::vector<double> now;
  if (!read_tensor(call.tensors[w], &dtype, &sizes, &now, &err) || now.size() != poisoned.values.size()) return;
  size_t changed = 0;
  for (size_t i = 0; i < now.size(); ++i) changed += !(now[i] == poisoned.values[i]);
  if (changed == 0) return;
  // Under strict mode a declined call fails with FAILED_PRECONDITION ("strict
  // mode: ... has no kernel ... for this call (<the kernel's message>) ...").
  const bool declined = st == BP_STATUS_FAILED_PRECONDITION && message.find("strict mode") != std::string::npos;
  std::ostringstream os;
  os << "the kernel wrote its output, then returned "
     << (declined ? "UNIMPLEMENTED (declined the call)" : bp_status_name(st)) << ": called as " << out_claim->name
     << " with the fallback refused, it changed " << changed << " of " << now.size()
     << " elements of the poisoned out= tensor and failed with \"" << message << "\"";
  if (r->outcome == Outcome::kFallbackPass || r->outcome == Outcome::kNativePass || r->outcome == Outcome::kCastPass) {
    os << "; the original call passed only because the fallback or the error path hid the write";
  } else if (!r->message.empty()) {
    os << "; the original call: " << r->message;
  }
  r->outcome = Outcome::kWroteOnError;
  r->message = os.str();
}

}  // namespace bpc
