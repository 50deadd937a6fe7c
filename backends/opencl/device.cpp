// Device enumeration (every device of every platform, each with a context and
// an in-order queue), release, and the device_count / device_properties slots.
#include "device.h"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "plugin.h"

namespace bpcl {
namespace {

std::string DeviceString(cl_device_id dev, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(dev, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetDeviceInfo(dev, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string PlatformString(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <typename T>
T DeviceValue(cl_device_id dev, cl_device_info what, T fallback) {
  T v{};
  if (clGetDeviceInfo(dev, what, sizeof(T), &v, nullptr) != CL_SUCCESS) return fallback;
  return v;
}

bool HasExtension(const std::string& exts, const char* ext) {
  const size_t n = std::strlen(ext);
  for (size_t pos = exts.find(ext); pos != std::string::npos; pos = exts.find(ext, pos + 1)) {
    const bool start = pos == 0 || exts[pos - 1] == ' ';
    const bool end = pos + n == exts.size() || exts[pos + n] == ' ';
    if (start && end) return true;
  }
  return false;
}

// Creates the context and queue of one device; on error releases what it made.
Status OpenDevice(Device* d) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(d->platform), 0};
  d->context = clCreateContext(props, 1, &d->id, nullptr, nullptr, &err);
  BPCL_CL(err, "clCreateContext");
  Status st = CreateQueue(d, &d->queue);
  if (!st.ok()) {
    clReleaseContext(d->context);
    d->context = nullptr;
  }
  return st;
}

void CopyString(char* dst, size_t cap, const std::string& s) {
  const size_t n = std::min(cap - 1, s.size());
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

}  // namespace

Status EnumerateDevices(Backend* backend) {
  cl_uint num_platforms = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err != CL_SUCCESS || num_platforms == 0) {
    backend->no_device_reason = "no OpenCL platform found (clGetPlatformIDs: " +
                                ClErrorName(err == CL_SUCCESS ? CL_PLATFORM_NOT_FOUND_KHR : err) + ")";
    return Ok();
  }
  std::vector<cl_platform_id> platforms(num_platforms);
  BPCL_CL(clGetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs");
  // BACKPLANE_OPENCL_NO_FP64=1: every device runs as one without cl_khr_fp64
  // (float64 goes to the fallback), to check that path where devices have it.
  const char* no_fp64_env = secure_getenv("BACKPLANE_OPENCL_NO_FP64");
  const bool no_fp64 = no_fp64_env != nullptr && no_fp64_env[0] != '\0' && no_fp64_env[0] != '0';
  std::string skipped;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (err == CL_DEVICE_NOT_FOUND || n == 0) continue;
    if (err != CL_SUCCESS) {
      skipped += " " + PlatformString(p, CL_PLATFORM_NAME) + ": clGetDeviceIDs: " + ClErrorName(err) + ";";
      continue;
    }
    std::vector<cl_device_id> ids(n);
    BPCL_CL(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr), "clGetDeviceIDs");
    for (cl_device_id id : ids) {
      auto d = std::make_unique<Device>();
      d->platform = p;
      d->id = id;
      d->platform_name = PlatformString(p, CL_PLATFORM_NAME);
      d->name = DeviceString(id, CL_DEVICE_NAME);
      d->vendor = DeviceString(id, CL_DEVICE_VENDOR);
      d->driver_version = DeviceString(id, CL_DRIVER_VERSION);
      d->extensions = DeviceString(id, CL_DEVICE_EXTENSIONS);
      d->global_mem_bytes = DeviceValue<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
      d->max_alloc_bytes = DeviceValue<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
      d->compute_units = DeviceValue<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS, 0);
      d->mem_base_align_bytes = DeviceValue<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 1024) / 8;
      d->max_work_group_size = DeviceValue<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
      d->max_parameter_size = DeviceValue<size_t>(id, CL_DEVICE_MAX_PARAMETER_SIZE, 1024);
      d->fp64 = !no_fp64 && HasExtension(d->extensions, "cl_khr_fp64");
      d->fp16 = HasExtension(d->extensions, "cl_khr_fp16");
      d->local_mem_is_global =
          DeviceValue<cl_device_local_mem_type>(id, CL_DEVICE_LOCAL_MEM_TYPE, CL_LOCAL) == CL_GLOBAL;
      d->fma32 = (DeviceValue<cl_device_fp_config>(id, CL_DEVICE_SINGLE_FP_CONFIG, 0) & CL_FP_FMA) != 0;
      d->native_vector_bytes = 4 * DeviceValue<cl_uint>(id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, 4);
      Status st = OpenDevice(d.get());
      if (!st.ok()) {
        skipped += " " + d->name + ": " + st.message() + ";";
        continue;
      }
      backend->devices.push_back(std::move(d));
    }
  }
  if (backend->devices.empty()) {
    backend->no_device_reason = "no usable OpenCL device on " + std::to_string(num_platforms) +
                                " platform(s)" + (skipped.empty() ? "" : ":" + skipped);
  }
  return Ok();
}

Status CreateQueue(Device* d, cl_command_queue* out) {
  cl_int err = CL_SUCCESS;
  *out = clCreateCommandQueue(d->context, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) *out = nullptr;
  return ClCheck(err, "clCreateCommandQueue");
}

void ReleaseDevices(Backend* backend) {
  for (auto& d : backend->devices) {
    {
      // Streams the host never destroyed: drain and release them first.
      std::lock_guard<std::mutex> lock(d->streams_mutex);
      for (cl_command_queue q : d->streams) {
        clFinish(q);
        clReleaseCommandQueue(q);
      }
      d->streams.clear();
    }
    if (d->queue != nullptr) clFinish(d->queue);
    for (auto& kv : d->kernels) clReleaseKernel(kv.second);
    d->kernels.clear();
    for (auto& kv : d->programs) clReleaseProgram(kv.second);
    d->programs.clear();
    if (d->queue != nullptr) clReleaseCommandQueue(d->queue);
    if (d->context != nullptr) clReleaseContext(d->context);
    d->queue = nullptr;
    d->context = nullptr;
  }
  backend->devices.clear();
}

Status GetDevice(Backend* b, int32_t index, Device** out) {
  *out = b->device(index);
  if (*out == nullptr)
    return Status(BP_STATUS_OUT_OF_RANGE, "opencl: device " + std::to_string(index) + " out of range (" +
                                              std::to_string(b->devices.size()) + " devices)");
  return Ok();
}

bp_status_t DeviceCount(void* data, int32_t* out_count) {
  if (out_count == nullptr) return B(data)->Report(Status(BP_STATUS_INVALID_ARGUMENT, "opencl device_count: NULL"));
  *out_count = static_cast<int32_t>(B(data)->devices.size());
  return BP_STATUS_OK;
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

}  // namespace bpcl
