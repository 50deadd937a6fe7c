#include "graph.h"
#include "copy.h"

#include <functional>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "dispatch.h"
#include "dispatch_internal.h"
#include "dtype.h"
#include "meta/common.h"

namespace bp::core {
namespace {
// The same bits read as another type of the same size (std::bit_cast is C++20).
template <typename To, typename From>
To BitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast keeps the size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}
}  // namespace

float HalfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return BitCast<float>(bits);
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = BitCast<uint32_t>(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {  // subnormal half (or zero): round to nearest even
    const float a = BitCast<float>(absx);
    // 2^-24 is the subnormal step; rint rounds half to even.
    uint32_t m = (uint32_t)std::nearbyint(a * 16777216.0f);
    return (uint16_t)(sign | m);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15);
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
  return (uint16_t)(sign | h);
}

float BFloat16ToFloat(uint16_t b) { return BitCast<float>((uint32_t)b << 16); }

uint16_t FloatToBFloat16(float f) {
  const uint32_t x = BitCast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);  // quiet NaN
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)((x + rounding) >> 16);
}

namespace {

// One element as the widest value of its category.
struct Value {
  bool is_float;
  double d;
  int64_t i;
};

inline Value Load(const char* p, DType id) {
  switch (id) {
    case DType::kBool: return {false, 0, *reinterpret_cast<const uint8_t*>(p) != 0};
    case DType::kUInt8: return {false, 0, *reinterpret_cast<const uint8_t*>(p)};
    case DType::kInt8: return {false, 0, *reinterpret_cast<const int8_t*>(p)};
    case DType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return {false, 0, v}; }
    case DType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return {false, 0, v}; }
    case DType::kFloat16: { uint16_t v; std::memcpy(&v, p, 2); return {true, HalfToFloat(v), 0}; }
    case DType::kBFloat16: { uint16_t v; std::memcpy(&v, p, 2); return {true, BFloat16ToFloat(v), 0}; }
    case DType::kFloat32: { float v; std::memcpy(&v, p, 4); return {true, v, 0}; }
    case DType::kFloat64: { double v; std::memcpy(&v, p, 8); return {true, v, 0}; }
    default: return {false, 0, 0};
  }
}

