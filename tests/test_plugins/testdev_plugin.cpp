// "testdev": a tiny backend whose memory the host cannot address (a private
// arena handing out opaque handles), like a vendor chip. It implements one
// kernel (add.Tensor, float32) so everything else goes through the CPU
// fallback. Knobs, read at init: TESTDEV_CAPACITY (bytes, default 64 MiB),
// TESTDEV_FALLBACK=1 registers a backend fallback that fails with
// UNIMPLEMENTED, TESTDEV_DEVICES (default 1), TESTDEV_ABI=1.2 answers
// negotiation with ABI 1.2 (a plugin built before dtype masks),
// TESTDEV_ADD_MASK=<mask> registers add.Tensor with that dtype mask
// (register_kernel_dtypes, ABI 1.3; strtoull, base 0). It also defines custom
// operators with CPU kernels: testdev::twice, and three that fail on purpose
// (per-call error reporting, ABI 1.2: kernel_error_test.cpp).
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"

namespace {

struct Arena {
  const bp_host_api_t* host = nullptr;
  std::mutex mu;
  std::map<uintptr_t, std::vector<char>> blocks;
  uintptr_t next = 0x1000;  // handles, not addresses: the host must never dereference them
  size_t used = 0;
  size_t capacity = size_t(64) << 20;
  int32_t devices = 1;
};

bp_status_t Err(Arena* a, bp_status_t code, const char* msg) { return a->host->set_error(code, msg); }
// A kernel's error, attached to its call (thread-local set_error on a pre-1.2 host).
bp_status_t Fail(const bp_kernel_call_t* call, Arena* a, bp_status_t code, const char* msg) {
  return bp_kit_fail(call, a->host, code, msg);
}

char* Lookup(Arena* a, const void* handle, size_t offset, size_t n) {
  auto it = a->blocks.find(reinterpret_cast<uintptr_t>(handle));
  if (it == a->blocks.end() || offset + n > it->second.size()) return nullptr;
  return it->second.data() + offset;
}

bp_status_t DeviceCount(void* bd, int32_t* out) {
  *out = static_cast<Arena*>(bd)->devices;
  return BP_STATUS_OK;
}

bp_status_t Properties(void* bd, int32_t device, bp_device_properties_t* p) {
  auto* a = static_cast<Arena*>(bd);
  if (device < 0 || device >= a->devices) return Err(a, BP_STATUS_OUT_OF_RANGE, "testdev: no such device");
  std::strcpy(p->name, "testdev private arena");
  std::strcpy(p->vendor, "backplane tests");
  std::strcpy(p->driver_version, "1");
  p->total_memory_bytes = a->capacity;
  p->capabilities = BP_DEVICE_CAP_FP64;
  p->alignment_bytes = 64;
  p->compute_units = 1;
  p->extensions[0] = '\0';
  return BP_STATUS_OK;
}

bp_status_t Allocate(void* bd, int32_t, size_t n, void** out) {
  auto* a = static_cast<Arena*>(bd);
  std::lock_guard<std::mutex> lock(a->mu);
  if (n == 0) {
    *out = nullptr;
    return BP_STATUS_OK;
  }
  if (a->used + n > a->capacity) return Err(a, BP_STATUS_OUT_OF_MEMORY, "testdev: arena is full");
  uintptr_t h = a->next;
  a->next += 0x1000;
  a->blocks[h].resize(n);
  a->used += n;
  *out = reinterpret_cast<void*>(h);
  return BP_STATUS_OK;
}

bp_status_t Deallocate(void* bd, int32_t, void* ptr) {
  auto* a = static_cast<Arena*>(bd);
  std::lock_guard<std::mutex> lock(a->mu);
  auto it = a->blocks.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == a->blocks.end()) return Err(a, BP_STATUS_INVALID_ARGUMENT, "testdev: deallocate of unknown handle");
  a->used -= it->second.size();
  a->blocks.erase(it);
  return BP_STATUS_OK;
}

bp_status_t H2D(void* bd, int32_t, const void* src, void* dst, size_t off, size_t n, bp_stream_t) {
  auto* a = static_cast<Arena*>(bd);
  std::lock_guard<std::mutex> lock(a->mu);
  char* p = Lookup(a, dst, off, n);
  if (p == nullptr) return Err(a, BP_STATUS_OUT_OF_RANGE, "testdev: host-to-device copy out of bounds");
  std::memcpy(p, src, n);
  return BP_STATUS_OK;
}

