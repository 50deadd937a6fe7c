#include "launch.h"

#include "program_cache.h"

#include "backplane/plugin_kit.h"

#include <cstring>

namespace bpcl {

DtypeInfo GetDtype(DLDataType dt) {
  DtypeInfo i;
  const int32_t id = bp_kit_dtype_of(dt);  // the kit's id, name and size; OpenCL C types here
  auto set = [&](const char* st, const char* ct, const char* ut, int kind, bool sgn, size_t ct_size) {
    i.valid = true;
    i.name = bp_kit_dtype_name(id);
    i.st = st;
    i.ct = ct;
    i.ut = ut;
    i.kind = kind;
    i.is_signed = sgn;
    i.item_size = bp_kit_dtype_size(id);
    i.ct_size = ct_size;
  };
  switch (id) {
    case BP_KIT_DTYPE_BOOL:
      set("uchar", "uchar", "uchar", kKindBool, false, 1);
      break;
    case BP_KIT_DTYPE_UINT8:
      set("uchar", "uchar", "uchar", kKindInt, false, 1);
      break;
    case BP_KIT_DTYPE_INT8:
      set("char", "char", "uchar", kKindInt, true, 1);
      break;
    case BP_KIT_DTYPE_INT32:
      set("int", "int", "uint", kKindInt, true, 4);
      break;
    case BP_KIT_DTYPE_INT64:
      set("long", "long", "ulong", kKindInt, true, 8);
      break;
    case BP_KIT_DTYPE_FLOAT16:
      set("half", "float", "ushort", kKindHalf, true, 4);
      break;
    case BP_KIT_DTYPE_BFLOAT16:
      set("ushort", "float", "ushort", kKindBf16, true, 4);
      break;
    case BP_KIT_DTYPE_FLOAT32:
      set("float", "float", "uint", kKindFloat, true, 4);
      break;
    case BP_KIT_DTYPE_FLOAT64:
      set("double", "double", "ulong", kKindFloat, true, 8);
      i.needs_fp64 = true;
      break;
    default:
      break;
  }
  return i;
}

std::string DtypeDefines(const DtypeInfo& info, const char* p) {
  const std::string P(p);
  return " -D" + P + "_KIND=" + std::to_string(info.kind) + " -D" + P + "_ST=" + info.st + " -D" + P +
         "_CT=" + info.ct + " -D" + P + "_UT=" + info.ut + " -D" + P + "_SIGNED=" + (info.is_signed ? "1" : "0") +
         " -D" + P + "_SIZE=" + std::to_string(info.item_size);
}

std::string DeviceDefines(const Device* d) { return d->fp64 ? " -DHAS_FP64=1" : ""; }

ScalarArg MakeScalar(const DtypeInfo& info, double d, int64_t i, bool is_int) {
  ScalarArg s;
  s.size = info.ct_size;
  auto put = [&](auto v) { std::memcpy(s.bytes, &v, sizeof v); };
  if (info.kind == kKindFloat || info.kind == kKindHalf || info.kind == kKindBf16) {
    const double v = is_int ? static_cast<double>(i) : d;
    if (info.ct_size == 8) put(v);
    else put(static_cast<float>(v));
  } else if (info.kind == kKindBool) {
    put(static_cast<uint8_t>(is_int ? i != 0 : d != 0.0));
  } else {
    const int64_t v = is_int ? i : static_cast<int64_t>(d);
    switch (info.item_size) {
      case 1: put(static_cast<int8_t>(v)); break;
      case 4: put(static_cast<int32_t>(v)); break;
      default: put(v); break;
    }
  }
  return s;
}

ScalarArg ScalarFromArg(const DtypeInfo& info, const bp_kernel_arg_t& arg, double fallback) {
  switch (arg.kind) {
    case BP_VALUE_INT: return MakeScalar(info, 0.0, arg.u.i, true);
    case BP_VALUE_BOOL: return MakeScalar(info, 0.0, arg.u.b != 0 ? 1 : 0, true);
    case BP_VALUE_DOUBLE: return MakeScalar(info, arg.u.d, 0, false);
    default: return MakeScalar(info, fallback, 0, false);
  }
}

int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t k = 0; k < t->ndim; ++k) n *= t->shape[k];
  return n;
}

Status GetTensorRef(const DLTensor* t, const char* what, TensorRef* out) {
  const DtypeInfo info = GetDtype(t->dtype);
  const size_t item = info.valid ? info.item_size : (t->dtype.bits + 7u) / 8u;
  if (item == 0 || t->byte_offset % item != 0) {
    return Status(BP_STATUS_INVALID_ARGUMENT, std::string("argument '") + what + "': byte_offset " +
                                                  std::to_string(t->byte_offset) +
                                                  " is not a multiple of the element size");
  }
  out->mem = static_cast<cl_mem>(t->data);
  out->offset = static_cast<int64_t>(t->byte_offset / item);
  return Ok();
}

