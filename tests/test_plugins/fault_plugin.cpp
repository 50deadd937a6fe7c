// "fault": one misbehaving plugin for the fault suite (fault_plugin_test.cpp,
// conformance_load_isolation_test.cpp). The environment variable BP_FAULT,
// read at each step, picks the one fault it commits; unset, it is a small,
// correct backend (host memory behind opaque-looking pointers, one kernel:
// add.Tensor for float32).
//
//   entry_null            bp_plugin_entry() returns NULL
//   negotiate_fail        negotiate returns UNAVAILABLE
//   negotiate_newer       negotiate answers a newer minor than offered
//   init_fail             init fails with a message
//   init_fail_silent      init fails with no message
//   init_fail_unknown     init returns 1234 (not a bp_status_t)
//   init_huge_message     init fails with a 64 MiB message
//   init_crash            init dereferences NULL
//   init_exit             init calls _exit(3)
//   init_hang             init sleeps forever (after writing one byte to
//                         the file descriptor BP_FAULT_READY_FD names, if
//                         set: the test's signal that init has begun)
//   stray_thread          init starts a thread that keeps running in the
//                         plugin's code after shutdown (and after dlclose)
//   bad_name              backend name "Fault!"
//   devices_huge          device_count reports 5,000,000
//   devices_negative      device_count reports -1
//   device_count_fail     device_count fails
//   properties_fail       device_properties fails with no message
//   alloc_fail            allocate fails (OUT_OF_MEMORY) with a message
//   alloc_fail_silent     allocate fails (INTERNAL) with no message
//   h2d_fail              copy_host_to_device fails with a message
//   d2h_fail_silent       copy_device_to_host fails with no message
//   kernel_fail           the kernel fails with a message
//   kernel_fail_silent    the kernel fails with no message
//   kernel_fail_unknown   the kernel returns -7 (not a bp_status_t)
//   kernel_huge_message   the kernel fails with a 64 MiB message
//   kernel_write_then_fail  the kernel writes its output, then fails
//   kernel_crash          the kernel dereferences NULL
//   kernel_hang           the kernel sleeps forever
//   kernel_overrun_1      the kernel writes 1 float past its output
//   kernel_overrun_100    the kernel writes 100 floats past its output
//   init_reenter          init calls bp_plugin_load on the host's context
//                         (BP_FAULT_CTX, "%p") with its own path
//   long_strings          version and no_device_reason of 64 MiB
//   long_name             a backend name of 200 letters
//   long_op_name          register_kernel with a 64 MiB operator name
//   foreign_namespace     define_op "testdev::twice" after naming itself
//   foreign_namespace_late  define_op "testdev::twice" before naming itself
//   unknown_op            register_kernel "softmax.Int", skipped on NOT_FOUND
//   variant_op            register_kernel "relu_"
// BP_FAULT_TRACE=<file>: each constructor, init and shutdown call appends a
// line to <file> (whether the plugin's code ran).
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"

namespace {

const bp_host_api_t* g_host = nullptr;

bool Fault(const char* name) {
  const char* f = std::getenv("BP_FAULT");
  return f != nullptr && std::strcmp(f, name) == 0;
}

[[noreturn]] void Hang() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

void Crash() {
  // SIGSEGV on purpose. Not NULL: UBSan's null check would turn it into a
  // report and exit status 1 in the sanitizer builds.
  volatile int* volatile p = reinterpret_cast<volatile int*>(uintptr_t{8});
  *p = 1;
}

void Trace(const char* what) {
  const char* path = std::getenv("BP_FAULT_TRACE");
  if (path == nullptr) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", what);
    std::fclose(f);
  }
}

struct TraceConstructor {
  TraceConstructor() { Trace("constructor"); }
} g_trace_constructor;

const std::string& Huge() {
  // Destroyed when the plugin is unloaded (LeakSanitizer reports a leaked one).
  static const std::string huge = std::string("fault: ") + std::string(64u << 20, 'x');
  return huge;
}

bp_status_t DeviceCount(void*, int32_t* out) {
  if (Fault("device_count_fail")) return g_host->set_error(BP_STATUS_UNAVAILABLE, "fault: driver went away");
  *out = Fault("devices_huge") ? 5000000 : Fault("devices_negative") ? -1 : 1;
  return BP_STATUS_OK;
}

bp_status_t Properties(void*, int32_t, bp_device_properties_t* p) {
  if (Fault("properties_fail")) return BP_STATUS_INTERNAL;
  std::strcpy(p->name, "fault device");
  std::strcpy(p->vendor, "backplane tests");
  std::strcpy(p->driver_version, "1");
  p->total_memory_bytes = 1u << 30;
  p->capabilities = BP_DEVICE_CAP_FP64;
  p->alignment_bytes = 64;
  p->compute_units = 1;
  p->extensions[0] = '\0';
  return BP_STATUS_OK;
}

