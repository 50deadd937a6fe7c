// Entry point of the CPU backend plugin: version negotiation, init (fills the
// backend table from device.h and stream.h, registers every kernel family
// through kernels/register.cpp), shutdown.
//
// No memory.cpp: the memory and copy slots stay NULL, the core uses host
// memory for kDLCPU backends.
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>

#include <cstring>
#include <mutex>
#include <new>

#include "backplane/backend.h"
#include "backplane/plugin_kit.h"
#include "device.h"
#include "kernels/kernels.h"
#include "plugin.h"
#include "stream.h"

namespace bp_cpu {

CpuState* g_state = nullptr;

namespace {

bp_status_t Negotiate(uint32_t* inout_version) { return bp_kit_negotiate(inout_version, BP_ABI_VERSION); }

void Shutdown(void* backend_data) {
  auto* state = static_cast<CpuState*>(backend_data);
  if (g_state == state) g_state = nullptr;
  delete state;
}

// GNU OpenMP's thread pool does not survive fork(): a parallel region in the
// child waits forever for threads that only exist in the parent. Hosts fork
// (bp-conformance isolates crashes in child processes), so a child runs our
// kernels and oneDNN's single-threaded. glibc drops this handler when the
// plugin is unloaded.
void SingleThreadAfterFork() { omp_set_num_threads(1); }

// The OpenMP runtime's worker threads are never joined: they outlive a
// parallel region, and the plugin. Unloading the plugin would unmap
// libgomp's code under them (a worker still spinning after the last region
// then crashes the host, typically at exit). Pin the runtime the plugin
// linked: RTLD_NOLOAD finds it, RTLD_NODELETE keeps it mapped for good.
void PinOpenMpRuntime() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&omp_get_max_threads), &info) == 0 || info.dli_fname == nullptr) return;
  dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // the handle is never closed: on purpose
}

bp_status_t Init(const bp_plugin_init_args_t* args) {
  if (args == nullptr || args->host == nullptr || args->backend == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  const bp_host_api_t* host = args->host;
  auto* state = new (std::nothrow) CpuState;
  if (state == nullptr) return host->set_error(BP_STATUS_OUT_OF_MEMORY, "cpu: init: out of memory");
  state->host = host;
  state->registrar = args->registrar;
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] {
    pthread_atfork(nullptr, nullptr, SingleThreadAfterFork);
    PinOpenMpRuntime();
  });

  bp_backend_t b;
  std::memset(&b, 0, sizeof b);
  b.name = "cpu";
  b.version = "1.0.0";
  b.device_type = kDLCPU;
  b.backend_data = state;
  b.device_count = DeviceCount;  // device.h
  b.device_properties = DeviceProperties;
  b.stream_get_default = StreamGetDefault;  // stream.h (no events: the CPU runs synchronously)
  b.stream_synchronize = StreamSynchronize;
  b.shutdown = Shutdown;

  const bp_status_t st = RegisterKernels(args, state);
  if (st != BP_STATUS_OK) {
    delete state;
    return st;  // the host's register_kernel has set the message
  }
  // Hand back only the fields the host's struct has room for.
  const size_t size = args->backend->struct_size;
  b.struct_size = size;
  std::memcpy(args->backend, &b, size < sizeof b ? size : sizeof b);
  g_state = state;
  return BP_STATUS_OK;
}

const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, Negotiate, Init};

}  // namespace
}  // namespace bp_cpu

extern "C" BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return &bp_cpu::kEntry; }