void Coalesce(int32_t* ndim, int64_t* sizes, int64_t (*strides)[kMaxDims], int count) {
  int32_t n = 0;
  for (int32_t k = 0; k < *ndim; ++k) {
    if (sizes[k] == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int t = 0; t < count && merge; ++t) merge = strides[t][n - 1] == strides[t][k] * sizes[k];
      if (merge) {
        sizes[n - 1] *= sizes[k];
        for (int t = 0; t < count; ++t) strides[t][n - 1] = strides[t][k];
        continue;
      }
    }
    sizes[n] = sizes[k];
    for (int t = 0; t < count; ++t) strides[t][n] = strides[t][k];
    ++n;
  }
  *ndim = n;
}

Status GetCallCtx(const bp_kernel_call_t* call, CallCtx* out) {
  out->backend = static_cast<Backend*>(call->backend_data);
  out->call = call;
  if (out->backend == nullptr) return Status(BP_STATUS_INTERNAL, "kernel called without backend_data");
  out->device = out->backend->device(call->device_index);
  if (out->device == nullptr) {
    return Status(BP_STATUS_OUT_OF_RANGE, "device index " + std::to_string(call->device_index) +
                                              " out of range (" + std::to_string(out->backend->devices.size()) +
                                              " OpenCL devices)");
  }
  out->queue = call->stream != nullptr ? static_cast<cl_command_queue>(call->stream) : out->device->queue;
  return Ok();
}

bp_status_t Fail(const bp_kernel_call_t* call, const Status& st) {
  const Backend* b = static_cast<const Backend*>(call->backend_data);
  return bp_kit_failf(call, b != nullptr ? b->host : nullptr, "opencl", st.code(), "%s", st.message().c_str());
}

Status CheckDtype(const Device* d, const DtypeInfo& info, const char* what) {
  if (!info.valid) {
    return Status(BP_STATUS_UNIMPLEMENTED, std::string(what) + ": dtype not supported by the OpenCL backend");
  }
  if (info.needs_fp64 && !d->fp64) {
    return Status(BP_STATUS_UNIMPLEMENTED, std::string(what) + ": float64 needs cl_khr_fp64, which device '" +
                                               d->name + "' lacks");
  }
  return Ok();
}

