// Operators and their registrations (PyTorch's def / impl / fallback).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "call_counter.h"
#include "context.h"
#include "meta/meta.h"
#include "op_table.h"
#include "schema.h"

namespace bp::core {
enum class OpKind { kKernel, kView, kComposite, kCustom, kCopy };

// How the pointwise fast path (dispatch_fast.cpp) binds one argument.
enum class FastArg : uint8_t { kTensor, kScalar };

// Call plans an operator's calls use (call_plan.h), one per signature, read
// lock-free by bp_op_call; a slot is replaced when its plan is stale or the
// slots are full. The plans are owned by the context (cached_plans).
constexpr int kPlanCacheSlots = 4;
}

struct bp_op_t {
  bp_context_t* ctx = nullptr;
  bp::core::Schema schema;
  std::string name, schema_text, kind_name, doc, meta_name;
  bp::core::OpKind kind = bp::core::OpKind::kKernel;
  bp::core::OpVariant variant = bp::core::OpVariant::kFunctional;
  bp_op_t* functional = this;  // the entry whose kernel table serves this op
  const bp::core::MetaFunctions* meta = nullptr;
  const bp::core::ViewFunctions* view = nullptr;
  uint32_t dtype_mask = 0xffffffffu;

  int32_t num_args = 0;
  int32_t num_returns = 0;
  int32_t num_meta_args = 0;  // arguments the meta function and kernel see (out= drops `out`)
  int32_t mutated_arg = -1;   // argument returned as the result (in-place, out=, copy_)
  const char* arg_names[bp::core::kMaxArgs] = {};
  bool has_default[bp::core::kMaxArgs] = {};
  bp_value_t defaults[bp::core::kMaxArgs] = {};
  std::vector<int64_t> default_ints[bp::core::kMaxArgs];  // storage for int-list defaults

  // Precomputed by SetupFastPath (dispatch_fast.cpp) for the pointwise fast path.
  bool fast = false;  // a plan whose meta result allows it runs FastRun
  bp::core::FastArg fast_arg[bp::core::kMaxArgs] = {};
  int32_t fast_num_inputs = 0;                  // tensor arguments the kernel reads
  int8_t fast_inputs[bp::core::kMaxArgs] = {};  // their indices, self first
  std::atomic<bp_call_plan_t*> plan_cache[bp::core::kPlanCacheSlots] = {};
  std::atomic<uint32_t> plan_cache_next{0};  // the slot a full cache replaces next

  std::atomic<const bp::core::KernelTable*> table{nullptr};
  std::atomic<bool> removed{false};

  // Custom operators (bp_op_define / define_op).
  bp_meta_fn custom_meta = nullptr;
  void* custom_meta_data = nullptr;
  bp_plugin_t* owner = nullptr;

  bp::core::CallCounter native_count;
  bp::core::CallCounter fallback_count;
  // The cast route: calls the native kernel served after the core cast for
  // it, and the host<->device bytes those casts moved (bp_cast_count).
  std::atomic<uint64_t> cast_count[bp::core::kMaxBackends] = {};
  std::atomic<uint64_t> cast_bytes[bp::core::kMaxBackends] = {};
  std::atomic<bool> fallback_warned[bp::core::kMaxBackends] = {};

  std::vector<bp_registration_t*> stacks[bp::core::kMaxBackends];  // writers only
  // Bit b: the kernel of backend b is masked (bp_op_set_kernel_masked); on the
  // functional entry. Written under ctx->mu, folded into every published
  // table; readers see the table, and load this only to word an error.
  std::atomic<uint32_t> masked_backends{0};
};

struct bp_registration_t {
  bp_context_t* ctx = nullptr;
  bp_op_t* op = nullptr;  // nullptr: a backend fallback
  int32_t backend = 0;
  bp_kernel_fn fn = nullptr;
  void* data = nullptr;
  uint32_t dtype_mask = 0xffffffffu;  // KernelEntry::dtype_mask
  bp_plugin_t* owner = nullptr;  // nullptr: registered by the host
  bool active = true;
};

namespace bp::core {

// Builds the core operators from kOpTable. Called once by bp_context_create.
Status BuildCoreOps(bp_context_t* ctx);
// Creates an operator from a schema (custom operators). Caller holds ctx->mu.
// With list false the operator is not yet findable (a plugin's init: the
// loader lists it with ListOpLocked when the whole load commits). A removed
// operator of the same name and schema text is revived (the same object:
// handles kept from an earlier load work again) rather than allocated anew.
Status DefineOpLocked(bp_context_t* ctx, const std::string& schema_text, bp_meta_fn meta,
                      void* meta_data, bp_plugin_t* owner, bp_op_t** out_op, bool list = true);
// Makes an operator defined with list false findable. Caller holds ctx->mu.
void ListOpLocked(bp_context_t* ctx, bp_op_t* op);
// Removes operators from the list and name map (their objects stay alive).
void UndefineOpsLocked(bp_context_t* ctx, const std::vector<bp_op_t*>& ops);

// Registration; caller holds ctx->mu.
// `dtype_mask`: KernelEntry::dtype_mask.
Status AddKernelLocked(bp_context_t* ctx, bp_op_t* op, int32_t backend, bp_kernel_fn fn, void* data, uint32_t flags,
                       bp_plugin_t* owner, bp_registration_t** out, uint32_t dtype_mask = 0xffffffffu);
Status AddFallbackLocked(bp_context_t* ctx, int32_t backend, bp_kernel_fn fn, void* data, uint32_t flags,
                         bp_plugin_t* owner, bp_registration_t** out);
void RemoveRegistrationLocked(bp_context_t* ctx, bp_registration_t* reg);
// Masks or restores the kernel of (op's functional entry, backend) and
// publishes the table; caller holds ctx->mu.
void SetKernelMaskedLocked(bp_context_t* ctx, bp_op_t* op, int32_t backend, bool masked);
// True while bp_op_set_kernel_masked masks the kernel of (op, backend).
inline bool KernelMasked(const bp_op_t* op, int32_t backend) {
  return ((op->functional->masked_backends.load(std::memory_order_relaxed) >> backend) & 1u) != 0;
}

bp_op_t* FindOp(bp_context_t* ctx, const char* name);  // shared lock; nullptr if unknown
// " (did you mean 'a', 'b' or 'c'?)": up to three listed operators nearest to
// `name` by edit distance (ASCII case ignored), or "" when none is close.
std::string DidYouMean(bp_context_t* ctx, const std::string& name);

// Fills op->fast* from the op's meta family and schema (dispatch_fast.cpp).
void SetupFastPath(bp_op_t* op);

inline const KernelEntry& KernelFor(const bp_op_t* op, int32_t backend) {
  return op->functional->table.load(std::memory_order_acquire)->kernels[backend];
}

}  // namespace bp::core
