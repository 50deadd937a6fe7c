#include "plugin.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "backend_state.h"
#include "backplane/plugin_kit.h"
#include "memory.h"
#include "ops.h"

namespace bpcl {
namespace {

constexpr const char* kVersion = "0.1.0";

Backend* B(void* data) { return static_cast<Backend*>(data); }

bp_status_t Negotiate(uint32_t* inout_version) { return bp_kit_negotiate(inout_version, BP_ABI_VERSION); }

bp_status_t DeviceCount(void* data, int32_t* out_count) {
  if (out_count == nullptr) return B(data)->Report(Status(BP_STATUS_INVALID_ARGUMENT, "opencl device_count: NULL"));
  *out_count = static_cast<int32_t>(B(data)->devices.size());
  return BP_STATUS_OK;
}

void CopyString(char* dst, size_t cap, const std::string& s) {
  const size_t n = std::min(cap - 1, s.size());
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

bp_status_t DeviceProperties(void* data, int32_t device, bp_device_properties_t* out) {
  Backend* b = B(data);
  const Device* d = b->device(device);
  if (d == nullptr)
    return b->Report(Status(BP_STATUS_OUT_OF_RANGE, "opencl device_properties: device " + std::to_string(device) +
                                                        " out of range (" + std::to_string(b->devices.size()) +
                                                        " devices)"));
  if (out == nullptr || out->struct_size < sizeof(size_t))
    return b->Report(Status(BP_STATUS_INVALID_ARGUMENT, "opencl device_properties: NULL or struct_size too small"));
  bp_device_properties_t p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = out->struct_size;
  CopyString(p.name, sizeof p.name, d->name);
  CopyString(p.vendor, sizeof p.vendor, d->vendor);
  CopyString(p.driver_version, sizeof p.driver_version, d->driver_version);
  p.total_memory_bytes = d->global_mem_bytes;
  p.capabilities = (d->fp64 ? BP_DEVICE_CAP_FP64 : 0) | (d->fp16 ? BP_DEVICE_CAP_FP16 : 0);
  p.alignment_bytes = std::max<uint32_t>(d->mem_base_align_bytes, 1);
  p.compute_units = static_cast<int32_t>(d->compute_units);
  // Extensions, cut at a word boundary when they do not fit.
  std::string ext = d->extensions;
  while (!ext.empty() && ext.back() == ' ') ext.pop_back();
  if (ext.size() >= sizeof p.extensions) {
    ext.resize(sizeof p.extensions - 1);
    const size_t sp = ext.rfind(' ');
    if (sp != std::string::npos) ext.resize(sp);
  }
  CopyString(p.extensions, sizeof p.extensions, ext);
  // Write only the fields the caller's struct has room for.
  std::memcpy(out, &p, std::min(out->struct_size, sizeof p));
  return BP_STATUS_OK;
}

void Shutdown(void* data) {
  Backend* b = B(data);
  if (b == nullptr) return;
  ReleaseDevices(b);
  delete b;
}

bp_status_t Init(const bp_plugin_init_args_t* args) {
  if (args == nullptr || args->host == nullptr || args->backend == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  const bp_host_api_t* host = args->host;
  Backend* b = new (std::nothrow) Backend();
  if (b == nullptr) return host->set_error(BP_STATUS_OUT_OF_MEMORY, "opencl init: out of memory");
  b->host = host;
  b->registrar = args->registrar;
  try {
    b->cache_dir = DefaultCacheDir();
    const char* verbose = secure_getenv("BACKPLANE_OPENCL_VERBOSE");
    b->verbose = verbose != nullptr && verbose[0] != '\0' && verbose[0] != '0';
    Status st = EnumerateDevices(b);
    if (!st.ok()) {
      ReleaseDevices(b);
      delete b;
      return host->set_error(st.code(), ("opencl init: " + st.message()).c_str());
    }
    if (b->verbose) {
      for (const auto& d : b->devices)
        std::fprintf(stderr, "backplane opencl: device '%s' (%s, %s), program cache %s\n", d->name.c_str(),
                     d->platform_name.c_str(), d->driver_version.c_str(),
                     b->cache_dir.empty() ? "off" : b->cache_dir.c_str());
      if (b->devices.empty()) std::fprintf(stderr, "backplane opencl: %s\n", b->no_device_reason.c_str());
    }

    bp_backend_t t;
    std::memset(&t, 0, sizeof t);
    t.struct_size = args->backend->struct_size;
    t.name = "opencl";
    t.version = kVersion;
    t.device_type = kDLOpenCL;
    t.backend_data = b;
    t.no_device_reason = b->devices.empty() ? b->no_device_reason.c_str() : nullptr;
    t.device_count = DeviceCount;
    t.device_properties = DeviceProperties;
    t.allocate = Allocate;
    t.deallocate = Deallocate;
    t.copy_host_to_device = CopyHostToDevice;
    t.copy_device_to_host = CopyDeviceToHost;
    t.copy_device_to_device = CopyDeviceToDevice;
    t.stream_get_default = StreamGetDefault;
    t.stream_synchronize = StreamSynchronize;
    t.event_create = EventCreate;
    t.event_record = EventRecord;
    t.event_wait = EventWait;
    t.event_synchronize = EventSynchronize;
    t.event_destroy = EventDestroy;
    t.shutdown = Shutdown;

    std::vector<KernelReg> regs;
    AddPointwiseKernels(&regs);
    AddCopyKernels(&regs);
    AddReduceKernels(&regs);
    AddSoftmaxKernels(&regs);
    AddLinalgKernels(&regs);
    for (const KernelReg& r : regs) {
      bp_status_t rc = host->register_kernel(args->registrar, r.op_name, r.fn, r.data, 0);
      if (rc == BP_STATUS_NOT_FOUND) continue;  // an older host without this operator
      if (rc != BP_STATUS_OK) {
        // The host unloads us without shutdown: free everything first. The
        // host's own message (set_error) stays the last error.
        ReleaseDevices(b);
        delete b;
        return rc;
      }
    }
    if (args->backend->struct_size < sizeof(size_t)) {
      ReleaseDevices(b);
      delete b;
      return host->set_error(BP_STATUS_INVALID_ARGUMENT, "opencl init: backend struct_size too small");
    }
    std::memcpy(args->backend, &t, std::min(args->backend->struct_size, sizeof t));
    return BP_STATUS_OK;
  } catch (...) {
    ReleaseDevices(b);
    delete b;
    return host->set_error(BP_STATUS_INTERNAL, "opencl init: unexpected exception");
  }
}

const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, Negotiate, Init};

}  // namespace

const bp_plugin_entry_t* PluginEntry() { return &kEntry; }

}  // namespace bpcl
