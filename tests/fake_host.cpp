#include "fake_host.h"

#include <dlfcn.h>

namespace bp_test {
namespace {
thread_local bp_status_t g_last_code = BP_STATUS_OK;
}  // namespace

std::string& LastError() {
  static thread_local std::string msg;
  return msg;
}
bp_status_t LastErrorCode() { return g_last_code; }

bp_status_t FakeHost::SetError(bp_status_t code, const char* message) {
  g_last_code = code;
  LastError() = message != nullptr ? message : "";
  return code;
}

void FakeHost::Log(bp_registrar_t* r, int32_t, const char* message) {
  // Plugins may log before they have a registrar (r is this host once init runs).
  if (r != nullptr) reinterpret_cast<FakeHost*>(r)->logs_.push_back(message != nullptr ? message : "");
}

bp_status_t FakeHost::RegisterKernel(bp_registrar_t* r, const char* op, bp_kernel_fn fn, void* data, uint32_t) {
  auto* self = reinterpret_cast<FakeHost*>(r);
  if (self == nullptr || op == nullptr || fn == nullptr)
    return SetError(BP_STATUS_INVALID_ARGUMENT, "register_kernel: NULL registrar, op or fn");
  if (!self->kernels_.emplace(op, Registered{fn, data}).second)
    return SetError(BP_STATUS_ALREADY_EXISTS, (std::string("register_kernel: duplicate ") + op).c_str());
  return BP_STATUS_OK;
}

bp_status_t FakeHost::Init(const bp_plugin_entry_t* entry, size_t backend_struct_size) {
  Shutdown();
  uint32_t version = BP_ABI_VERSION;
  bp_status_t st = entry->negotiate(&version);
  if (st != BP_STATUS_OK) return st;
  api_.struct_size = sizeof api_;
  api_.abi_version = version;
  api_.set_error = SetError;
  api_.log = Log;
  api_.register_kernel = RegisterKernel;
  api_.register_fallback = RegisterFallback;
  api_.define_op = DefineOp;
  std::memset(&backend_, 0, sizeof backend_);
  backend_.struct_size = backend_struct_size;
  bp_plugin_init_args_t args{};
  args.struct_size = sizeof args;
  args.abi_version = version;
  args.host = &api_;
  args.registrar = reinterpret_cast<bp_registrar_t*>(this);
  args.backend = &backend_;
  st = entry->init(&args);
  inited_ = st == BP_STATUS_OK;
  return st;
}

void FakeHost::Shutdown() {
  if (inited_ && backend_.shutdown != nullptr) backend_.shutdown(backend_.backend_data);
  inited_ = false;
  kernels_.clear();
}

bp_status_t FakeHost::Call(const std::string& op, const std::vector<bp_kernel_arg_t>& args,
                           const std::vector<DLTensor*>& outs, bp_stream_t stream, int32_t device) const {
  auto it = kernels_.find(op);
  if (it == kernels_.end()) return SetError(BP_STATUS_NOT_FOUND, ("test: no kernel registered for " + op).c_str());
  bp_kernel_call_t call{};
  call.struct_size = sizeof call;
  call.op_name = it->first.c_str();
  call.args = args.data();
  call.num_args = static_cast<int32_t>(args.size());
  call.num_outputs = static_cast<int32_t>(outs.size());
  call.outputs = outs.data();
  call.stream = stream;
  call.device_index = device;
  call.kernel_data = it->second.data;
  call.backend_data = backend_.backend_data;
  LastError().clear();
  g_last_code = BP_STATUS_OK;
  return it->second.fn(&call);
}

LoadedPlugin::LoadedPlugin(const char* path) {
  handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return;
  auto entry_fn = reinterpret_cast<bp_plugin_entry_fn>(dlsym(handle, BP_PLUGIN_ENTRY_SYMBOL));
  if (entry_fn == nullptr) return;
  entry = entry_fn();
  if (entry != nullptr) init_status = host.Init(entry);
}

}  // namespace bp_test