// Float to integer as C++ casts do on x86 for in-range values; out-of-range
// and NaN go through int64 with saturation instead of undefined behaviour.
inline int64_t FloatToInt(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

inline void Store(char* p, DType id, const Value& v) {
  switch (id) {
    case DType::kBool: *reinterpret_cast<uint8_t*>(p) = v.is_float ? (v.d != 0.0) : (v.i != 0); break;
    case DType::kUInt8: *reinterpret_cast<uint8_t*>(p) = (uint8_t)(v.is_float ? FloatToInt(v.d) : v.i); break;
    case DType::kInt8: *reinterpret_cast<int8_t*>(p) = (int8_t)(v.is_float ? FloatToInt(v.d) : v.i); break;
    case DType::kInt32: { int32_t x = (int32_t)(v.is_float ? FloatToInt(v.d) : v.i); std::memcpy(p, &x, 4); break; }
    case DType::kInt64: { int64_t x = v.is_float ? FloatToInt(v.d) : v.i; std::memcpy(p, &x, 8); break; }
    case DType::kFloat16: { uint16_t x = FloatToHalf((float)(v.is_float ? v.d : (double)v.i)); std::memcpy(p, &x, 2); break; }
    case DType::kBFloat16: { uint16_t x = FloatToBFloat16((float)(v.is_float ? v.d : (double)v.i)); std::memcpy(p, &x, 2); break; }
    case DType::kFloat32: { float x = (float)(v.is_float ? v.d : (double)v.i); std::memcpy(p, &x, 4); break; }
    case DType::kFloat64: { double x = v.is_float ? v.d : (double)v.i; std::memcpy(p, &x, 8); break; }
    default: break;
  }
}

int64_t NumelOf(const Geometry& g) {
  int64_t n = 1;
  for (int32_t i = 0; i < g.ndim; ++i) n *= g.sizes[i];
  return n;
}

bool IsContiguous(const Geometry& g) {
  int64_t expected = 1;
  for (int32_t i = g.ndim - 1; i >= 0; --i) {
    if (g.sizes[i] != 1 && g.strides[i] != expected) return false;
    expected *= g.sizes[i];
  }
  return true;
}

// Element span [lo, hi] (in elements from the base) a view touches.
void Span(const Geometry& g, int64_t* lo, int64_t* hi) {
  *lo = *hi = g.offset;
  for (int32_t i = 0; i < g.ndim; ++i) {
    if (g.sizes[i] == 0) continue;
    int64_t ext = g.strides[i] * (g.sizes[i] - 1);
    if (ext < 0) *lo += ext; else *hi += ext;
  }
}

thread_local uint64_t t_staged_bytes = 0;  // StagedBytesOnThread

// Counts one staged copy of `nbytes` in a direction's pair of the slot's
// TransferCounters and on this thread.
void CountStaged(std::atomic<uint64_t>& count, std::atomic<uint64_t>& bytes, size_t nbytes) {
  t_staged_bytes += nbytes;
  count.fetch_add(1, std::memory_order_relaxed);
  bytes.fetch_add(nbytes, std::memory_order_relaxed);
}

// The backend's copies, counted per direction.
bp_status_t DeviceToHost(DeviceState* dev, const void* base, size_t src_offset, void* dst, size_t nbytes) {
  TransferCounters& c = dev->slot->transfers;
  CountStaged(c.d2h_count, c.d2h_bytes, nbytes);
  const bp_backend_t& t = dev->slot->table;
  return t.copy_device_to_host(t.backend_data, dev->index, base, src_offset, dst, nbytes, CurrentStream(dev));
}

bp_status_t HostToDevice(DeviceState* dev, const void* src, void* base, size_t dst_offset, size_t nbytes) {
  TransferCounters& c = dev->slot->transfers;
  CountStaged(c.h2d_count, c.h2d_bytes, nbytes);
  const bp_backend_t& t = dev->slot->table;
  return t.copy_host_to_device(t.backend_data, dev->index, src, base, dst_offset, nbytes, CurrentStream(dev));
}

// Copies the span of `view` (items of `item` bytes) from the device into
// *tmp; *shifted is `view` with its offset counted from the span's start.
bp_status_t ReadSpan(DeviceState* dev, const void* base, const Geometry& view, size_t item, std::vector<char>* tmp,
                     Geometry* shifted) {
  int64_t lo, hi;
  Span(view, &lo, &hi);
  tmp->resize((hi - lo + 1) * item);
  *shifted = view;
  shifted->offset -= lo;
  return DeviceToHost(dev, base, lo * item, tmp->data(), tmp->size());
}

}  // namespace

size_t ContiguousBytes(const Geometry& geo) {
  return static_cast<size_t>(NumelOf(geo)) * DtypeItemSize(DtypeFromDL(geo.dtype));
}

Geometry ContiguousLike(const Geometry& like, DLDataType dtype) {
  Geometry g;
  g.dtype = dtype;
  g.ndim = like.ndim;
  g.device = like.device;
  int64_t stride = 1;
  for (int32_t i = like.ndim - 1; i >= 0; --i) {
    g.sizes[i] = like.sizes[i];
    g.strides[i] = stride;
    stride *= like.sizes[i] > 0 ? like.sizes[i] : 1;
  }
  g.offset = 0;
  return g;
}

