// vendor_sim: a simulated accelerator, and the template for a new backend.
// One device whose memory is a private arena reached only through handles
// and the copy functions (memory.cpp); streams and events (stream.cpp,
// events.cpp); three native kernels (kernels/); every other operator runs
// through the core's CPU fallback. Includes only abi/ headers.
//
// This file: the exported entry point, version negotiation, init (fills
// bp_backend_t from device.h, memory.h, stream.h, events.h and, ABI 1.6,
// collectives.h; registers the kernels) and shutdown.
#include "plugin.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "collectives.h"
#include "device.h"
#include "events.h"
#include "kernels/kernels.h"
#include "memory.h"
#include "stream.h"

namespace vendor_sim {

bp_status_t Fail(const State* state, bp_status_t code, const char* op, const char* what) {
  char msg[256];
  std::snprintf(msg, sizeof msg, "vendor_sim: %s: %s", op, what);
  return state != nullptr && state->host != nullptr ? state->host->set_error(code, msg) : code;
}

bp_status_t KernelFail(const bp_kernel_call_t* call, bp_status_t code, const char* what) {
  const State* state = static_cast<const State*>(call->kernel_data);
  return bp_kit_failf(call, state != nullptr ? state->host : nullptr, "vendor_sim", code, "%s", what);
}

namespace {

constexpr size_t kDefaultArenaMiB = 256;

void Shutdown(void* bd) {
  State* s = StateOf(bd);
  s->streams.StopAll();  // queued work still runs: it reads and writes the arena
  s->events.Clear();
  ReleaseHostBlocks(s);
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
  if (const char* bad = s->faults.ReadEnvironment()) {
    delete s;
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "vendor_sim: init: BP_VENDOR_SIM_BROKEN='%.64s' is not a broken mode "
                  "(test only: ignore_event_wait, early_event or no_streams; unset it for a correct device)",
                  bad);
    return args->host->set_error(BP_STATUS_INVALID_ARGUMENT, msg);
  }
  // BP_VENDOR_SIM_COLLECTIVES: the simulated interconnect's collectives
  // (collectives.h): on by default, "0" off (the host's Gloo engine then
  // serves vendor_sim), "wrong" a deliberately wrong all_reduce (test only).
  const bp_collectives_t* collectives = nullptr;
  if (!CollectivesFor(std::getenv("BP_VENDOR_SIM_COLLECTIVES"), &collectives)) {
    delete s;
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "vendor_sim: init: BP_VENDOR_SIM_COLLECTIVES='%.64s' is not a mode "
                  "(1 or unset: on; 0: off; wrong: test only)",
                  std::getenv("BP_VENDOR_SIM_COLLECTIVES"));
    return args->host->set_error(BP_STATUS_INVALID_ARGUMENT, msg);
  }
  // BP_VENDOR_SIM_UNIFIED=1: device memory the host can address (the device
  // reports BP_DEVICE_CAP_UNIFIED and the core's fallback wraps it, no copies).
  const char* unified = std::getenv("BP_VENDOR_SIM_UNIFIED");
  if (!s->arena.Init(mib << 20, s->faults.alignment, unified != nullptr && std::strcmp(unified, "1") == 0)) {
    delete s;
    return args->host->set_error(BP_STATUS_OUT_OF_MEMORY, "vendor_sim: init: cannot reserve the device arena");
  }
  // BP_VENDOR_SIM_ASYNC=1: a device that runs each stream's queue on its own
  // thread (queue.h), each kernel or copy BP_VENDOR_SIM_LAUNCH_US late and
  // each kernel BP_VENDOR_SIM_KERNEL_US long (and, test only, held while the
  // file BP_VENDOR_SIM_HOLD_KERNELS names exists).
  const char* async = std::getenv("BP_VENDOR_SIM_ASYNC");
  if (!s->streams.Start(async != nullptr && std::strcmp(async, "1") == 0, s->faults.launch_us, s->faults.kernel_us,
                        s->faults.hold_kernels_path.c_str())) {
    s->arena.Release();
    delete s;
    return args->host->set_error(BP_STATUS_INTERNAL, "vendor_sim: init: cannot start the device thread");
  }
  const bp_status_t st = RegisterKernels(args, s);
  if (st != BP_STATUS_OK) {
    s->streams.StopAll();
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
  b.device_count = DeviceCount;  // device.h
  b.device_properties = DeviceProperties;
  b.allocate = Allocate;  // memory.h
  b.deallocate = Deallocate;
  b.copy_host_to_device = CopyHostToDevice;
  b.copy_device_to_host = CopyDeviceToHost;
  b.copy_device_to_device = CopyDeviceToDevice;
  b.stream_get_default = StreamGetDefault;  // stream.h
  b.stream_synchronize = StreamSynchronize;
  if (s->faults.broken != Faults::Broken::kNoStreams) {  // test only: the default stream alone
    b.stream_create = StreamCreate;
    b.stream_destroy = StreamDestroy;
    b.event_create = EventCreate;  // events.h
    b.event_record = EventRecord;
    b.event_wait = EventWait;
    b.event_synchronize = EventSynchronize;
    b.event_destroy = EventDestroy;
    b.event_query = EventQuery;
    b.event_elapsed_time = EventElapsedTime;
  }
  b.shutdown = Shutdown;
  b.host_allocate = HostAllocate;  // memory.h (ABI 1.4)
  b.host_deallocate = HostDeallocate;
  b.copy_device_to_host_async = CopyDeviceToHostAsync;
  // ABI 1.6: only for a host that negotiated it and whose struct has the
  // slot (an older host never reads past its own struct).
  if (args->abi_version >= BP_MAKE_ABI_VERSION(1, 6) && BP_KIT_HAS_FIELD(args->backend, collectives))
    b.collectives = collectives;
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