bp_status_t D2H(void* bd, int32_t, const void* src, size_t off, void* dst, size_t n, bp_stream_t) {
  auto* a = static_cast<Arena*>(bd);
  std::lock_guard<std::mutex> lock(a->mu);
  char* p = Lookup(a, src, off, n);
  if (p == nullptr) return Err(a, BP_STATUS_OUT_OF_RANGE, "testdev: device-to-host copy out of bounds");
  std::memcpy(dst, p, n);
  return BP_STATUS_OK;
}

bp_status_t D2D(void* bd, int32_t, const void* src, size_t soff, void* dst, size_t doff, size_t n, bp_stream_t) {
  auto* a = static_cast<Arena*>(bd);
  std::lock_guard<std::mutex> lock(a->mu);
  char* s = Lookup(a, src, soff, n);
  char* d = Lookup(a, dst, doff, n);
  if (s == nullptr || d == nullptr) return Err(a, BP_STATUS_OUT_OF_RANGE, "testdev: device copy out of bounds");
  std::memmove(d, s, n);
  return BP_STATUS_OK;
}

bp_status_t StreamDefault(void*, int32_t, bp_stream_t* out) {
  *out = nullptr;
  return BP_STATUS_OK;
}
bp_status_t StreamSync(void*, int32_t, bp_stream_t) { return BP_STATUS_OK; }

void Shutdown(void* bd) { delete static_cast<Arena*>(bd); }

// Address of element `index` (row-major over t's sizes) in the arena.
float* Elem(Arena* a, const DLTensor* t, int64_t index) {
  int64_t off = 0;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    int64_t i = index % t->shape[d];
    index /= t->shape[d];
    off += i * t->strides[d];
  }
  auto it = a->blocks.find(reinterpret_cast<uintptr_t>(t->data));
  return reinterpret_cast<float*>(it->second.data() + t->byte_offset) + off;
}

// add.Tensor for float32: out = self + alpha * other (views already broadcast).
bp_status_t AddKernel(const bp_kernel_call_t* call) {
  auto* a = static_cast<Arena*>(call->backend_data);
  const DLTensor* x = call->args[BP_ARG_ADD_TENSOR_SELF].u.tensor;
  const DLTensor* y = call->args[BP_ARG_ADD_TENSOR_OTHER].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) {
    return Fail(call, a, BP_STATUS_UNIMPLEMENTED, "testdev: add.Tensor supports float32 only");
  }
  const bp_kernel_arg_t& alpha_arg = call->args[BP_ARG_ADD_TENSOR_ALPHA];
  double alpha = alpha_arg.kind == BP_VALUE_DOUBLE ? alpha_arg.u.d : static_cast<double>(alpha_arg.u.i);
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];
  std::lock_guard<std::mutex> lock(a->mu);
  for (int64_t i = 0; i < n; ++i) {
    *Elem(a, out, i) = static_cast<float>(*Elem(a, x, i) + alpha * *Elem(a, y, i));
  }
  return BP_STATUS_OK;
}

bp_status_t FailingFallback(const bp_kernel_call_t* call) {
  auto* a = static_cast<Arena*>(call->backend_data);
  std::string msg = std::string("testdev fallback: ") + call->op_name + " is not supported";
  return Fail(call, a, BP_STATUS_UNIMPLEMENTED, msg.c_str());
}

// testdev::twice(Tensor self) -> Tensor: a custom operator the plugin defines
// with a CPU kernel (float32) and a meta function.
bp_status_t TwiceMeta(const bp_meta_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  call->out_specs[0].dtype = x->dtype;
  call->out_specs[0].ndim = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) call->out_specs[0].sizes[i] = x->shape[i];
  return BP_STATUS_OK;
}

bp_status_t TwiceCpu(const bp_kernel_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  const DLTensor* o = call->outputs[0];
  int64_t n = 1;
  for (int32_t d = 0; d < o->ndim; ++d) n *= o->shape[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t xi = 0, oi = 0, rest = i;
    for (int32_t d = o->ndim - 1; d >= 0; --d) {
      int64_t k = rest % o->shape[d];
      rest /= o->shape[d];
      xi += k * x->strides[d];
      oi += k * o->strides[d];
    }
    const float* xp = reinterpret_cast<const float*>(static_cast<const char*>(x->data) + x->byte_offset);
    float* op = reinterpret_cast<float*>(static_cast<char*>(o->data) + o->byte_offset);
    op[oi] = 2.0f * xp[xi];
  }
  return BP_STATUS_OK;
}

