// What every OpenCL kernel of the plugin shares: dtype descriptions and the
// -D options that specialize a program for a dtype, tensor geometry (with
// dimension coalescing), scalar conversion, and launching a kernel on a
// device's queue.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "plugin.h"
#include "backplane/backend.h"

namespace bpcl {

enum DtKind : int { kKindBool = 0, kKindInt = 1, kKindFloat = 2, kKindHalf = 3, kKindBf16 = 4 };

struct DtypeInfo {
  bool valid = false;
  const char* name = "invalid";  // "float32"
  const char* st = "";           // OpenCL C storage type
  const char* ct = "";           // OpenCL C compute type
  const char* ut = "";           // unsigned type of the storage width
  int kind = kKindBool;
  bool is_signed = false;
  size_t item_size = 0;          // bytes of storage
  size_t ct_size = 0;            // bytes of the compute type (kernel scalars)
  bool needs_fp64 = false;
};

DtypeInfo GetDtype(DLDataType dtype);

// "-DT_KIND=2 -DT_ST=float ..." for prefix "T" (or "S" for copy sources).
std::string DtypeDefines(const DtypeInfo& info, const char* prefix);
// Options every program of device d gets (-DHAS_FP64, ...).
std::string DeviceDefines(const Device* d);

// A scalar kernel argument in a dtype's compute type.
struct ScalarArg {
  unsigned char bytes[8] = {};
  size_t size = 0;
};
ScalarArg MakeScalar(const DtypeInfo& info, double d, int64_t i, bool is_int);
// From a boxed INT / DOUBLE / BOOL argument (NONE gives `fallback`).
ScalarArg ScalarFromArg(const DtypeInfo& info, const bp_kernel_arg_t& arg, double fallback);

// Mirrors bp_geo in common.cl.
constexpr int kMaxDims = 16;
struct PwGeo {
  int64_t numel;
  int32_t ndim;
  int32_t pad;
  int64_t sizes[kMaxDims];
  int64_t strides[4][kMaxDims];
  int64_t offsets[4];
};
static_assert(sizeof(PwGeo) == 8 + 8 + 8 * 16 + 8 * 4 * 16 + 8 * 4, "PwGeo must match bp_geo");

// A tensor as kernels address it: the buffer and an element offset.
struct TensorRef {
  cl_mem mem = nullptr;
  int64_t offset = 0;  // elements
};
Status GetTensorRef(const DLTensor* t, const char* what, TensorRef* out);

int64_t Numel(const DLTensor* t);

// Drops size-1 dims and merges dims that are contiguous in every tensor.
// In: ndim, sizes and `count` stride arrays; out: the same, coalesced.
void Coalesce(int32_t* ndim, int64_t* sizes, int64_t (*strides)[kMaxDims], int count);

// Context of one kernel call: the backend, the device and the queue.
struct CallCtx {
  Backend* backend = nullptr;
  Device* device = nullptr;
  cl_command_queue queue = nullptr;
  const bp_kernel_call_t* call = nullptr;
};
Status GetCallCtx(const bp_kernel_call_t* call, CallCtx* out);

// Reports `st` with "opencl <op>: " prefixed; returns its code.
bp_status_t Fail(const bp_kernel_call_t* call, const Status& st);
// UNIMPLEMENTED when device d cannot run dtype `info` (float64 without
// cl_khr_fp64, unknown dtypes): the dispatcher then uses the CPU fallback.
Status CheckDtype(const Device* d, const DtypeInfo& info, const char* what);

// One kernel argument: size and pointer to the value (nullptr for __local).
struct KArg {
  size_t size;
  const void* ptr;
};
template <typename T>
KArg Arg(const T& v) {
  return KArg{sizeof(T), &v};
}
inline KArg LocalArg(size_t bytes) { return KArg{bytes, nullptr}; }

// Builds (or fetches) program `prog_name` from `body` with `options` and
// enqueues kernel `kernel_name` without waiting. local may be nullptr.
Status Launch(const CallCtx& ctx, const char* prog_name, const char* body, const std::string& options,
              const char* kernel_name, const std::vector<KArg>& args, cl_uint work_dim, const size_t* global,
              const size_t* local);

// Launches a pointwise kernel family member "<base>_1d" / "<base>_nd" over
// out's sizes with up to 3 inputs (nullptr = unused).
Status LaunchPointwise(const CallCtx& ctx, const char* prog_name, const char* body, const std::string& options,
                       const char* base, const DLTensor* out, const DLTensor* const in[3], const ScalarArg& alpha,
                       const ScalarArg& beta);

// Same, with explicit geometry: out/in as refs with strides over `sizes`.
Status LaunchPointwiseGeo(const CallCtx& ctx, const char* prog_name, const char* body,
                          const std::string& options, const char* base, int32_t ndim, const int64_t* sizes,
                          const TensorRef refs[4], const int64_t* const strides[4], const ScalarArg& alpha,
                          const ScalarArg& beta);

// Runs the check kernel `kernel` ("<kernel>_1d" / "_nd" of program
// `prog_name`, a PW_KERNEL whose scalars are `scalar`'s compute type) over
// `operand`, seen as its input b; the kernel sets o[0] when an element
// fails. Waits for the flag, so callers run it before anything is written:
// INVALID_ARGUMENT `message` when any element failed.
Status RunCheck(const CallCtx& ctx, const char* prog_name, const char* body, const std::string& options,
                const DtypeInfo& scalar, const char* kernel, const DLTensor* operand, const std::string& message);

// Adapts a Status-returning kernel body to bp_kernel_fn: errors go through
// Fail(); no exception leaves the plugin.
template <Status (*Run)(const bp_kernel_call_t*)>
bp_status_t WrapKernel(const bp_kernel_call_t* call) {
  try {
    Status st = Run(call);
    return st.ok() ? BP_STATUS_OK : Fail(call, st);
  } catch (const std::exception& e) {
    return Fail(call, Status(BP_STATUS_INTERNAL, e.what()));
  } catch (...) {
    return Fail(call, Status(BP_STATUS_INTERNAL, "unknown exception"));
  }
}

}  // namespace bpcl
