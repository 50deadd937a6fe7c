#include "device_inventory.h"

#include <string>

const char* device_type_name(int32_t t) {
  switch (t) {
    case kDLCPU:
      return "kDLCPU";
    case kDLCUDA:
      return "kDLCUDA";
    case kDLCUDAHost:
      return "kDLCUDAHost";
    case kDLOpenCL:
      return "kDLOpenCL";
    case kDLVulkan:
      return "kDLVulkan";
    case kDLMetal:
      return "kDLMetal";
    case kDLVPI:
      return "kDLVPI";
    case kDLROCM:
      return "kDLROCM";
    case kDLExtDev:
      return "kDLExtDev";
    default:
      return "other";
  }
}

std::string capability_names(uint64_t c) {
  std::string s;
  auto add = [&](uint64_t bit, const char* name) {
    if (c & bit) s += (s.empty() ? "" : ",") + std::string(name);
  };
  add(BP_DEVICE_CAP_FP64, "fp64");
  add(BP_DEVICE_CAP_FP16, "fp16");
  add(BP_DEVICE_CAP_BF16, "bf16");
  add(BP_DEVICE_CAP_UNIFIED, "unified");
  return s.empty() ? "-" : s;
}

namespace {

std::string Memory(uint64_t bytes) {
  char buf[64];
  if (bytes == 0) return "unknown";
  std::snprintf(buf, sizeof(buf), "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

void print_device_inventory(std::FILE* out, bp_context_t* ctx, const std::vector<std::string>& load_errors) {
  std::fprintf(out, "Backplane %s (ABI %u.%u)\n\n", bp_version_string(), BP_ABI_VERSION_GET_MAJOR(bp_abi_version()),
               BP_ABI_VERSION_GET_MINOR(bp_abi_version()));
  int32_t nb = 0;
  bp_backend_count(ctx, &nb);
  std::fprintf(out, "Plugins:\n");
  int shown = 0;
  for (int32_t b = 0; b < nb; ++b) {
    bp_backend_info_t info{};
    info.struct_size = sizeof(info);
    if (bp_backend_info(ctx, b, &info) != BP_STATUS_OK || !info.loaded || info.plugin_path[0] == '\0') continue;
    std::fprintf(out, "  %-10s %-8s ABI %u.%u  %s\n", info.name, info.version,
                 BP_ABI_VERSION_GET_MAJOR(info.abi_version), BP_ABI_VERSION_GET_MINOR(info.abi_version),
                 info.plugin_path);
    ++shown;
  }
  if (shown == 0) std::fprintf(out, "  (none loaded)\n");
  for (const std::string& m : load_errors) std::fprintf(out, "  failed: %s\n", m.c_str());

  std::fprintf(out, "\nDevices:\n");
  for (int32_t b = 0; b < nb; ++b) {
    bp_backend_info_t info{};
    info.struct_size = sizeof(info);
    if (bp_backend_info(ctx, b, &info) != BP_STATUS_OK || !info.loaded) continue;
    if (info.device_count == 0) {
      std::fprintf(out, "  %-10s (%s) no devices: %s\n", info.name, device_type_name(info.device_type),
                   info.no_device_reason != nullptr ? info.no_device_reason : "the backend reports none");
      continue;
    }
    for (int32_t d = 0; d < info.device_count; ++d) {
      bp_device_properties_t p{};
      p.struct_size = sizeof(p);
      if (bp_device_properties(ctx, bp_device_t{b, d}, &p) != BP_STATUS_OK) {
        std::fprintf(out, "  %s:%d  properties failed: %s\n", info.name, d, bp_last_error_message());
        continue;
      }
      std::fprintf(out, "  %s:%d  %s  [%s, index %d]  memory %s  caps %s\n", info.name, d, p.name,
                   device_type_name(info.device_type), d, Memory(p.total_memory_bytes).c_str(),
                   capability_names(p.capabilities).c_str());
    }
  }
}