namespace {

// Below this a thread's start-up costs more than the copy it takes over.
constexpr size_t kParallelCopyBytes = size_t{4} << 20;

// f(lo, hi) over [0, n) in parts, one per thread (at most one per 2 MiB of
// `bytes`, 8 at most; the caller's thread runs the first): large host-side
// copies run at the machine's bandwidth instead of one core's. Small ones
// stay on the caller's thread. A thread that cannot be started leaves its
// part to the caller.
template <typename F>
void SplitOverThreads(int64_t n, size_t bytes, F f) {
  const unsigned hw = std::thread::hardware_concurrency();
  int64_t parts = bytes < kParallelCopyBytes ? 1 : static_cast<int64_t>(bytes / (kParallelCopyBytes / 2));
  parts = std::min<int64_t>({parts, hw > 0 ? hw : 1, 8, n});
  if (parts <= 1) {
    f(0, n);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(parts - 1));
  int64_t p = 1;
  try {
    for (; p < parts; ++p) threads.emplace_back(f, n * p / parts, n * (p + 1) / parts);
  } catch (const std::system_error&) {
    for (int64_t q = p; q < parts; ++q) f(n * q / parts, n * (q + 1) / parts);
  }
  f(0, n / parts);
  for (std::thread& t : threads) t.join();
}

// Rows [row_begin, row_end) of HostConvert (a row: the innermost dim).
void ConvertRows(const char* s, const Geometry& src, size_t ssize, DType sid, char* d, const Geometry& dst,
                 size_t dsize, DType did, int64_t row_begin, int64_t row_end) {
  const bool same = sid == did;
  const int32_t nd = dst.ndim;
  int64_t idx[BP_MAX_NDIM] = {};
  const int64_t inner = nd > 0 ? dst.sizes[nd - 1] : 1;
  const int64_t sin = nd > 0 ? src.strides[nd - 1] * (int64_t)ssize : 0;
  const int64_t din = nd > 0 ? dst.strides[nd - 1] * (int64_t)dsize : 0;
  int64_t soff = src.offset * (int64_t)ssize, doff = dst.offset * (int64_t)dsize;
  // The odometer's position at row_begin.
  int64_t rest = row_begin;
  for (int32_t dim = nd - 2; dim >= 0 && rest > 0; --dim) {
    idx[dim] = rest % dst.sizes[dim];
    rest /= dst.sizes[dim];
    soff += idx[dim] * src.strides[dim] * (int64_t)ssize;
    doff += idx[dim] * dst.strides[dim] * (int64_t)dsize;
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    const char* sp = s + soff;
    char* dp = d + doff;
    if (same) {
      for (int64_t k = 0; k < inner; ++k) std::memcpy(dp + k * din, sp + k * sin, dsize);
    } else {
      for (int64_t k = 0; k < inner; ++k) Store(dp + k * din, did, Load(sp + k * sin, sid));
    }
    for (int32_t dim = nd - 2; dim >= 0; --dim) {
      soff += src.strides[dim] * (int64_t)ssize;
      doff += dst.strides[dim] * (int64_t)dsize;
      if (++idx[dim] < dst.sizes[dim]) break;
      soff -= src.strides[dim] * (int64_t)ssize * dst.sizes[dim];
      doff -= dst.strides[dim] * (int64_t)dsize * dst.sizes[dim];
      idx[dim] = 0;
    }
  }
}

}  // namespace

void HostConvert(const void* src_base, const Geometry& src, void* dst_base, const Geometry& dst) {
  const int64_t n = NumelOf(dst);
  if (n == 0) return;
  const DType sid = DtypeFromDL(src.dtype), did = DtypeFromDL(dst.dtype);
  const size_t ssize = DtypeItemSize(sid), dsize = DtypeItemSize(did);
  const char* s = static_cast<const char*>(src_base);
  char* d = static_cast<char*>(dst_base);
  if (sid == did && IsContiguous(src) && IsContiguous(dst) && NumelOf(src) == n) {
    char* to = d + dst.offset * dsize;
    const char* from = s + src.offset * ssize;
    const size_t bytes = static_cast<size_t>(n) * dsize;
    SplitOverThreads(static_cast<int64_t>(bytes), bytes,
                     [=](int64_t lo, int64_t hi) { std::memcpy(to + lo, from + lo, static_cast<size_t>(hi - lo)); });
    return;
  }
  // Rows split over threads unless dst writes one address from several rows.
  const int32_t nd = dst.ndim;
  bool distinct = true;
  for (int32_t i = 0; i < nd; ++i) distinct = distinct && (dst.strides[i] != 0 || dst.sizes[i] == 1);
  const size_t bytes = distinct ? static_cast<size_t>(n) * (ssize > dsize ? ssize : dsize) : 0;
  const int64_t rows = n / (nd > 0 ? dst.sizes[nd - 1] : 1);
  SplitOverThreads(rows, bytes, [=, &src, &dst](int64_t r0, int64_t r1) {
    ConvertRows(s, src, ssize, sid, d, dst, dsize, did, r0, r1);
  });
}

