// The operator part of the C API: lookup, info, definition, registration,
// counters.
#include <mutex>
#include <shared_mutex>
#include <string>

#include "api.h"
#include "plugin.h"
#include "rcu.h"
#include "registry.h"
#include "route.h"
#include "struct_size.h"

using namespace bp::core;

namespace {
// One counter of an operator for one backend.
using CounterRead = uint64_t (*)(const bp_op_t& op, int32_t backend);

// The per-backend call counters of an operator (bp_fallback_count,
// bp_native_count, bp_cast_count): `count` into *out_count and, where asked
// for, `bytes` into *out_bytes.
bp_status_t ReadOpCounter(const char* fn, bp_context_t* context, const bp_op_t* op, int32_t backend, CounterRead count,
                          uint64_t* out_count, CounterRead bytes = nullptr, uint64_t* out_bytes = nullptr) {
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && op != nullptr && out_count != nullptr, fn,
                 "context, op and out_count must not be NULL");
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, fn));
    *out_count = count(*op, backend);
    if (out_bytes != nullptr) *out_bytes = bytes(*op, backend);
    return Status::Ok();
  });
}
}  // namespace

extern "C" {

BP_API bp_status_t bp_op_find(bp_context_t* context, const char* name, bp_op_t** out_op) {
  return ApiCall("bp_op_find", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && name != nullptr && out_op != nullptr, "bp_op_find",
                 "context, name and out_op must not be NULL");
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_op_find"));
    bp_op_t* op = FindOp(context, name);
    if (op == nullptr) return Error(BP_STATUS_NOT_FOUND, std::string("bp_op_find: unknown operator '") + name + "'");
    *out_op = op;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_op_count(bp_context_t* context, int32_t* out_count) {
  return ApiCall("bp_op_count", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_count != nullptr, "bp_op_count", "context and out_count must not be NULL");
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_op_count"));
    std::shared_lock<std::shared_mutex> lock(context->ops_mu);
    *out_count = static_cast<int32_t>(context->ops.size());
    return Status::Ok();
  });
}

BP_API bp_status_t bp_op_at(bp_context_t* context, int32_t index, bp_op_t** out_op) {
  return ApiCall("bp_op_at", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_op != nullptr, "bp_op_at", "context and out_op must not be NULL");
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_op_at"));
    std::shared_lock<std::shared_mutex> lock(context->ops_mu);
    if (index < 0 || index >= static_cast<int32_t>(context->ops.size())) {
      return Error(BP_STATUS_OUT_OF_RANGE, "bp_op_at: index " + std::to_string(index) + " is out of range [0, " +
                                               std::to_string(context->ops.size()) + ")");
    }
    *out_op = context->ops[index];
    return Status::Ok();
  });
}

BP_API bp_status_t bp_op_info(const bp_op_t* op, bp_op_info_t* out_info) {
  return ApiCall("bp_op_info", [&]() -> Status {
    BP_CHECK_ARG(op != nullptr && out_info != nullptr, "bp_op_info", "op and out_info must not be NULL");
    BP_RETURN_IF_ERROR(CheckStructSize(out_info, "bp_op_info", "out_info"));
    bp_op_info_t info{};
    info.name = op->name.c_str();
    info.schema = op->schema_text.c_str();
    info.kind = op->kind_name.c_str();
    info.doc = op->doc.c_str();
    info.num_arguments = op->num_args;
    info.num_returns = op->num_returns;
    CopyOutFitting(info, out_info);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_op_dispatch_kind(bp_context_t* context, const bp_op_t* op, int32_t backend, int32_t* out_kind) {
  return ApiCall("bp_op_dispatch_kind", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && op != nullptr && out_kind != nullptr, "bp_op_dispatch_kind",
                 "context, op and out_kind must not be NULL");
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, "bp_op_dispatch_kind"));
    ReadSection rs;
    *out_kind = DispatchKindOf(context, op, backend);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_op_define(bp_context_t* context, const char* schema, bp_kernel_fn cpu_kernel,
                                void* cpu_kernel_data, bp_meta_fn meta, void* meta_data, bp_op_t** out_op) {
  return ApiCall("bp_op_define", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && schema != nullptr && meta != nullptr, "bp_op_define",
                 "context, schema and meta must not be NULL");
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_op_define"));
    std::unique_lock<std::mutex> lock;
    BP_RETURN_IF_ERROR(LockWriter(context, "bp_op_define", &lock));
    bp_op_t* op = nullptr;
    BP_RETURN_IF_ERROR(DefineOpLocked(context, schema, meta, meta_data, nullptr, &op));
    if (cpu_kernel != nullptr)
      BP_RETURN_IF_ERROR(AddKernelLocked(context, op, 0, cpu_kernel, cpu_kernel_data, 0, nullptr, nullptr));
    if (out_op != nullptr) *out_op = op;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_op_register_kernel(bp_context_t* context, const bp_op_t* op, int32_t backend, bp_kernel_fn kernel,
                                         void* kernel_data, uint32_t flags, bp_registration_t** out_registration) {
  return ApiCall("bp_op_register_kernel", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && op != nullptr && kernel != nullptr, "bp_op_register_kernel",
                 "context, op and kernel must not be NULL");
    BP_CHECK_ARG(op->ctx == context, "bp_op_register_kernel", "op belongs to another context");
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, "bp_op_register_kernel"));
    std::unique_lock<std::mutex> lock;
    BP_RETURN_IF_ERROR(LockWriter(context, "bp_op_register_kernel", &lock));
    if (op->removed.load()) {
      return Error(BP_STATUS_FAILED_PRECONDITION, "bp_op_register_kernel: operator '" + op->name + "' was removed");
    }
    if (!context->slots[backend].loaded.load()) {
      return Error(BP_STATUS_FAILED_PRECONDITION,
                   "bp_op_register_kernel: backend '" + context->slots[backend].name + "' is not loaded");
    }
    return AddKernelLocked(context, const_cast<bp_op_t*>(op), backend, kernel, kernel_data, flags, nullptr,
                           out_registration);
  });
}

