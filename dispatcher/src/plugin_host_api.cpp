// The host API a plugin's init receives (bp_host_api_t): error reporting,
// logging, and registration through the registrar (kernels, a fallback,
// operator definitions), with the checks and caps on what a plugin passes.
#include <cstdio>
#include <cstring>
#include <string>

#include "api.h"
#include "dtype.h"
#include "plugin.h"
#include "registry.h"

namespace bp::core {

// A plugin's string, at most `cap` bytes of it read (the caps in backend.h).
std::string Capped(const char* s, size_t cap) { return s != nullptr ? std::string(s, strnlen(s, cap)) : std::string(); }

// A plugin's name (backend or operator) longer than BP_MAX_NAME_LENGTH.
bool NameTooLong(const char* name) { return strnlen(name, BP_MAX_NAME_LENGTH + 1) > BP_MAX_NAME_LENGTH; }

// The namespace rule for a plugin's operators (docs/security.md): only
// '<backend name>::...', so no plugin can take, or block, another vendor's
// operator names.
Status CheckOwnNamespace(const char* backend_name, const Schema& s) {
  const std::string own = Capped(backend_name, BP_MAX_NAME_LENGTH);
  if (s.ns == own) return Status::Ok();
  return Error(BP_STATUS_PERMISSION_DENIED, "define_op: operator '" + s.full_name() + "' is in namespace '" + s.ns +
                                                "', not this plugin's own; a plugin defines operators only as '" + own +
                                                "::<name>' (its backend name)");
}

namespace {

// An operator by name for a plugin's init: one it defined earlier in this
// init (not listed yet), or a listed one.
bp_op_t* FindPendingOrListedOp(bp_plugin_t* p, const char* name) {
  auto it = p->defined_by_name.find(name);
  return it != p->defined_by_name.end() ? it->second : FindOp(p->ctx, name);
}

bp_status_t HostSetError(bp_status_t code, const char* message) { return SetLastError(code, message); }

void HostLog(bp_registrar_t* registrar, int32_t level, const char* message) {
  if (registrar == nullptr || registrar->plugin == nullptr || message == nullptr) return;
  LogMessage(registrar->plugin->ctx, level, Capped(message, BP_KERNEL_ERROR_MAX_MESSAGE));
}

Status CheckInInit(bp_registrar_t* r, const char* fn) {
  if (r == nullptr || r->plugin == nullptr) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": registrar is NULL");
  }
  if (!r->in_init || r->init_thread != std::this_thread::get_id()) {
    return Error(BP_STATUS_FAILED_PRECONDITION,
                 std::string(fn) + ": only valid during the plugin's init, on the thread that runs it");
  }
  return Status::Ok();
}

// register_kernel and register_kernel_dtypes (`fn` names which).
Status RegisterKernel(bp_registrar_t* r, const char* fn, const char* op_name, bp_kernel_fn kernel, void* data,
                      uint32_t flags, uint32_t dtype_mask) {
  BP_RETURN_IF_ERROR(CheckInInit(r, fn));
  BP_CHECK_ARG(op_name != nullptr && kernel != nullptr, fn, "op_name and kernel must not be NULL");
  if (NameTooLong(op_name)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": operator name '" + Capped(op_name, 32) +
                                                 "...' is longer than BP_MAX_NAME_LENGTH (" +
                                                 std::to_string(BP_MAX_NAME_LENGTH) + " bytes)");
  }
  bp_op_t* op = FindPendingOrListedOp(r->plugin, op_name);
  if (op == nullptr) {
    // Policy (docs/plugin/kernel-contract.md): warn and skip. The host logs
    // the warning itself, so a plugin that continues past NOT_FOUND (a
    // plugin built for a newer operator list) still leaves a trace.
    Status st = Error(BP_STATUS_NOT_FOUND, std::string(fn) + ": unknown operator '" + std::string(op_name) + "'" +
                                               DidYouMean(r->plugin->ctx, op_name) + "; the kernel is not registered");
    LogMessage(r->plugin->ctx, BP_LOG_WARNING, "plugin '" + r->plugin->path + "': " + st.message());
    return st;
  }
  if (op->functional != op) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(fn) + ": '" + op->name + "' is the " +
                     (op->variant == OpVariant::kOut ? "out=" : "in-place") + " variant of '" + op->functional->name +
                     "'; register the kernel under '" + op->functional->name +
                     "' (one kernel serves the operator and its in-place and out= variants)");
  }
  for (PendingKernel& k : r->kernels) {
    if (k.op == op) {
      if ((flags & BP_REGISTER_OVERRIDE) == 0) {
        return Error(BP_STATUS_ALREADY_EXISTS, std::string(fn) + ": this plugin already registered a kernel for " +
                                                   op->name + "; pass BP_REGISTER_OVERRIDE to replace it");
      }
      k = PendingKernel{op, kernel, data, flags, dtype_mask};
      return Status::Ok();
    }
  }
  r->kernels.push_back(PendingKernel{op, kernel, data, flags, dtype_mask});
  return Status::Ok();
}

bp_status_t HostRegisterKernel(bp_registrar_t* r, const char* op_name, bp_kernel_fn kernel, void* data,
                               uint32_t flags) {
  return ApiCall("register_kernel",
                 [&]() { return RegisterKernel(r, "register_kernel", op_name, kernel, data, flags, kAllDtypeBits); });
}