// Custom operators whose CPU kernels fail on purpose (kernel_data: the Arena).
// testdev::fail_in_worker reports from a thread of its own, so the message can
// only reach the caller attached to the call; testdev::fail_long reports a
// message longer than BP_KERNEL_ERROR_MAX_MESSAGE; testdev::fail_silently
// fails with no message at all.
bp_status_t FailInWorker(const bp_kernel_call_t* call) {
  auto* a = static_cast<Arena*>(call->kernel_data);
  bp_status_t rc = BP_STATUS_OK;
  std::thread worker([&] {
    rc = Fail(call, a, BP_STATUS_INVALID_ARGUMENT,
              "testdev::fail_in_worker: argument 'self': expected a tensor this kernel likes, got any tensor");
  });
  worker.join();
  return rc;
}

bp_status_t FailLong(const bp_kernel_call_t* call) {
  const std::string msg = "testdev::fail_long: " + std::string(2 * BP_KERNEL_ERROR_MAX_MESSAGE, 'x');
  return Fail(call, static_cast<Arena*>(call->kernel_data), BP_STATUS_OUT_OF_RANGE, msg.c_str());
}

bp_status_t FailSilently(const bp_kernel_call_t*) { return BP_STATUS_INTERNAL; }

bool Env(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

bp_status_t Negotiate(uint32_t* v) {
  return bp_kit_negotiate(v, Env("TESTDEV_ABI", "1.2") ? BP_MAKE_ABI_VERSION(1, 2) : BP_ABI_VERSION);
}

// add.Tensor as a 1.2 plugin registers it (every dtype offered), or with
// TESTDEV_ADD_MASK's dtype mask.
bp_status_t RegisterAdd(const bp_plugin_init_args_t* args) {
  const char* mask = std::getenv("TESTDEV_ADD_MASK");
  if (mask == nullptr || args->abi_version < BP_MAKE_ABI_VERSION(1, 3)) {
    return args->host->register_kernel(args->registrar, BP_OP_ADD_TENSOR, AddKernel, nullptr, 0);
  }
  return args->host->register_kernel_dtypes(args->registrar, BP_OP_ADD_TENSOR, AddKernel, nullptr, 0,
                                            std::strtoull(mask, nullptr, 0));
}

bp_status_t Init(const bp_plugin_init_args_t* args) {
  Arena* a = new (std::nothrow) Arena();
  if (a == nullptr) return BP_STATUS_OUT_OF_MEMORY;
  a->host = args->host;
  if (const char* c = std::getenv("TESTDEV_CAPACITY")) a->capacity = std::strtoull(c, nullptr, 10);
  if (const char* d = std::getenv("TESTDEV_DEVICES")) a->devices = std::atoi(d);
  bp_backend_t* b = args->backend;
  b->name = "testdev";
  b->version = "0.1.0";
  b->device_type = kDLExtDev;
  b->backend_data = a;
  b->no_device_reason = a->devices == 0 ? "testdev: TESTDEV_DEVICES=0" : nullptr;
  b->device_count = DeviceCount;
  b->device_properties = Properties;
  b->allocate = Allocate;
  b->deallocate = Deallocate;
  b->copy_host_to_device = H2D;
  b->copy_device_to_host = D2H;
  b->copy_device_to_device = D2D;
  b->stream_get_default = StreamDefault;
  b->stream_synchronize = StreamSync;
  b->shutdown = Shutdown;
  // A refused mask still fails the load when the plugin goes on (the host
  // remembers it), which TESTDEV_ADD_MASK's bad-mask test relies on.
  bp_status_t rc = RegisterAdd(args);
  if (rc == BP_STATUS_INVALID_ARGUMENT && std::getenv("TESTDEV_ADD_MASK") != nullptr) rc = BP_STATUS_OK;
  if (rc == BP_STATUS_OK) {
    rc = args->host->define_op(args->registrar, "testdev::twice(Tensor self) -> Tensor", TwiceCpu, nullptr,
                               TwiceMeta, nullptr);
  }
  const struct {
    const char* schema;
    bp_kernel_fn fn;
  } failing[] = {{"testdev::fail_in_worker(Tensor self) -> Tensor", FailInWorker},
                 {"testdev::fail_long(Tensor self) -> Tensor", FailLong},
                 {"testdev::fail_silently(Tensor self) -> Tensor", FailSilently}};
  for (const auto& f : failing) {
    if (rc == BP_STATUS_OK) rc = args->host->define_op(args->registrar, f.schema, f.fn, a, TwiceMeta, nullptr);
  }
  if (rc == BP_STATUS_OK) {
    const char* fb = std::getenv("TESTDEV_FALLBACK");
    if (fb != nullptr && std::strcmp(fb, "1") == 0) {
      rc = args->host->register_fallback(args->registrar, FailingFallback, nullptr, 0);
    }
  }
  if (rc != BP_STATUS_OK) delete a;
  return rc;
}

const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, Negotiate, Init};

}  // namespace

extern "C" BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return &kEntry; }
