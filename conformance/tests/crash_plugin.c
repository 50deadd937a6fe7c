/* "crashdev": a deliberately broken test backend for bp-conformance. Host
 * memory, one device. Its `neg` kernel dies of SIGSEGV (an invalid write),
 * its `abs` kernel never returns, its `mul.Tensor` kernel writes wrong values
 * (float32; other dtypes decline), and its float32 `exp` kernel is right unless the environment sets
 * BPC_CRASHDEV_BREAK_EXP=1 (a regression planted for --baseline). Every other
 * operator falls back to the CPU. Built into a test-only directory, never
 * installed or discovered. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"
#include "host_memory_device.h"

static bp_status_t device_properties(void* bd, int32_t device, bp_device_properties_t* p) {
  (void)bd;
  (void)device;
  strcpy(p->name, "crashdev");
  strcpy(p->vendor, "bp-conformance tests");
  p->capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16 | BP_DEVICE_CAP_UNIFIED;
  p->alignment_bytes = 64;
  p->total_memory_bytes = (uint64_t)1 << 30;
  return BP_STATUS_OK;
}

/* A real invalid write, not raise(SIGSEGV): a handler a host library installs
 * (pocl's LLVM, loaded with the OpenCL plugin, resets itself and returns)
 * swallows a raised signal once, while a faulting store runs again and kills.
 * Not NULL: UBSan's null check would turn the store into a report and exit
 * status 1 in the sanitizer builds instead of SIGSEGV. */
static volatile uintptr_t g_bad_address = 8;

static bp_status_t crash_kernel(const bp_kernel_call_t* call) {
  (void)call;
  *(volatile int*)g_bad_address = 1;
  return BP_STATUS_INTERNAL;
}

static bp_status_t hang_kernel(const bp_kernel_call_t* call) {
  (void)call;
  for (;;) sleep(1);
  return BP_STATUS_INTERNAL;
}

static int is_f32(const DLTensor* t) { return t->dtype.code == kDLFloat && t->dtype.bits == 32; }

static float* f32_at(const DLTensor* t, int64_t linear) { return (float*)element_at(t, linear); }

static bp_status_t wrong_mul_kernel(const bp_kernel_call_t* call) {
  const DLTensor* out = call->outputs[0];
  if (!is_f32(out)) return bp_kit_fail(call, g_host, BP_STATUS_UNIMPLEMENTED, "crashdev: mul.Tensor: float32 only");
  for (int64_t i = 0; i < numel(out); ++i) *f32_at(out, i) = 42.0f;
  return BP_STATUS_OK;
}

static bp_status_t exp_kernel(const bp_kernel_call_t* call) {
  const DLTensor* in = call->args[BP_ARG_EXP_SELF].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (!is_f32(out) || !is_f32(in)) {
    return bp_kit_fail(call, g_host, BP_STATUS_UNIMPLEMENTED, "crashdev: exp: float32 only");
  }
  const char* env = getenv("BPC_CRASHDEV_BREAK_EXP");
  const int broken = env != NULL && strcmp(env, "1") == 0;
  for (int64_t i = 0; i < numel(out); ++i) *f32_at(out, i) = broken ? 42.0f : expf(*f32_at(in, i));
  return BP_STATUS_OK;
}

static bp_status_t negotiate(uint32_t* v) { return bp_kit_negotiate(v, BP_ABI_VERSION); }

static bp_status_t init(const bp_plugin_init_args_t* args) {
  bp_backend_t* b = args->backend;
  g_host = args->host;
  b->name = "crashdev";
  b->version = "1.0.0";
  b->device_type = kDLExtDev;
  host_memory_device_install(b);
  b->device_properties = device_properties;
  bp_status_t st = args->host->register_kernel(args->registrar, BP_OP_NEG, crash_kernel, NULL, 0);
  if (st != BP_STATUS_OK) return st;
  st = args->host->register_kernel(args->registrar, BP_OP_ABS, hang_kernel, NULL, 0);
  if (st != BP_STATUS_OK) return st;
  st = args->host->register_kernel(args->registrar, BP_OP_MUL_TENSOR, wrong_mul_kernel, NULL, 0);
  if (st != BP_STATUS_OK) return st;
  return args->host->register_kernel(args->registrar, BP_OP_EXP, exp_kernel, NULL, 0);
}

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) {
  static const bp_plugin_entry_t entry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, negotiate, init};
  return &entry;
}