Status ReadView(DeviceState* dev, const void* base, const Geometry& view, DLDataType dst_dtype,
                void* host_dst) {
  Geometry dst = ContiguousLike(view, dst_dtype);
  BackendSlot* slot = dev->slot;
  // Host memory needs no staging; an empty view needs nothing (HostConvert
  // does nothing for it).
  if (slot->host_memory || NumelOf(view) == 0) {
    HostConvert(base, view, host_dst, dst);
    return Status::Ok();
  }
  BP_RETURN_IF_ERROR(RefuseDuringCapture(dev, "a copy from device to host"));
  // Guard mode: a copy to the host synchronizes; canaries are checked first,
  // so nothing is written when an overrun is reported.
  BP_RETURN_IF_ERROR(dev->allocator->CheckGuards());
  size_t item = DtypeItemSize(DtypeFromDL(view.dtype));
  const uint64_t serial = g_last_error_serial;
  bp_status_t rc;
  if (DtypeEqual(view.dtype, dst_dtype) && IsContiguous(view)) {
    rc = DeviceToHost(dev, base, view.offset * item, host_dst, NumelOf(view) * item);
  } else {
    std::vector<char> tmp;
    Geometry shifted;
    rc = ReadSpan(dev, base, view, item, &tmp, &shifted);
    if (rc == BP_STATUS_OK) HostConvert(tmp.data(), shifted, host_dst, dst);
  }
  if (rc != BP_STATUS_OK) {
    return PluginFailure("copy from device " + slot->name + ":" + std::to_string(dev->index) + " to host", rc,
                         serial);
  }
  return Status::Ok();
}

Status WriteView(DeviceState* dev, void* base, const Geometry& view, const void* host_src,
                 DLDataType src_dtype) {
  Geometry src = ContiguousLike(view, src_dtype);
  BackendSlot* slot = dev->slot;
  if (slot->host_memory || NumelOf(view) == 0) {  // as in ReadView
    HostConvert(host_src, src, base, view);
    return Status::Ok();
  }
  BP_RETURN_IF_ERROR(RefuseDuringCapture(dev, "a copy from host to device"));
  size_t item = DtypeItemSize(DtypeFromDL(view.dtype));
  const bp_backend_t& t = slot->table;
  const uint64_t serial = g_last_error_serial;
  bp_status_t rc;
  std::vector<char> tmp;
  if (DtypeEqual(view.dtype, src_dtype) && IsContiguous(view)) {
    rc = HostToDevice(dev, host_src, base, view.offset * item, NumelOf(view) * item);
  } else {
    // Read the span, scatter into it, write it back (keeps the elements in
    // the span that the view does not cover).
    Geometry shifted;
    rc = ReadSpan(dev, base, view, item, &tmp, &shifted);
    if (rc == BP_STATUS_OK) {
      HostConvert(host_src, src, tmp.data(), shifted);
      const int64_t span_start = view.offset - shifted.offset;
      rc = HostToDevice(dev, tmp.data(), base, span_start * item, tmp.size());
    }
  }
  // The host buffer must outlive the copy: wait for the stream.
  if (rc == BP_STATUS_OK && t.stream_synchronize != nullptr) {
    rc = t.stream_synchronize(t.backend_data, dev->index, CurrentStream(dev));
  }
  if (rc != BP_STATUS_OK) {
    return PluginFailure("copy from host to device " + slot->name + ":" + std::to_string(dev->index), rc, serial);
  }
  return Status::Ok();
}

// ---- copy_: validation, broadcasting, cross-device staging, the backend's copy_ kernel

