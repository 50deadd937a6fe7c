// Entry point of the OpenCL backend plugin: the exported bp_plugin_entry,
// version negotiation, init (enumerates devices, fills bp_backend_t from
// device.h, memory.h and stream.h, registers the kernels through
// kernels/register.cpp), shutdown.
#include "plugin.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backplane/plugin_kit.h"
#include "kernels/kernels.h"
#include "kernels/program_cache.h"
#include "memory.h"
#include "stream.h"

namespace bpcl {

bp_status_t Backend::Report(const Status& st) const {
  if (host != nullptr && host->set_error != nullptr) return host->set_error(st.code(), st.message().c_str());
  return st.code();
}

Device* Backend::device(int32_t index) const {
  if (index < 0 || static_cast<size_t>(index) >= devices.size()) return nullptr;
  return devices[static_cast<size_t>(index)].get();
}

namespace {

constexpr const char* kVersion = "0.1.0";

bp_status_t Negotiate(uint32_t* inout_version) { return bp_kit_negotiate(inout_version, BP_ABI_VERSION); }

void Shutdown(void* data) {
  Backend* b = B(data);
  if (b == nullptr) return;
  ReleaseDevices(b);  // finishes the queues: no read is still writing a host block
  ReleaseHostBlocks(b);
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
    const char* clblast = secure_getenv("BACKPLANE_OPENCL_CLBLAST");
    if (clblast != nullptr && clblast[0] == '0') b->use_clblast = Backend::ClblastUse::kNever;
    if (clblast != nullptr && clblast[0] == '1') b->use_clblast = Backend::ClblastUse::kAlways;
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
    t.device_count = DeviceCount;  // device.h
    t.device_properties = DeviceProperties;
    t.allocate = Allocate;  // memory.h
    t.deallocate = Deallocate;
    t.copy_host_to_device = CopyHostToDevice;
    t.copy_device_to_host = CopyDeviceToHost;
    t.copy_device_to_device = CopyDeviceToDevice;
    t.stream_get_default = StreamGetDefault;  // stream.h
    t.stream_synchronize = StreamSynchronize;
    t.event_create = EventCreate;
    t.event_record = EventRecord;
    t.event_wait = EventWait;
    t.event_synchronize = EventSynchronize;
    t.event_destroy = EventDestroy;
    t.shutdown = Shutdown;
    t.stream_create = StreamCreate;  // ABI 1.4, stream.h
    t.stream_destroy = StreamDestroy;
    t.event_query = EventQuery;
    t.event_elapsed_time = EventElapsedTime;
    t.host_allocate = HostAllocate;  // ABI 1.4, memory.h
    t.host_deallocate = HostDeallocate;
    t.copy_device_to_host_async = CopyDeviceToHostAsync;

    bool fp64 = false;
    for (const auto& d : b->devices) fp64 = fp64 || d->fp64;
    const bp_status_t rc = RegisterKernels(host, args->registrar, fp64);
    if (rc != BP_STATUS_OK) {
      // The host unloads us without shutdown: free everything first. The
      // host's own message (set_error) stays the last error.
      ReleaseDevices(b);
      delete b;
      return rc;
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

extern "C" BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return bpcl::PluginEntry(); }