std::string HexMask(uint64_t mask) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(mask));
  return buf;
}

// A mask with bits that name no dtype fails the plugin's load (a plugin that
// ignores the status still does not load with a kernel the host misreads).
bp_status_t HostRegisterKernelDtypes(bp_registrar_t* r, const char* op_name, bp_kernel_fn kernel, void* data,
                                     uint32_t flags, uint64_t dtype_mask) {
  return ApiCall("register_kernel_dtypes", [&]() -> Status {
    const char* fn = "register_kernel_dtypes";
    BP_RETURN_IF_ERROR(CheckInInit(r, fn));
    const uint64_t unknown = dtype_mask & ~static_cast<uint64_t>(BP_DTYPE_MASK_ALL);
    if (unknown != 0 || dtype_mask == 0) {
      const std::string name = op_name != nullptr ? Capped(op_name, BP_MAX_NAME_LENGTH) : std::string("(null)");
      Status st = Error(
          BP_STATUS_INVALID_ARGUMENT,
          std::string(fn) + ": operator '" + name + "' declares dtype mask " + HexMask(dtype_mask) +
              (unknown != 0 ? "; bits " + HexMask(unknown) + " name no dtype Backplane knows" : "; it names no dtype") +
              " (expected a nonzero OR of BP_DTYPE_MASK_*, within BP_DTYPE_MASK_ALL = " + HexMask(BP_DTYPE_MASK_ALL) +
              ")");
      if (r->load_error.empty()) r->load_error = st.message();
      return st;
    }
    return RegisterKernel(r, fn, op_name, kernel, data, flags, static_cast<uint32_t>(dtype_mask));
  });
}

bp_status_t HostRegisterFallback(bp_registrar_t* r, bp_kernel_fn fallback, void* data, uint32_t flags) {
  return ApiCall("register_fallback", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckInInit(r, "register_fallback"));
    BP_CHECK_ARG(fallback != nullptr, "register_fallback", "fallback is NULL");
    if (r->has_fallback && (flags & BP_REGISTER_OVERRIDE) == 0) {
      return Error(BP_STATUS_ALREADY_EXISTS, "register_fallback: this plugin already registered a fallback");
    }
    r->has_fallback = true;
    r->fallback = PendingKernel{nullptr, fallback, data, flags, kAllDtypeBits};
    return Status::Ok();
  });
}

bp_status_t HostDefineOp(bp_registrar_t* r, const char* schema, bp_kernel_fn cpu_kernel, void* cpu_data,
                         bp_meta_fn meta, void* meta_data) {
  return ApiCall("define_op", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckInInit(r, "define_op"));
    BP_CHECK_ARG(schema != nullptr && meta != nullptr, "define_op", "schema and meta must not be NULL");
    bp_context_t* ctx = r->plugin->ctx;  // ctx->mu is held by the loading thread
    if (strnlen(schema, BP_KERNEL_ERROR_MAX_MESSAGE + 1) > BP_KERNEL_ERROR_MAX_MESSAGE) {
      return Error(BP_STATUS_INVALID_ARGUMENT, "define_op: schema '" + Capped(schema, 32) +
                                                   "...' is longer than BP_KERNEL_ERROR_MAX_MESSAGE (" +
                                                   std::to_string(BP_KERNEL_ERROR_MAX_MESSAGE) + " bytes)");
    }
    Schema parsed;
    BP_RETURN_IF_ERROR(parse_schema(schema, &parsed));
    // Checked here when init has named the backend already, and for every
    // definition at commit (CheckOwnNamespace) in case it names it later.
    if (r->plugin->table.name != nullptr) BP_RETURN_IF_ERROR(CheckOwnNamespace(r->plugin->table.name, parsed));
    if (bp_op_t* pending = FindPendingOrListedOp(r->plugin, parsed.full_name().c_str())) {
      return Error(BP_STATUS_ALREADY_EXISTS, "define_op: operator '" + pending->name + "' is already defined");
    }
    bp_op_t* op = nullptr;
    // Not listed until the whole load commits: a failed load never shows it.
    BP_RETURN_IF_ERROR(DefineOpLocked(ctx, schema, meta, meta_data, r->plugin, &op, /*list=*/false));
    r->plugin->defined_ops.push_back(op);
    r->plugin->defined_by_name.emplace(op->name, op);
    if (cpu_kernel != nullptr) {
      bp_registration_t* reg = nullptr;
      BP_RETURN_IF_ERROR(AddKernelLocked(ctx, op, 0, cpu_kernel, cpu_data, 0, r->plugin, &reg));
      r->plugin->registrations.push_back(reg);
    }
    return Status::Ok();
  });
}
}  // namespace

void InitHostApi(bp_host_api_t* api) {
  api->struct_size = sizeof(*api);
  api->abi_version = BP_ABI_VERSION;
  api->set_error = HostSetError;
  api->log = HostLog;
  api->register_kernel = HostRegisterKernel;
  api->register_fallback = HostRegisterFallback;
  api->define_op = HostDefineOp;
  api->register_kernel_dtypes = HostRegisterKernelDtypes;
}

}  // namespace bp::core
