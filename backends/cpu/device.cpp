// Device enumeration and properties of the CPU backend.
#include "device.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "plugin.h"

namespace bp_cpu {
namespace {

// Value of the first "key : value" line of /proc/cpuinfo; "" if absent.
std::string CpuInfoField(const char* key) {
  std::FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (f == nullptr) return "";
  char line[4096];
  std::string value;
  const size_t klen = std::strlen(key);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, key, klen) != 0) continue;
    const char* colon = std::strchr(line, ':');
    if (colon == nullptr) continue;
    value = colon + 1;
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
    while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
    break;
  }
  std::fclose(f);
  return value;
}

bool HasFlag(const std::string& flags, const char* flag) {
  const std::string padded = " " + flags + " ";
  return padded.find(std::string(" ") + flag + " ") != std::string::npos;
}

void CopyString(char* dst, size_t cap, const std::string& s) {
  std::snprintf(dst, cap, "%s", s.c_str());
}

}  // namespace

bp_status_t DeviceCount(void*, int32_t* out_count) {
  *out_count = 1;
  return BP_STATUS_OK;
}

bp_status_t DeviceProperties(void* backend_data, int32_t device, bp_device_properties_t* out) {
  auto* state = static_cast<CpuState*>(backend_data);
  if (device != 0) {
    if (state != nullptr && state->host != nullptr)
      return state->host->set_error(BP_STATUS_OUT_OF_RANGE, "cpu: device index out of range (only device 0)");
    return BP_STATUS_OUT_OF_RANGE;
  }
  if (out == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  const size_t size = out->struct_size;
  // Fill a full local copy, then hand back as much as the caller's struct holds.
  bp_device_properties_t p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = size;
  std::string name = CpuInfoField("model name");
  if (name.empty()) name = "host CPU";
  CopyString(p.name, sizeof p.name, name);
  CopyString(p.vendor, sizeof p.vendor, CpuInfoField("vendor_id"));
  CopyString(p.driver_version, sizeof p.driver_version, "backplane-cpu 1.0.0 (oneDNN)");
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  p.total_memory_bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  p.capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16 | BP_DEVICE_CAP_UNIFIED;
  p.alignment_bytes = 64;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  p.compute_units = cpus > 0 ? static_cast<int32_t>(cpus) : 0;
  // The SIMD features that decide which oneDNN and vectorized paths run.
  const std::string flags = CpuInfoField("flags");
  std::string ext;
  for (const char* f : {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni",
                        "avx512_bf16", "avx512_fp16", "amx_bf16"}) {
    if (HasFlag(flags, f)) ext += (ext.empty() ? "" : " ") + std::string(f);
  }
  CopyString(p.extensions, sizeof p.extensions, ext);
  std::memcpy(out, &p, size < sizeof p ? size : sizeof p);
  out->struct_size = size;
  return BP_STATUS_OK;
}

}  // namespace bp_cpu
