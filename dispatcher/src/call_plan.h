// Call plans (backplane/call_plan.h): what a call signature decides, worked
// out once (dispatch_plan.cpp) and run for every call of that signature
// (bp_plan_call, and bp_op_call through the operator's plan cache).
#pragma once

#include <cstring>
#include <memory>

#include "route.h"
#include "tensor.h"

struct bp_call_plan_t {
  bp_context_t* ctx = nullptr;
  const bp_op_t* op = nullptr;
  // Explicit plans only (they may outlive the context): false once it is destroyed.
  std::shared_ptr<std::atomic<bool>> alive;
  uint64_t generation = 0;  // ctx->route_generation when prepared
  int32_t num_args = 0;
  uint64_t key[bp::core::kMaxArgs] = {};  // PackArg of each argument
  bp_arg_signature_t sig[bp::core::kMaxArgs] = {};

  // Decided at prepare time.
  int32_t route_kind = BP_PLAN_ROUTE_ERROR;  // enum bp_plan_route
  bp::core::Status route_status;             // BP_PLAN_ROUTE_ERROR: why
  bp::core::Route route;                     // native / backend fallback / host fallback
  bp::core::DeviceState* dev = nullptr;      // the dispatch key's device (nullptr on a device error)
  bp_device_t device{0, 0};                  // the dispatch key
  bool fast = false;                         // FastRun serves the calls (plan_run.h)
  DLDataType out_dtype{};                    // fast: the output's dtype
  bool check_sizes = false;                  // fast: the output's byte size must fit int64 (not fill_)
};

namespace bp::core {

// The signature of one argument as a 64-bit key: kind (bits 0-3); for
// tensors rank + 1 (4-8), backend (9-14, < kMaxBackends), device index (15-31) and the
// DLDataType (32-63). False where it does not fit (a NULL tensor, an
// unknown kind, a device beyond the bits): such calls are not cached.
inline bool PackSignature(const bp_arg_signature_t& s, uint64_t* out) {
  if (s.kind < 0 || s.kind > BP_VALUE_STRING) return false;
  if (s.kind != BP_VALUE_TENSOR && s.kind != BP_VALUE_TENSOR_LIST) {
    *out = static_cast<uint64_t>(s.kind);
    return true;
  }
  if (s.ndim < 0 || s.ndim > BP_MAX_NDIM || s.device.backend < 0 || s.device.backend >= kMaxBackends ||
      s.device.index < 0 || s.device.index >= (1 << 17)) {
    return false;
  }
  *out = SignatureKey(s.kind, s.ndim, s.dtype, s.device);
  return true;
}

// The signature of a real argument (call_plan.h's rule for tensor lists).
// False for a NULL tensor or list element.
bool SignatureOf(const bp_value_t& v, bp_arg_signature_t* out);

// PackSignature(SignatureOf(v)), inline for the tensor case on the call path.
inline bool PackArg(const bp_value_t& v, uint64_t* out) {
  if (__builtin_expect(v.kind == BP_VALUE_TENSOR, 1)) {
    const bp_tensor_t* t = v.u.tensor;
    if (t == nullptr) return false;
    *out = t->sig_key;
    return *out != 0;
  }
  if (v.kind != BP_VALUE_TENSOR_LIST) {
    if (v.kind < 0 || v.kind > BP_VALUE_STRING) return false;
    *out = static_cast<uint64_t>(v.kind);
    return true;
  }
  bp_arg_signature_t s;
  return SignatureOf(v, &s) && PackSignature(s, out);
}

// A new plan of `op` for `sig` (num_args entries). Caller is inside a
// ReadSection. Errors: those of bp_op_prepare.
Status PreparePlan(bp_context_t* ctx, const bp_op_t* op, const bp_arg_signature_t* sig, int32_t num_args,
                   std::unique_ptr<bp_call_plan_t>* out);

// The route of `op` on the device `dev` (the one place a route is decided).
// `dtypes`: the call's compute dtypes (a DtypeBit mask) when the signature
// decides them, else 0.
void DecidePlanRoute(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, uint32_t dtypes, Status* status,
                     Route* route);

// Frees the plans the operators' caches held (the context's destructor).
void FreeCachedPlans(bp_context_t* ctx);

}  // namespace bp::core
