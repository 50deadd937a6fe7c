// The plugin entry point, version negotiation, init (fills the bp_backend_t
// table from device.h, memory.h and stream.h, registers the kernels through
// kernels/register.cpp) and shutdown, written once for CUDA and HIP through
// gpu_runtime.h (one source, compiled into each plugin).
//
// Without a driver or a device the plugin still loads: device_count is 0,
// no_device_reason says why (the runtime's own words and error name), and
// kernels are registered anyway so dispatch tables look the same everywhere.
#include <cstdio>
#include <cstring>
#include <new>

#include "backplane/backend.h"
#include "backplane/plugin_kit.h"
#include "device.h"
#include "gpu_runtime.h"
#include "kernels/kernels.h"
#include "memory.h"
#include "platform.h"
#include "plugin.h"
#include "stream.h"

namespace bp_gpu {
namespace {

bp_status_t Negotiate(uint32_t* inout_version) { return bp_kit_negotiate(inout_version, BP_ABI_VERSION); }

void Shutdown(void* backend_data) {
  PluginState* st = static_cast<PluginState*>(backend_data);
  if (!st) return;
  DestroyLeakedStreams(st);
  FreeLeakedHostBlocks(st);  // memory.h; after the streams drained
  for (int32_t d = 0; d < st->device_count; ++d) {
    if (st->devices[d].stream) {
      (void)gpuSetDevice(d);
      (void)gpuStreamDestroy(st->devices[d].stream);
    }
  }
  platform::Destroy(st->platform);
  delete st;
}

bp_status_t Init(const bp_plugin_init_args_t* args) {
  if (!args || !args->host || !args->backend || !args->host->register_kernel ||
      !args->host->set_error) {
    return BP_STATUS_INVALID_ARGUMENT;
  }
  const bp_host_api_t* host = args->host;
  PluginState* st = nullptr;
  try {
    st = new PluginState();
    st->host = host;
    st->registrar = args->registrar;
    EnumerateDevices(st);
    st->platform = platform::Create(st->device_count);
  } catch (const std::bad_alloc&) {
    delete st;
    return host->set_error(BP_STATUS_OUT_OF_MEMORY, "GPU plugin init: out of host memory");
  } catch (...) {
    delete st;
    return host->set_error(BP_STATUS_INTERNAL, "GPU plugin init: unexpected exception");
  }

  bp_backend_t* b = args->backend;
  // Fill only the fields the host's struct has room for (struct_size preset).
  bp_backend_t mine;
  std::memset(&mine, 0, sizeof mine);
  mine.struct_size = b->struct_size < sizeof mine ? b->struct_size : sizeof mine;
  mine.name = platform::kBackendName;
  mine.version = "0.1.0";
  mine.device_type = platform::kDLDeviceType;
  mine.backend_data = st;
  mine.no_device_reason = st->device_count == 0 ? st->no_device_reason.c_str() : nullptr;
  mine.device_count = DeviceCount;  // device.h
  mine.device_properties = DeviceProperties;
  mine.allocate = Allocate;  // memory.h
  mine.deallocate = Deallocate;
  mine.copy_host_to_device = CopyHostToDevice;
  mine.copy_device_to_host = CopyDeviceToHost;
  mine.copy_device_to_device = CopyDeviceToDevice;
  mine.stream_get_default = StreamGetDefault;  // stream.h
  mine.stream_synchronize = StreamSynchronize;
  mine.event_create = EventCreate;
  mine.event_record = EventRecord;
  mine.event_wait = EventWait;
  mine.event_synchronize = EventSynchronize;
  mine.event_destroy = EventDestroy;
  mine.shutdown = Shutdown;
  mine.stream_create = StreamCreate;  // ABI 1.4, stream.h
  mine.stream_destroy = StreamDestroy;
  mine.event_query = EventQuery;
  mine.event_elapsed_time = EventElapsedTime;
  mine.host_allocate = HostAllocate;  // ABI 1.4, memory.h
  mine.host_deallocate = HostDeallocate;
  mine.copy_device_to_host_async = CopyDeviceToHostAsync;
  std::memcpy(b, &mine, mine.struct_size);

  const bp_status_t s = RegisterKernels(host, args->registrar);
  if (s != BP_STATUS_OK) {
    Shutdown(st);  // the host unloads without calling shutdown on error
    return s;
  }
  if (host->log && st->device_count == 0) {
    char msg[320];
    std::snprintf(msg, sizeof msg, "%s backend: 0 devices (%s)", platform::kBackendName,
                  st->no_device_reason.c_str());
    host->log(args->registrar, BP_LOG_INFO, msg);
  }
  return BP_STATUS_OK;
}

const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, Negotiate, Init};

}  // namespace
}  // namespace bp_gpu

extern "C" BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) {
  return &bp_gpu::kEntry;
}