bp_status_t Allocate(void*, int32_t, size_t n, void** out) {
  if (Fault("alloc_fail")) return g_host->set_error(BP_STATUS_OUT_OF_MEMORY, "fault: device memory exhausted");
  if (Fault("alloc_fail_silent")) return BP_STATUS_INTERNAL;
  *out = n == 0 ? nullptr : std::malloc(n);
  return n != 0 && *out == nullptr ? BP_STATUS_OUT_OF_MEMORY : BP_STATUS_OK;
}

bp_status_t Deallocate(void*, int32_t, void* ptr) {
  std::free(ptr);
  return BP_STATUS_OK;
}

bp_status_t H2D(void*, int32_t, const void* src, void* dst, size_t off, size_t n, bp_stream_t) {
  if (Fault("h2d_fail")) return g_host->set_error(BP_STATUS_DATA_LOSS, "fault: DMA engine error");
  std::memcpy(static_cast<char*>(dst) + off, src, n);
  return BP_STATUS_OK;
}

bp_status_t D2H(void*, int32_t, const void* src, size_t off, void* dst, size_t n, bp_stream_t) {
  if (Fault("d2h_fail_silent")) return BP_STATUS_DATA_LOSS;
  std::memcpy(dst, static_cast<const char*>(src) + off, n);
  return BP_STATUS_OK;
}

bp_status_t D2D(void*, int32_t, const void* src, size_t soff, void* dst, size_t doff, size_t n, bp_stream_t) {
  std::memmove(static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, n);
  return BP_STATUS_OK;
}

float* Elem(const DLTensor* t, int64_t index) {
  int64_t off = 0;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    off += (index % t->shape[d]) * t->strides[d];
    index /= t->shape[d];
  }
  return reinterpret_cast<float*>(static_cast<char*>(t->data) + t->byte_offset) + off;
}

// add.Tensor for float32, or the fault BP_FAULT names.
bp_status_t AddKernel(const bp_kernel_call_t* call) {
  if (Fault("kernel_fail")) {
    return bp_kit_fail(call, g_host, BP_STATUS_INVALID_ARGUMENT, "fault: add.Tensor: argument 'other': rejected");
  }
  if (Fault("kernel_fail_silent")) return BP_STATUS_ABORTED;
  if (Fault("kernel_fail_unknown")) return static_cast<bp_status_t>(-7);
  if (Fault("kernel_huge_message")) return bp_kit_fail(call, g_host, BP_STATUS_INTERNAL, Huge().c_str());
  if (Fault("kernel_crash")) Crash();
  if (Fault("kernel_hang")) Hang();
  const DLTensor* x = call->args[BP_ARG_ADD_TENSOR_SELF].u.tensor;
  const DLTensor* y = call->args[BP_ARG_ADD_TENSOR_OTHER].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) return BP_STATUS_UNIMPLEMENTED;
  const bp_kernel_arg_t& a = call->args[BP_ARG_ADD_TENSOR_ALPHA];
  const double alpha = a.kind == BP_VALUE_DOUBLE ? a.u.d : static_cast<double>(a.u.i);
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];
  for (int64_t i = 0; i < n; ++i) *Elem(out, i) = static_cast<float>(*Elem(x, i) + alpha * *Elem(y, i));
  const int64_t overrun = Fault("kernel_overrun_1") ? 1 : Fault("kernel_overrun_100") ? 100 : 0;
  // Past the last element of a contiguous output: what an off-by-n launch does.
  float* end = reinterpret_cast<float*>(static_cast<char*>(out->data) + out->byte_offset) + n;
  for (int64_t i = 0; i < overrun; ++i) end[i] = 1.0f;
  if (Fault("kernel_write_then_fail")) {
    return bp_kit_fail(call, g_host, BP_STATUS_DATA_LOSS, "fault: add.Tensor: wrote the output, then failed");
  }
  return BP_STATUS_OK;
}

bp_status_t StreamDefault(void*, int32_t, bp_stream_t* out) {
  *out = nullptr;
  return BP_STATUS_OK;
}
bp_status_t StreamSync(void*, int32_t, bp_stream_t) { return BP_STATUS_OK; }

void Shutdown(void*) { Trace("shutdown"); }

bp_status_t SameShapeMeta(const bp_meta_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  call->out_specs[0].dtype = x->dtype;
  call->out_specs[0].ndim = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) call->out_specs[0].sizes[i] = x->shape[i];
  return BP_STATUS_OK;
}

