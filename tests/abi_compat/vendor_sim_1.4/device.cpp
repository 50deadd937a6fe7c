// Device enumeration and properties. A real plugin asks its driver how many
// devices there are and what each one can do.
#include "device.h"

#include <cstdio>
#include <cstring>

namespace vendor_sim {

bp_status_t CheckDevice(State* s, int32_t device, const char* fn) {
  return device == 0 ? BP_STATUS_OK : Fail(s, BP_STATUS_OUT_OF_RANGE, fn, "device index out of range (only device 0)");
}

bp_status_t DeviceCount(void*, int32_t* out_count) {
  *out_count = 1;
  return BP_STATUS_OK;
}

bp_status_t DeviceProperties(void* bd, int32_t device, bp_device_properties_t* out) {
  if (CheckDevice(StateOf(bd), device, "device_properties") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  bp_device_properties_t p;
  std::memset(&p, 0, sizeof p);
  std::snprintf(p.name, sizeof p.name, "vendor_sim simulated accelerator");
  std::snprintf(p.vendor, sizeof p.vendor, "Backplane sample");
  std::snprintf(p.driver_version, sizeof p.driver_version, "1.0.0");
  p.total_memory_bytes = StateOf(bd)->arena.capacity();
  p.capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16;
  // UNIFIED only when the arena hands out host addresses (BP_VENDOR_SIM_UNIFIED=1).
  if (StateOf(bd)->arena.unified()) p.capabilities |= BP_DEVICE_CAP_UNIFIED;
  p.alignment_bytes = static_cast<uint32_t>(StateOf(bd)->arena.alignment());
  p.compute_units = 1;
  // Fill only what the caller's (possibly older, smaller) struct holds.
  const size_t size = out->struct_size;
  std::memcpy(out, &p, size < sizeof p ? size : sizeof p);
  out->struct_size = size;
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