BP_API bp_status_t bp_register_fallback(bp_context_t* context, int32_t backend, bp_kernel_fn fallback,
                                        void* fallback_data, uint32_t flags, bp_registration_t** out_registration) {
  return ApiCall("bp_register_fallback", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && fallback != nullptr, "bp_register_fallback",
                 "context and fallback must not be NULL");
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, "bp_register_fallback"));
    std::unique_lock<std::mutex> lock;
    BP_RETURN_IF_ERROR(LockWriter(context, "bp_register_fallback", &lock));
    if (!context->slots[backend].loaded.load()) {
      return Error(BP_STATUS_FAILED_PRECONDITION,
                   "bp_register_fallback: backend '" + context->slots[backend].name + "' is not loaded");
    }
    return AddFallbackLocked(context, backend, fallback, fallback_data, flags, nullptr, out_registration);
  });
}

BP_API bp_status_t bp_registration_remove(bp_context_t* context, bp_registration_t* registration) {
  return ApiCall("bp_registration_remove", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && registration != nullptr, "bp_registration_remove",
                 "context and registration must not be NULL");
    BP_CHECK_ARG(registration->ctx == context, "bp_registration_remove", "registration belongs to another context");
    std::unique_lock<std::mutex> lock;
    BP_RETURN_IF_ERROR(LockWriter(context, "bp_registration_remove", &lock));
    if (!registration->active) {
      return Error(BP_STATUS_INVALID_ARGUMENT, "bp_registration_remove: registration was already removed");
    }
    if (registration->owner != nullptr) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   "bp_registration_remove: registration belongs to a plugin; unload the plugin instead");
    }
    RemoveRegistrationLocked(context, registration);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_op_set_kernel_masked(bp_context_t* context, const bp_op_t* op, int32_t backend, int32_t masked) {
  return ApiCall("bp_op_set_kernel_masked", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && op != nullptr, "bp_op_set_kernel_masked", "context and op must not be NULL");
    BP_CHECK_ARG(op->ctx == context, "bp_op_set_kernel_masked", "op belongs to another context");
    BP_CHECK_ARG(masked == 0 || masked == 1, "bp_op_set_kernel_masked",
                 "argument 'masked' must be 0 or 1, got " + std::to_string(masked));
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, "bp_op_set_kernel_masked"));
    if (backend == context->host_backend) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   "bp_op_set_kernel_masked: " + op->name + ": backend " + std::to_string(backend) + " ('" +
                       context->slots[backend].name +
                       "') cannot be masked: its kernels are the CPU fallback of every backend");
    }
    std::unique_lock<std::mutex> lock;
    BP_RETURN_IF_ERROR(LockWriter(context, "bp_op_set_kernel_masked", &lock));
    if (op->removed.load()) {
      return Error(BP_STATUS_FAILED_PRECONDITION, "bp_op_set_kernel_masked: operator '" + op->name + "' was removed");
    }
    SetKernelMaskedLocked(context, const_cast<bp_op_t*>(op), backend, masked != 0);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_fallback_count(bp_context_t* context, const bp_op_t* op, int32_t backend, uint64_t* out_count) {
  return ReadOpCounter(
      "bp_fallback_count", context, op, backend, [](const bp_op_t& o, int32_t b) { return o.fallback_count.Sum(b); },
      out_count);
}

BP_API bp_status_t bp_native_count(bp_context_t* context, const bp_op_t* op, int32_t backend, uint64_t* out_count) {
  return ReadOpCounter(
      "bp_native_count", context, op, backend, [](const bp_op_t& o, int32_t b) { return o.native_count.Sum(b); },
      out_count);
}

BP_API bp_status_t bp_cast_count(bp_context_t* context, const bp_op_t* op, int32_t backend, uint64_t* out_count,
                                 uint64_t* out_bytes) {
  return ReadOpCounter(
      "bp_cast_count", context, op, backend,
      [](const bp_op_t& o, int32_t b) { return o.cast_count[b].load(std::memory_order_relaxed); }, out_count,
      [](const bp_op_t& o, int32_t b) { return o.cast_bytes[b].load(std::memory_order_relaxed); }, out_bytes);
}

}  // extern "C"