namespace {

// Stages src (broadcast view `src_view`) through a host buffer into dst.
Status StageCopy(bp_tensor_t* dst, bp_tensor_t* src, const Geometry& src_view) {
  // One side in contiguous host memory: copy straight from or into it.
  const Geometry& d = dst->geo;
  if (src->storage->dev->slot->host_memory && DtypeEqual(src_view.dtype, d.dtype) && src_view.is_contiguous()) {
    const char* p = static_cast<const char*>(src->storage->data) +
                    src_view.offset * static_cast<int64_t>(DtypeItemSize(DtypeFromDL(d.dtype)));
    return WriteView(dst->storage->dev, dst->storage->data, d, p, d.dtype);
  }
  if (dst->storage->dev->slot->host_memory && d.is_contiguous()) {
    char* p = static_cast<char*>(dst->storage->data) + d.offset * static_cast<int64_t>(DtypeItemSize(DtypeFromDL(d.dtype)));
    return ReadView(src->storage->dev, src->storage->data, src_view, d.dtype, p);
  }
  std::vector<char> host(ContiguousBytes(d));
  BP_RETURN_IF_ERROR(ReadView(src->storage->dev, src->storage->data, src_view, dst->geo.dtype, host.data()));
  return WriteView(dst->storage->dev, dst->storage->data, dst->geo, host.data(), dst->geo.dtype);
}

// A copy within one unified device (BP_DEVICE_CAP_UNIFIED) that its backend
// has no kernel for: the host addresses the memory, so it runs the strided
// loop there once queued work is done, instead of staging both sides
// through host buffers (nothing crosses a bus that is not there).
Status CopyOnUnifiedDevice(DeviceState* dev, bp_tensor_t* dst, bp_tensor_t* src, const Geometry& src_view) {
  BP_RETURN_IF_ERROR(SynchronizeDevice(dev));
  const Geometry& d = dst->geo;
  if (dst->storage != src->storage) {
    HostConvert(src->storage->data, src_view, dst->storage->data, d);
    return Status::Ok();
  }
  // One storage: through a temporary, so no element is read after it was written.
  const Geometry tmp_geo = ContiguousLike(d, d.dtype);
  std::vector<char> tmp(ContiguousBytes(d));
  HostConvert(src->storage->data, src_view, tmp.data(), tmp_geo);
  HostConvert(tmp.data(), tmp_geo, dst->storage->data, d);
  return Status::Ok();
}

}  // namespace

Status CopyToHostAsync(DeviceState* dev, const void* base, size_t src_offset, void* dst, size_t nbytes) {
  const bp_backend_t& t = dev->slot->table;
  const uint64_t serial = g_last_error_serial;
  bp_status_t rc;
  if (t.copy_device_to_host_async != nullptr) {
    TransferCounters& c = dev->slot->transfers;
    CountStaged(c.d2h_count, c.d2h_bytes, nbytes);
    rc = t.copy_device_to_host_async(t.backend_data, dev->index, base, src_offset, dst, nbytes, CurrentStream(dev));
  } else {
    rc = DeviceToHost(dev, base, src_offset, dst, nbytes);  // a plugin before it: the copy waits
  }
  if (rc == BP_STATUS_OK) return Status::Ok();
  return PluginFailure("asynchronous copy from device " + dev->slot->name + ":" + std::to_string(dev->index) +
                           " to host",
                       rc, serial);
}

Status CopyFromHostAsync(DeviceState* dev, const void* src, void* base, size_t dst_offset, size_t nbytes) {
  const uint64_t serial = g_last_error_serial;
  const bp_status_t rc = HostToDevice(dev, src, base, dst_offset, nbytes);  // enqueued; no synchronize
  if (rc == BP_STATUS_OK) return Status::Ok();
  return PluginFailure("asynchronous copy from host to device " + dev->slot->name + ":" + std::to_string(dev->index),
                       rc, serial);
}

Status SynchronizeDevice(DeviceState* dev) {
  BP_RETURN_IF_ERROR(RefuseDuringCapture(dev, "synchronizing the stream"));
  const bp_backend_t& t = dev->slot->table;
  if (t.stream_synchronize == nullptr) return Status::Ok();
  const uint64_t serial = g_last_error_serial;
  const bp_status_t rc = t.stream_synchronize(t.backend_data, dev->index, CurrentStream(dev));
  if (rc != BP_STATUS_OK) {
    return PluginFailure("synchronize device " + dev->slot->name + ":" + std::to_string(dev->index), rc, serial);
  }
  return Status::Ok();
}

uint64_t StagedBytesOnThread() { return t_staged_bytes; }

namespace {
// A copy the core makes itself (no copy_ kernel, or two devices): while a
// stream of either device is captured, a host node of the graph (graph.h).
template <typename F>
Status HostWork(bp_context_t* ctx, bp_tensor_t* dst, bp_tensor_t* src, F&& run) {
  bp_stream_handle_t* h = CapturingStream(dst->storage->dev);
  if (h == nullptr) h = CapturingStream(src->storage->dev);
  if (__builtin_expect(h == nullptr, 1)) return run();
  return CaptureHostCopy(ctx, h, dst, src, std::function<Status()>(std::forward<F>(run)));
}
}  // namespace

