#include "opencl_fake_host.h"

namespace bpcl_test {
namespace {
thread_local std::string g_last_error;
thread_local bp_status_t g_last_code = BP_STATUS_OK;

size_t ItemSize(DLDataType dt) { return (dt.bits + 7u) / 8u; }
}  // namespace

const std::string& FakeHost::last_error() { return g_last_error; }
bp_status_t FakeHost::last_code() { return g_last_code; }

bp_status_t FakeHost::SetError(bp_status_t code, const char* message) {
  g_last_code = code;
  g_last_error = message != nullptr ? message : "";
  return code;
}

bp_status_t FakeHost::RegisterKernel(bp_registrar_t* r, const char* op, bp_kernel_fn fn, void* data, uint32_t) {
  auto* self = reinterpret_cast<FakeHost*>(r);
  if (op == nullptr || fn == nullptr) return SetError(BP_STATUS_INVALID_ARGUMENT, "register_kernel: NULL");
  if (self->kernels_.count(op)) return SetError(BP_STATUS_ALREADY_EXISTS, (std::string("duplicate ") + op).c_str());
  self->kernels_[op] = {fn, data};
  return BP_STATUS_OK;
}

bp_status_t FakeHost::Init(const bp_plugin_entry_t* entry) {
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
  backend_.struct_size = sizeof backend_;
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

int32_t FakeHost::device_count() {
  int32_t n = 0;
  backend_.device_count(backend_.backend_data, &n);
  return n;
}

DevTensor FakeHost::Empty(std::vector<int64_t> shape, DLDataType dt, int32_t device) {
  DevTensor t;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  t.shape = std::move(shape);
  t.strides.assign(t.shape.size(), 1);
  for (size_t k = t.shape.size(); k-- > 1;) t.strides[k - 1] = t.strides[k] * t.shape[k];
  t.bytes = static_cast<size_t>(n) * ItemSize(dt);
  backend_.allocate(backend_.backend_data, device, t.bytes, &t.mem);
  t.owner = true;
  t.dl.device = DLDevice{kDLOpenCL, device};
  t.dl.dtype = dt;
  t.dl.byte_offset = 0;
  return t;
}

DevTensor FakeHost::View(const DevTensor& base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                         int64_t offset_elems) {
  DevTensor t;
  t.mem = base.mem;
  t.bytes = base.bytes;
  t.owner = false;
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  t.dl = base.dl;
  t.dl.byte_offset = static_cast<uint64_t>(offset_elems) * ItemSize(base.dl.dtype);
  return t;
}

void FakeHost::Free(DevTensor* t) {
  if (t->owner && t->mem != nullptr) backend_.deallocate(backend_.backend_data, t->dl.device.device_id, t->mem);
  t->mem = nullptr;
  t->owner = false;
}

bp_status_t FakeHost::Call(const std::string& op, std::vector<bp_kernel_arg_t> args, std::vector<DevTensor*> outs,
                           int32_t device) {
  auto it = kernels_.find(op);
  if (it == kernels_.end()) return SetError(BP_STATUS_UNIMPLEMENTED, ("no kernel for " + op).c_str());
  std::vector<DLTensor*> out_ptrs;
  for (DevTensor* t : outs) out_ptrs.push_back(t->get());
  bp_stream_t stream = nullptr;
  backend_.stream_get_default(backend_.backend_data, device, &stream);
  bp_kernel_call_t call{};
  call.struct_size = sizeof call;
  call.op_name = it->first.c_str();
  call.args = args.data();
  call.num_args = static_cast<int32_t>(args.size());
  call.num_outputs = static_cast<int32_t>(out_ptrs.size());
  call.outputs = out_ptrs.data();
  call.stream = stream;
  call.device_index = device;
  call.kernel_data = it->second.second;
  call.backend_data = backend_.backend_data;
  return it->second.first(&call);
}

bp_kernel_arg_t TensorArg(DevTensor& t) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_TENSOR;
  a.u.tensor = t.get();
  return a;
}
bp_kernel_arg_t IntArg(int64_t v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_INT;
  a.u.i = v;
  return a;
}
bp_kernel_arg_t DoubleArg(double v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_DOUBLE;
  a.u.d = v;
  return a;
}
bp_kernel_arg_t BoolArg(bool v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_BOOL;
  a.u.b = v ? 1 : 0;
  return a;
}
bp_kernel_arg_t NoneArg() {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_NONE;
  return a;
}
bp_kernel_arg_t StrArg(const char* s) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_STRING;
  a.u.str = s;
  return a;
}
bp_kernel_arg_t IntListArg(const std::vector<int64_t>& v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_INT_LIST;
  a.u.int_list.data = v.data();
  a.u.int_list.size = static_cast<int64_t>(v.size());
  return a;
}
bp_kernel_arg_t TensorListArg(const std::vector<const DLTensor*>& v) {
  bp_kernel_arg_t a{};
  a.kind = BP_VALUE_TENSOR_LIST;
  a.u.tensor_list.data = v.data();
  a.u.tensor_list.size = static_cast<int64_t>(v.size());
  return a;
}

}  // namespace bpcl_test