Status Launch(const CallCtx& ctx, const char* prog_name, const char* body, const std::string& options,
              const char* kernel_name, const std::vector<KArg>& args, cl_uint work_dim, const size_t* global,
              const size_t* local) {
  for (cl_uint k = 0; k < work_dim; ++k)
    if (global[k] == 0) return Ok();
  cl_program prog = nullptr;
  BPCL_RETURN_IF_ERROR(GetProgram(ctx.backend, ctx.device, prog_name, body, options, &prog));
  Device* d = ctx.device;
  std::lock_guard<std::mutex> lock(d->launch_mutex);
  const auto key = std::make_pair(prog, std::string(kernel_name));
  auto it = d->kernels.find(key);
  cl_kernel kernel = nullptr;
  if (it != d->kernels.end()) {
    kernel = it->second;
  } else {
    cl_int err = CL_SUCCESS;
    kernel = clCreateKernel(prog, kernel_name, &err);
    if (err != CL_SUCCESS) return ClCheck(err, (std::string("clCreateKernel(") + kernel_name + ")").c_str());
    d->kernels.emplace(key, kernel);
  }
  for (size_t k = 0; k < args.size(); ++k) {
    cl_int err = clSetKernelArg(kernel, static_cast<cl_uint>(k), args[k].size, args[k].ptr);
    if (err != CL_SUCCESS) {
      return ClCheck(err, (std::string("clSetKernelArg(") + kernel_name + ", " + std::to_string(k) + ")").c_str());
    }
  }
  cl_int err = clEnqueueNDRangeKernel(ctx.queue, kernel, work_dim, nullptr, global, local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return ClCheck(err, (std::string("clEnqueueNDRangeKernel(") + kernel_name + ")").c_str());
  return Ok();
}

Status LaunchPointwiseGeo(const CallCtx& ctx, const char* prog_name, const char* body, const std::string& options,
                          const char* base, int32_t ndim, const int64_t* sizes, const TensorRef refs[4],
                          const int64_t* const strides[4], const ScalarArg& alpha, const ScalarArg& beta) {
  PwGeo g;
  std::memset(&g, 0, sizeof g);
  g.ndim = ndim;
  g.numel = 1;
  for (int32_t k = 0; k < ndim; ++k) {
    g.sizes[k] = sizes[k];
    g.numel *= sizes[k];
    for (int t = 0; t < 4; ++t) g.strides[t][k] = strides[t] != nullptr ? strides[t][k] : 0;
  }
  if (g.numel == 0) return Ok();
  for (int t = 0; t < 4; ++t) g.offsets[t] = refs[t].offset;
  Coalesce(&g.ndim, g.sizes, g.strides, 4);
  const size_t global = static_cast<size_t>(g.numel);
  cl_mem mems[4];
  for (int t = 0; t < 4; ++t) mems[t] = refs[t].mem != nullptr ? refs[t].mem : refs[0].mem;
  if (g.ndim <= 1) {
    int64_t st[4];
    for (int t = 0; t < 4; ++t) st[t] = g.ndim == 1 ? g.strides[t][0] : 0;
    std::vector<KArg> args = {Arg(g.numel),
                              Arg(mems[0]), Arg(g.offsets[0]), Arg(st[0]),
                              Arg(mems[1]), Arg(g.offsets[1]), Arg(st[1]),
                              Arg(mems[2]), Arg(g.offsets[2]), Arg(st[2]),
                              Arg(mems[3]), Arg(g.offsets[3]), Arg(st[3]),
                              KArg{alpha.size, alpha.bytes}, KArg{beta.size, beta.bytes}};
    return Launch(ctx, prog_name, body, options, (std::string("k_") + base + "_1d").c_str(), args, 1, &global, nullptr);
  }
  if (ctx.device->max_parameter_size < sizeof(PwGeo) + 4 * sizeof(cl_mem) + 16) {
    return Status(BP_STATUS_UNIMPLEMENTED, "device kernel parameter space too small for strided tensors");
  }
  std::vector<KArg> args = {Arg(g), Arg(mems[0]), Arg(mems[1]), Arg(mems[2]), Arg(mems[3]),
                            KArg{alpha.size, alpha.bytes}, KArg{beta.size, beta.bytes}};
  return Launch(ctx, prog_name, body, options, (std::string("k_") + base + "_nd").c_str(), args, 1, &global, nullptr);
}

Status LaunchPointwise(const CallCtx& ctx, const char* prog_name, const char* body, const std::string& options,
                       const char* base, const DLTensor* out, const DLTensor* const in[3], const ScalarArg& alpha,
                       const ScalarArg& beta) {
  static const char* const kNames[4] = {"out", "input 0", "input 1", "input 2"};
  TensorRef refs[4];
  const int64_t* strides[4] = {out->strides, nullptr, nullptr, nullptr};
  BPCL_RETURN_IF_ERROR(GetTensorRef(out, kNames[0], &refs[0]));
  for (int t = 0; t < 3; ++t) {
    if (in[t] == nullptr) continue;
    BPCL_RETURN_IF_ERROR(GetTensorRef(in[t], kNames[t + 1], &refs[t + 1]));
    if (in[t]->ndim != out->ndim) {
      return Status(BP_STATUS_INVALID_ARGUMENT, std::string(kNames[t + 1]) + ": expected rank " +
                                                    std::to_string(out->ndim) + " (the output's), got " +
                                                    std::to_string(in[t]->ndim));
    }
    strides[t + 1] = in[t]->strides;
  }
  return LaunchPointwiseGeo(ctx, prog_name, body, options, base, out->ndim, out->shape, refs, strides, alpha, beta);
}

Status RunCheck(const CallCtx& ctx, const char* prog_name, const char* body, const std::string& options,
                const DtypeInfo& scalar, const char* kernel, const DLTensor* operand, const std::string& message) {
  cl_int err = CL_SUCCESS;
  cl_int zero = 0;
  cl_mem flag =
      clCreateBuffer(ctx.device->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
  BPCL_CL(err, "clCreateBuffer");
  TensorRef refs[4];
  refs[0].mem = flag;
  Status st = GetTensorRef(operand, "operand", &refs[2]);
  const int64_t* strides[4] = {nullptr, nullptr, operand->strides, nullptr};
  const ScalarArg none = MakeScalar(scalar, 0, 0, true);
  if (st.ok()) {
    st = LaunchPointwiseGeo(ctx, prog_name, body, options, kernel, operand->ndim, operand->shape, refs, strides, none,
                            none);
  }
  cl_int found = 0;
  if (st.ok())
    st = ClCheck(clEnqueueReadBuffer(ctx.queue, flag, CL_TRUE, 0, sizeof found, &found, 0, nullptr, nullptr),
                 "clEnqueueReadBuffer");
  clReleaseMemObject(flag);
  BPCL_RETURN_IF_ERROR(st);
  if (found != 0) return Status(BP_STATUS_INVALID_ARGUMENT, message);
  return Ok();
}

}  // namespace bpcl
