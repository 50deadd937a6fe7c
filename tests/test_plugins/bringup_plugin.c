/* "bringup": a backend in bring-up, for bp-conformance's bring-up reports
 * (tests/conformance_bringup_test.sh). Host memory, one device. Kernels:
 *   neg  float32, float64, int32 right; float64 writes through NULL when
 *        BPC_BRINGUP_CRASH=1 (one crashing cell inside a group of passing ones);
 *   abs  float32, float64, int32 right; float64 never returns when
 *        BPC_BRINGUP_HANG=1 (one timed-out cell);
 *   exp  float32: writes its output, then declines (UNIMPLEMENTED);
 *   mul.Tensor  float32: writes its output, then fails (INVALID_ARGUMENT);
 *   div.Tensor_mode  declined, unless BPC_BRINGUP_WRONG_DIV=1: then it
 *        computes wrong values (42 for a float32 result, NOT self for a bool
 *        one), so the dtype-claims probe of bool, a dtype ops.yaml does not
 *        claim (true division casts it to float32 for the kernel: the cast
 *        route), must fail it rather than report it as not native.
 * Every other dtype is declined before anything is written, so it runs
 * through the CPU fallback, as every other operator does. */
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
  strcpy(p->name, "bringup");
  strcpy(p->vendor, "bp-conformance tests");
  p->capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16;
  p->alignment_bytes = 64;
  p->total_memory_bytes = (uint64_t)1 << 30;
  return BP_STATUS_OK;
}

static int env_on(const char* name) {
  const char* v = getenv(name);
  return v != NULL && strcmp(v, "1") == 0;
}

static int is(const DLTensor* t, int code, int bits) { return t->dtype.code == code && t->dtype.bits == bits; }

/* neg (sign = -1) or abs (sign = 0) on float32, float64, int32. */
static bp_status_t unary(const bp_kernel_call_t* call, int sign) {
  const DLTensor* in = call->args[0].u.tensor;
  const DLTensor* out = call->outputs[0];
  const int64_t n = numel(out);
  if (is(out, kDLFloat, 32)) {
    for (int64_t i = 0; i < n; ++i) {
      const float x = *(const float*)element_at(in, i);
      *(float*)element_at(out, i) = sign ? -x : (x < 0 ? -x : x + 0.0f);
    }
  } else if (is(out, kDLFloat, 64)) {
    for (int64_t i = 0; i < n; ++i) {
      const double x = *(const double*)element_at(in, i);
      *(double*)element_at(out, i) = sign ? -x : (x < 0 ? -x : x + 0.0);
    }
  } else if (is(out, kDLInt, 32)) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t x = *(const uint32_t*)element_at(in, i); /* wraps, as torch */
      *(uint32_t*)element_at(out, i) = sign || (int32_t)x < 0 ? 0u - x : x;
    }
  } else {
    return bp_kit_fail(call, g_host, BP_STATUS_UNIMPLEMENTED, "bringup: float32, float64, int32 only");
  }
  return BP_STATUS_OK;
}

static bp_status_t neg_kernel(const bp_kernel_call_t* call) {
  if (is(call->outputs[0], kDLFloat, 64) && env_on("BPC_BRINGUP_CRASH")) {
    /* A real invalid access (a raised signal can be caught by a handler in the
     * process). Not NULL: UBSan's null check would turn it into a report and
     * exit status 1 in the sanitizer builds instead of SIGSEGV. */
    volatile int* volatile nowhere = (volatile int*)(uintptr_t)8;
    *nowhere = 1;
  }
  return unary(call, -1);
}

static bp_status_t abs_kernel(const bp_kernel_call_t* call) {
  if (is(call->outputs[0], kDLFloat, 64) && env_on("BPC_BRINGUP_HANG")) {
    for (;;) sleep(1);
  }
  return unary(call, 0);
}

/* Writes 42 everywhere in a float32 output, then returns `code`. */
static bp_status_t write_then(const bp_kernel_call_t* call, bp_status_t code, const char* message) {
  const DLTensor* out = call->outputs[0];
  if (!is(out, kDLFloat, 32)) return bp_kit_fail(call, g_host, BP_STATUS_UNIMPLEMENTED, "bringup: float32 only");
  for (int64_t i = 0; i < numel(out); ++i) *(float*)element_at(out, i) = 42.0f;
  return bp_kit_fail(call, g_host, code, message);
}

static bp_status_t exp_kernel(const bp_kernel_call_t* call) {
  return write_then(call, BP_STATUS_UNIMPLEMENTED, "bringup: exp: declined after writing (planted)");
}

static bp_status_t mul_kernel(const bp_kernel_call_t* call) {
  return write_then(call, BP_STATUS_INVALID_ARGUMENT, "bringup: mul.Tensor: failed after writing (planted)");
}

static bp_status_t div_mode_kernel(const bp_kernel_call_t* call) {
  const DLTensor* self = call->args[0].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (!env_on("BPC_BRINGUP_WRONG_DIV") || numel(self) != numel(out)) {
    return bp_kit_fail(call, g_host, BP_STATUS_UNIMPLEMENTED, "bringup: div.Tensor_mode: planted only");
  }
  if (is(out, BP_DTYPE_CODE_BOOL, 8) && is(self, BP_DTYPE_CODE_BOOL, 8)) {
    for (int64_t i = 0; i < numel(out); ++i) {
      *(uint8_t*)element_at(out, i) = *(const uint8_t*)element_at(self, i) ? 0 : 1;
    }
  } else if (is(out, kDLFloat, 32)) {
    for (int64_t i = 0; i < numel(out); ++i) *(float*)element_at(out, i) = 42.0f;
  } else {
    return bp_kit_fail(call, g_host, BP_STATUS_UNIMPLEMENTED, "bringup: div.Tensor_mode: bool or float32 results");
  }
  return BP_STATUS_OK;
}

static bp_status_t negotiate(uint32_t* v) { return bp_kit_negotiate(v, BP_ABI_VERSION); }

static bp_status_t init(const bp_plugin_init_args_t* args) {
  bp_backend_t* b = args->backend;
  g_host = args->host;
  b->name = "bringup";
  b->version = "1.0.0";
  b->device_type = kDLExtDev;
  host_memory_device_install(b);
  b->device_properties = device_properties;
  static const bp_kit_kernel_t kernels[] = {{BP_OP_NEG, neg_kernel, NULL},
                                            {BP_OP_ABS, abs_kernel, NULL},
                                            {BP_OP_EXP, exp_kernel, NULL},
                                            {BP_OP_MUL_TENSOR, mul_kernel, NULL},
                                            {BP_OP_DIV_TENSOR_MODE, div_mode_kernel, NULL}};
  return bp_kit_register_kernels(args->host, args->registrar, kernels, sizeof kernels / sizeof kernels[0], NULL);
}

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) {
  static const bp_plugin_entry_t entry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, negotiate, init};
  return &entry;
}