// init calling back into the host's loader (BP_FAULT_CTX names the context).
bp_status_t LoadFromInit() {
  using LoadFn = bp_status_t (*)(void*, const char*, void*);
  auto load = reinterpret_cast<LoadFn>(dlsym(RTLD_DEFAULT, "bp_plugin_load"));
  const char* ctx = std::getenv("BP_FAULT_CTX");
  Dl_info self{};
  if (load == nullptr || ctx == nullptr || dladdr(reinterpret_cast<void*>(&LoadFromInit), &self) == 0) {
    return g_host->set_error(BP_STATUS_INTERNAL, "fault: init_reenter needs BP_FAULT_CTX and bp_plugin_load");
  }
  void* context = reinterpret_cast<void*>(static_cast<uintptr_t>(std::strtoull(ctx, nullptr, 16)));
  return load(context, self.dli_fname, nullptr);
}

bp_status_t Negotiate(uint32_t* v) {
  if (Fault("negotiate_fail")) return BP_STATUS_UNAVAILABLE;
  if (Fault("negotiate_newer")) {
    *v = BP_MAKE_ABI_VERSION(BP_ABI_VERSION_MAJOR, BP_ABI_VERSION_MINOR + 1);
    return BP_STATUS_OK;
  }
  return bp_kit_negotiate(v, BP_ABI_VERSION);
}

// stray_thread: wakes every millisecond, forever, in this library's code.
volatile uint64_t g_ticks = 0;
void* StrayThread(void*) {
  for (;;) {
    ++g_ticks;
    usleep(1000);
  }
  return nullptr;
}

bp_status_t Init(const bp_plugin_init_args_t* args) {
  g_host = args->host;
  Trace("init");
  if (Fault("init_reenter")) return LoadFromInit();
  const char* foreign = "testdev::twice(Tensor self) -> Tensor";
  if (Fault("foreign_namespace_late")) {
    const bp_status_t rc = args->host->define_op(args->registrar, foreign, nullptr, nullptr, SameShapeMeta, nullptr);
    if (rc != BP_STATUS_OK) return rc;
  }
  if (Fault("stray_thread")) {
    pthread_t t;
    if (pthread_create(&t, nullptr, StrayThread, nullptr) == 0) pthread_detach(t);
  }
  if (Fault("init_fail")) return g_host->set_error(BP_STATUS_UNAVAILABLE, "fault: no driver");
  if (Fault("init_fail_silent")) return BP_STATUS_UNAVAILABLE;
  if (Fault("init_fail_unknown")) return static_cast<bp_status_t>(1234);
  if (Fault("init_huge_message")) return g_host->set_error(BP_STATUS_UNAVAILABLE, Huge().c_str());
  if (Fault("init_crash")) Crash();
  if (Fault("init_exit")) _exit(3);
  if (Fault("init_hang")) {
    if (const char* fd = std::getenv("BP_FAULT_READY_FD")) {
      const char byte = 1;
      if (write(std::atoi(fd), &byte, 1) != 1) std::perror("fault plugin: BP_FAULT_READY_FD");
    }
    Hang();
  }
  bp_backend_t* b = args->backend;
  static const std::string long_name(200, 'a');
  b->name = Fault("bad_name") ? "Fault!" : Fault("long_name") ? long_name.c_str() : "fault";
  b->version = Fault("long_strings") ? Huge().c_str() : "0.1.0";
  b->no_device_reason = Fault("long_strings") ? Huge().c_str() : nullptr;
  b->shutdown = Shutdown;
  b->device_type = kDLExtDev;
  b->backend_data = nullptr;
  b->device_count = DeviceCount;
  b->device_properties = Properties;
  b->allocate = Allocate;
  b->deallocate = Deallocate;
  b->copy_host_to_device = H2D;
  b->copy_device_to_host = D2H;
  b->copy_device_to_device = D2D;
  b->stream_get_default = StreamDefault;
  b->stream_synchronize = StreamSync;
  if (Fault("foreign_namespace")) {
    return args->host->define_op(args->registrar, foreign, nullptr, nullptr, SameShapeMeta, nullptr);
  }
  if (Fault("long_op_name")) return args->host->register_kernel(args->registrar, Huge().c_str(), AddKernel, nullptr, 0);
  if (Fault("variant_op")) return args->host->register_kernel(args->registrar, "relu_", AddKernel, nullptr, 0);
  if (Fault("unknown_op")) {
    // The documented policy, through the kit's kernel table as every backend
    // registers: the unknown operator is skipped, the rows after it register.
    static const bp_kit_kernel_t kTable[] = {{"softmax.Int", AddKernel, nullptr},
                                             {BP_OP_ADD_TENSOR, AddKernel, nullptr}};
    return bp_kit_register_kernels(args->host, args->registrar, kTable, 2, nullptr);
  }
  return args->host->register_kernel(args->registrar, BP_OP_ADD_TENSOR, AddKernel, nullptr, 0);
}

const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, Negotiate, Init};

}  // namespace

extern "C" BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) {
  return Fault("entry_null") ? nullptr : &kEntry;
}
