// The route of an operator call, decided once per call before anything is
// cast, copied or allocated (ARCHITECTURE.md section 2, step 6):
//
//   native kernel of the device's backend
//   -> the backend's own boxed fallback
//   -> the host fallback (fallback/): the operator runs on host tensors
//   -> an error naming the operator and the backend.
//
// A kernel may still decline one call at run time (BP_STATUS_UNIMPLEMENTED,
// before writing anything): NextRoute gives what serves it then. Strict mode
// turns the host fallback into FAILED_PRECONDITION here, in one place.
#pragma once

#include <string>

#include "context.h"
#include "registry.h"

namespace bp::core {

enum class RouteKind : uint8_t {
  kNative,           // kernel = the backend's kernel for the operator
  kBackendFallback,  // kernel = the backend's boxed fallback
  kHostFallback,     // the operator runs on the host backend with copies
};

struct Route {
  RouteKind kind = RouteKind::kNative;
  KernelEntry kernel;  // for kNative and kBackendFallback
};

// The route of a call of `op` on a device of backend `backend` whose compute
// dtypes (DtypeBit() of each tensor argument's dtype after the meta
// function's casts; 0 when unknown) are `dtypes`: the native kernel only when
// its dtype mask (register_kernel_dtypes) holds all of them. A native route
// for a call the core casts for is counted as the cast route (CountRoute).
// Errors: FAILED_PRECONDITION (strict mode refuses the host fallback),
// UNIMPLEMENTED (nothing can run it). Lock-free; caller is inside a ReadSection.
Status DecideRoute(bp_context_t* ctx, const bp_op_t* op, int32_t backend, uint32_t dtypes, Route* out);

// Whether the kernel `k` runs calls of compute dtypes `dtypes`.
inline bool KernelTakes(const KernelEntry& k, uint32_t dtypes) { return (dtypes & ~k.dtype_mask) == 0; }

// What serves the call after `declined` (a native kernel or backend fallback)
// returned UNIMPLEMENTED with `declined_msg` (may be empty): the backend
// fallback after a native kernel, else the host fallback, else an error that
// carries the kernel's own message.
Status NextRoute(bp_context_t* ctx, const bp_op_t* op, int32_t backend, const Route& declined,
                 const std::string& declined_msg, Route* out);

// bp_op_dispatch_kind's answer (enum bp_dispatch_kind) from the same decision.
int32_t DispatchKindOf(bp_context_t* ctx, const bp_op_t* op, int32_t backend);

}  // namespace bp::core
