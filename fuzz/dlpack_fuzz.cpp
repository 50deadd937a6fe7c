// libFuzzer target: bp_tensor_from_dlpack with DLTensors built from the
// input (dtype, device, ndim, shape, strides, byte offset, NULL or real data).
// Property: the import never crashes or trips a sanitizer; it either fails
// with a message, or gives a tensor whose sizes are the shape and whose
// element count is their product (no overflow), which releases cleanly and
// calls the producer's deleter exactly once. The data is never read: strides
// that reach past the buffer are the one thing the import cannot check.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "backplane/backplane.h"

namespace {

struct Reader {
  const uint8_t* p;
  size_t n;
  template <typename T>
  T Take() {
    T v{};
    const size_t k = n < sizeof(T) ? n : sizeof(T);
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
};

int g_deleted = 0;
void Deleter(DLManagedTensor*) { ++g_deleted; }

bp_context_t* Context() {
  static bp_context_t* ctx = [] {
    bp_context_options_t o{};
    o.struct_size = sizeof(o);
    o.min_log_level = BP_LOG_ERROR + 1;
    bp_context_t* c = nullptr;
    if (bp_context_create(&o, &c) != BP_STATUS_OK) std::abort();
    return c;
  }();
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  static float buffer[64];
  int64_t shape[BP_MAX_NDIM + 4] = {};
  int64_t strides[BP_MAX_NDIM + 4] = {};
  DLManagedTensor m{};
  DLTensor& t = m.dl_tensor;
  const uint8_t flags = r.Take<uint8_t>();
  t.ndim = static_cast<int32_t>(r.Take<int8_t>()) % (BP_MAX_NDIM + 4);
  t.dtype.code = r.Take<uint8_t>() % 8;
  t.dtype.bits = r.Take<uint8_t>();
  t.dtype.lanes = (flags & 1) ? r.Take<uint16_t>() : 1;
  t.device.device_type = (flags & 2) ? static_cast<DLDeviceType>(r.Take<uint8_t>() % 20) : kDLCPU;
  t.device.device_id = (flags & 4) ? r.Take<int8_t>() : 0;
  t.byte_offset = (flags & 8) ? r.Take<uint64_t>() : 0;
  t.data = (flags & 16) ? nullptr : buffer;
  t.shape = (flags & 32) ? nullptr : shape;
  t.strides = (flags & 64) ? strides : nullptr;
  const int32_t nd = t.ndim > 0 ? t.ndim : 0;
  for (int32_t i = 0; i < nd; ++i) {
    shape[i] = (flags & 128) ? r.Take<int64_t>() : static_cast<int64_t>(r.Take<uint8_t>() % 5);
    strides[i] = r.Take<int8_t>();
  }
  m.deleter = Deleter;
  g_deleted = 0;
  bp_tensor_t* out = nullptr;
  if (bp_tensor_from_dlpack(Context(), &m, &out) != BP_STATUS_OK) {
    if (bp_last_error_message()[0] == '\0' || g_deleted != 0) std::abort();
    return 0;
  }
  int64_t numel = 1;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (bp_tensor_sizes(out)[i] != shape[i]) std::abort();
    if (__builtin_mul_overflow(numel, shape[i], &numel)) std::abort();  // the import let an overflow through
  }
  if (bp_tensor_numel(out) != numel || bp_tensor_ndim(out) != t.ndim) std::abort();
  if (numel != 0 && t.data == nullptr) std::abort();
  bp_tensor_release(out);
  if (g_deleted != 1) std::abort();
  return 0;
}
