// vendor_sim: a simulated accelerator, and the template for a new backend.
// One device whose memory is a private arena reached only through handles
// and the copy functions below; two native kernels (kernels.cpp); every other
// operator runs through the core's CPU fallback. Includes only abi/ headers.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include "vendor_sim.h"

namespace vendor_sim {

bp_status_t Fail(const State* state, bp_status_t code, const char* op, const char* what) {
  char msg[256];
  std::snprintf(msg, sizeof msg, "vendor_sim: %s: %s", op, what);
  return state != nullptr && state->host != nullptr ? state->host->set_error(code, msg) : code;
}

bp_status_t KernelFail(const bp_kernel_call_t* call, bp_status_t code, const char* what) {
  char msg[256];
  std::snprintf(msg, sizeof msg, "vendor_sim: %s: %s", call->op_name, what);
  const State* state = static_cast<const State*>(call->kernel_data);
  return bp_kit_fail(call, state != nullptr ? state->host : nullptr, code, msg);
}

namespace {

constexpr size_t kDefaultArenaMiB = 256;

State* S(void* backend_data) { return static_cast<State*>(backend_data); }

bp_status_t CheckDevice(State* s, int32_t device, const char* fn) {
  return device == 0 ? BP_STATUS_OK : Fail(s, BP_STATUS_OUT_OF_RANGE, fn, "device index out of range (only device 0)");
}

bp_status_t DeviceCount(void*, int32_t* out_count) {
  *out_count = 1;
  return BP_STATUS_OK;
}

bp_status_t DeviceProperties(void* bd, int32_t device, bp_device_properties_t* out) {
  if (CheckDevice(S(bd), device, "device_properties") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  bp_device_properties_t p;
  std::memset(&p, 0, sizeof p);
  std::snprintf(p.name, sizeof p.name, "vendor_sim simulated accelerator");
  std::snprintf(p.vendor, sizeof p.vendor, "Backplane sample");
  std::snprintf(p.driver_version, sizeof p.driver_version, "1.0.0");
  p.total_memory_bytes = S(bd)->arena.capacity();
  p.capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16;  // not UNIFIED
  p.alignment_bytes = static_cast<uint32_t>(S(bd)->arena.alignment());
  p.compute_units = 1;
  // Fill only what the caller's (possibly older, smaller) struct holds.
  const size_t size = out->struct_size;
  std::memcpy(out, &p, size < sizeof p ? size : sizeof p);
  out->struct_size = size;
  return BP_STATUS_OK;
}

bp_status_t Allocate(void* bd, int32_t device, size_t nbytes, void** out_ptr) {
  if (CheckDevice(S(bd), device, "allocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes == 0) {
    *out_ptr = nullptr;
    return BP_STATUS_OK;
  }
  const size_t limit = S(bd)->faults.memory_limit_bytes;
  if (limit != 0 && S(bd)->arena.live_bytes() + nbytes > limit) {
    char what[160];
    std::snprintf(what, sizeof what, "out of device memory allocating %zu bytes (BP_VENDOR_SIM_OOM_AFTER_BYTES=%zu)",
                  nbytes, limit);
    return Fail(S(bd), BP_STATUS_OUT_OF_MEMORY, "allocate", what);
  }
  if (!S(bd)->arena.Allocate(nbytes, out_ptr)) {
    char what[128];
    std::snprintf(what, sizeof what, "out of device memory allocating %zu bytes", nbytes);
    return Fail(S(bd), BP_STATUS_OUT_OF_MEMORY, "allocate", what);
  }
  return BP_STATUS_OK;
}

bp_status_t Deallocate(void* bd, int32_t device, void* ptr) {
  if (CheckDevice(S(bd), device, "deallocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (ptr == nullptr) return BP_STATUS_OK;
  if (!S(bd)->arena.Free(ptr))
    return Fail(S(bd), BP_STATUS_INVALID_ARGUMENT, "deallocate", "not a live vendor_sim allocation");
  return BP_STATUS_OK;
}

// The simulated device runs synchronously, so a copy is done when it returns.
bp_status_t CopyH2D(void* bd, int32_t device, const void* src, void* dst, size_t dst_offset, size_t nbytes,
                    bp_stream_t) {
  if (CheckDevice(S(bd), device, "copy_host_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes == 0) return BP_STATUS_OK;
  if (S(bd)->faults.NextCopyFails())
    return Fail(S(bd), BP_STATUS_INTERNAL, "copy_host_to_device", "injected copy failure (BP_VENDOR_SIM_FAIL_COPIES)");
  char* d = S(bd)->arena.Resolve(dst, dst_offset, nbytes);
  if (d == nullptr || src == nullptr)
    return Fail(S(bd), BP_STATUS_INVALID_ARGUMENT, "copy_host_to_device", "destination range outside its allocation");
  std::memcpy(d, src, nbytes);
  return BP_STATUS_OK;
}

bp_status_t CopyD2H(void* bd, int32_t device, const void* src, size_t src_offset, void* dst, size_t nbytes,
                    bp_stream_t) {
  if (CheckDevice(S(bd), device, "copy_device_to_host") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes == 0) return BP_STATUS_OK;
  if (S(bd)->faults.NextCopyFails())
    return Fail(S(bd), BP_STATUS_INTERNAL, "copy_device_to_host", "injected copy failure (BP_VENDOR_SIM_FAIL_COPIES)");
  const char* s = S(bd)->arena.Resolve(src, src_offset, nbytes);
  if (s == nullptr || dst == nullptr)
    return Fail(S(bd), BP_STATUS_INVALID_ARGUMENT, "copy_device_to_host", "source range outside its allocation");
  std::memcpy(dst, s, nbytes);
  return BP_STATUS_OK;
}

bp_status_t CopyD2D(void* bd, int32_t device, const void* src, size_t src_offset, void* dst, size_t dst_offset,
                    size_t nbytes, bp_stream_t) {
  if (CheckDevice(S(bd), device, "copy_device_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes == 0) return BP_STATUS_OK;
  if (S(bd)->faults.NextCopyFails())
    return Fail(S(bd), BP_STATUS_INTERNAL, "copy_device_to_device", "injected copy failure (BP_VENDOR_SIM_FAIL_COPIES)");
  const char* s = S(bd)->arena.Resolve(src, src_offset, nbytes);
  char* d = S(bd)->arena.Resolve(dst, dst_offset, nbytes);
  if (s == nullptr || d == nullptr)
    return Fail(S(bd), BP_STATUS_INVALID_ARGUMENT, "copy_device_to_device", "range outside its allocation");
  std::memmove(d, s, nbytes);
  return BP_STATUS_OK;
}

bp_status_t StreamGetDefault(void*, int32_t, bp_stream_t* out_stream) {
  *out_stream = nullptr;  // one implicit in-order queue
  return BP_STATUS_OK;
}
bp_status_t StreamSynchronize(void* bd, int32_t, bp_stream_t) {
  // Work completes when it is enqueued, unless BP_VENDOR_SIM_LATENCY_US says
  // the device is late.
  if (S(bd)->faults.latency_us != 0) std::this_thread::sleep_for(std::chrono::microseconds(S(bd)->faults.latency_us));
  return BP_STATUS_OK;
}

void Shutdown(void* bd) {
  State* s = S(bd);
  s->arena.Release();
  delete s;
}

// The whole negotiation: answer the highest version both sides support.
bp_status_t Negotiate(uint32_t* inout_version) { return bp_kit_negotiate(inout_version, BP_ABI_VERSION); }

bp_status_t Init(const bp_plugin_init_args_t* args) {
  if (args == nullptr || args->host == nullptr || args->backend == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  State* s = new (std::nothrow) State;
  if (s == nullptr) return args->host->set_error(BP_STATUS_OUT_OF_MEMORY, "vendor_sim: init: out of memory");
  s->host = args->host;
  // Device memory size: BP_VENDOR_SIM_MEMORY_MB (default 256 MiB).
  size_t mib = kDefaultArenaMiB;
  if (const char* env = std::getenv("BP_VENDOR_SIM_MEMORY_MB")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v > 0) mib = static_cast<size_t>(v);
  }
  s->faults.ReadEnvironment();
  if (!s->arena.Init(mib << 20, s->faults.alignment)) {
    delete s;
    return args->host->set_error(BP_STATUS_OUT_OF_MEMORY, "vendor_sim: init: cannot reserve the device arena");
  }
  const bp_status_t st = RegisterKernels(args, s);
  if (st != BP_STATUS_OK) {
    s->arena.Release();
    delete s;
    return st;
  }
  bp_backend_t b;
  std::memset(&b, 0, sizeof b);
  b.name = "vendor_sim";
  b.version = "1.0.0";
  b.device_type = kDLExtDev;
  b.backend_data = s;
  b.device_count = DeviceCount;
  b.device_properties = DeviceProperties;
  b.allocate = Allocate;
  b.deallocate = Deallocate;
  b.copy_host_to_device = CopyH2D;
  b.copy_device_to_host = CopyD2H;
  b.copy_device_to_device = CopyD2D;
  b.stream_get_default = StreamGetDefault;
  b.stream_synchronize = StreamSynchronize;
  b.shutdown = Shutdown;
  // Fill only the fields the host's struct has room for.
  const size_t size = args->backend->struct_size;
  b.struct_size = size;
  std::memcpy(args->backend, &b, size < sizeof b ? size : sizeof b);
  return BP_STATUS_OK;
}

const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, Negotiate, Init};

}  // namespace
}  // namespace vendor_sim

extern "C" BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return &vendor_sim::kEntry; }