Status CopyInto(bp_context_t* ctx, bp_tensor_t* dst, bp_tensor_t* src) {
  const Geometry& d = dst->geo;
  const Geometry& s = src->geo;
  // src broadcasts to dst's sizes (trailing dims aligned).
  if (s.ndim > d.ndim) {
    return Error(BP_STATUS_INVALID_ARGUMENT, "copy_: argument 'src' of sizes " + meta::SizesText(s) +
                                                 " cannot broadcast to 'self' of sizes " + meta::SizesText(d));
  }
  Geometry view = d;
  view.dtype = s.dtype;
  view.offset = s.offset;
  view.device = s.device;
  for (int32_t i = 0; i < d.ndim; ++i) {
    int32_t si = i - (d.ndim - s.ndim);
    if (si < 0) {
      view.strides[i] = 0;
    } else if (s.sizes[si] == d.sizes[i]) {
      view.strides[i] = s.strides[si];
    } else if (s.sizes[si] == 1) {
      view.strides[i] = 0;
    } else {
      return Error(BP_STATUS_INVALID_ARGUMENT, "copy_: argument 'src' of sizes " + meta::SizesText(s) +
                                                   " cannot broadcast to 'self' of sizes " + meta::SizesText(d) +
                                                   " at dim " + std::to_string(i));
    }
  }
  if (!(d.device.backend == s.device.backend && d.device.index == s.device.index)) {
    return HostWork(ctx, dst, src, [&] { return StageCopy(dst, src, view); });
  }

  DeviceState* dev = dst->storage->dev;
  const bp_op_t* op = ctx->copy_op;
  int32_t backend = dev->slot->id;
  const KernelEntry& k = KernelFor(op, backend);
  // A copy_ kernel registered with a dtype mask is offered only the dtypes it declared.
  const DType dd = DtypeFromDL(d.dtype), sd = DtypeFromDL(s.dtype);
  const bool takes = dd != DType::kInvalid && sd != DType::kInvalid && KernelTakes(k, DtypeBit(dd) | DtypeBit(sd));
  if (k.fn != nullptr && takes) {
    DLTensor dl_self, dl_src;
    FillDLTensor(dst->storage, d, &dl_self);
    FillDLTensor(src->storage, view, &dl_src);
    bp_kernel_arg_t kargs[3] = {};
    kargs[0].kind = BP_VALUE_TENSOR;
    kargs[0].u.tensor = &dl_self;
    kargs[1].kind = BP_VALUE_TENSOR;
    kargs[1].u.tensor = &dl_src;
    kargs[2].kind = BP_VALUE_BOOL;
    kargs[2].u.b = 0;
    DLTensor* outs[1] = {&dl_self};
    bp_kernel_call_t call = MakeKernelCall(op, dev, kargs, 3, outs, 1);
    call.kernel_data = k.data;
    call.backend_data = dev->slot->props_table.backend_data;
    CallError error;
    AttachCallError(&call, &error);
    if (dev->allocator->guarded()) NoteKernelOutputs(dev, op, call);
    bp_status_t rc = k.fn(&call);
    if (rc == BP_STATUS_OK) {
      if (!OutputsKept(call)) return OutputsReplaced(call, op->name, dev->slot->name);
      if (bp_stream_handle_t* h = CapturingStream(dev)) BP_RETURN_IF_ERROR(RecordKernelCall(h, k.fn, call));
      const_cast<bp_op_t*>(op)->native_count.Add(backend);
      return Status::Ok();
    }
    // UNIMPLEMENTED: the kernel declined this call (a dtype or layout it
    // lacks) before writing; the core moves the data below.
    if (rc != BP_STATUS_UNIMPLEMENTED) return KernelFailure(call, op->name, dev->slot->name, rc);
  }
  // No copy_ kernel: the core moves the data itself (through the host for
  // device memory; straight host loops for host memory unless src and dst
  // share storage, where a temporary avoids overlapping reads and writes).
  if (dev->slot->host_memory && dst->storage != src->storage) {
    return HostWork(ctx, dst, src, [&] {
      HostConvert(src->storage->data, view, dst->storage->data, d);
      return Status::Ok();
    });
  }
  if (dev->unified && !dev->slot->host_memory) {
    return HostWork(ctx, dst, src, [&] { return CopyOnUnifiedDevice(dev, dst, src, view); });
  }
  return HostWork(ctx, dst, src, [&] { return StageCopy(dst, src, view); });
}

}  // namespace bp::core
