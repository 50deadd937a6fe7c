// Tensors: refcounted storage plus view metadata (PyTorch's StorageImpl and
// TensorImpl, reduced to what a dispatcher needs).
#pragma once

#include <atomic>
#include <cstring>
#include <cstdint>

#include "allocator.h"
#include "context.h"
#include "meta/meta.h"

namespace bp::core {

struct Storage {
  std::atomic<int64_t> refs{1};
  bp_context_t* ctx = nullptr;
  bp_device_t device{};
  DeviceState* dev = nullptr;  // the allocator/stream owner
  Block* block = nullptr;      // from dev->allocator; nullptr for imported memory
  void* data = nullptr;        // base pointer as allocate() returned it (opaque for devices)
  size_t nbytes = 0;
  DLManagedTensor* managed = nullptr;  // imported DLPack tensor; deleter called once
  bp_plugin_t* plugin = nullptr;       // holds a plugin reference; nullptr for core memory
  // An imported DLPack 1.x tensor; deleter called once.
  DLManagedTensorVersioned* managed_versioned = nullptr;
  // Imported with DLPACK_FLAG_BITMASK_READ_ONLY: never written, like a
  // constant storage, but kernels are not told (its producer may change it).
  // Set before the storage is shared, never changed after.
  bool read_only = false;
  // A host view of a unified device's memory (HostView): the device storage
  // it aliases, whose reference it holds.
  Storage* aliased = nullptr;
  // Allocated together with its first tensor header (a TensorBlock): freeing
  // the storage frees that header too, which by then is dead.
  bool embedded = false;
  // Non-zero once bp_tensor_set_constant made the storage constant: a
  // process-unique id, never reused, that kernels see with
  // BP_KERNEL_ARG_CONSTANT. Nothing in Backplane writes the storage then.
  std::atomic<uint64_t> constant_id{0};
};

// The "is constant" or "is read-only" refusal of a call that would write
// tensor `t` (argument `arg` of `fn`); Ok when the storage is neither.
Status CheckNotConstant(const bp_tensor_t* t, const char* fn, const char* arg);

void StorageRetain(Storage* s);
void StorageRelease(Storage* s);

// Returns the device state for `device` if its backend is loaded; error otherwise.
Status ResolveDevice(bp_context_t* ctx, bp_device_t device, const char* fn, DeviceState** out);

// A new storage of nbytes on `device` through the caching allocator.
Status NewStorage(bp_context_t* ctx, bp_device_t device, size_t nbytes, const char* fn, Storage** out);

// Checks sizes and dtype (overflow -> OUT_OF_RANGE) and fills a contiguous geometry.
Status MakeContiguousGeometry(const char* fn, int32_t ndim, const int64_t* sizes, DLDataType dtype,
                              bp_device_t device, Geometry* out, size_t* out_nbytes);

}  // namespace bp::core

struct bp_tensor_t {
  bp_tensor_t() = default;
  // geo's sizes and strides left unwritten (Geometry::ArraysUnset).
  explicit bp_tensor_t(bp::core::Geometry::ArraysUnset unset) : geo(unset) {}

  std::atomic<int32_t> refs{1};
  uint32_t magic = 0;
  bp::core::Storage* storage = nullptr;
  bp::core::Geometry geo;
  // The call-signature key of geo's rank, dtype and device (SignatureKey),
  // worked out when the tensor is made (a tensor's geometry never changes
  // after): the plan cache reads it instead of packing it on every call.
  // 0: no key (a device index beyond the key's bits).
  uint64_t sig_key = 0;
  bool embedded = false;  // lives in a TensorBlock with its storage (freed by StorageRelease)
};

namespace bp::core {
// The 64-bit call-signature key of a tensor or tensor-list argument
// (call_plan.h's PackSignature): kind (bits 0-3), rank + 1 (4-8), backend
// (9-14, below kMaxBackends), device index (15-31) and the DLDataType
// (32-63); 0 (never a key: kind is not 0) when the device index does not fit.
inline uint64_t SignatureKey(int32_t kind, int32_t ndim, DLDataType dtype, bp_device_t device) {
  if (static_cast<uint32_t>(device.index) >= (1u << 17)) return 0;
  uint32_t dt;
  std::memcpy(&dt, &dtype, sizeof(dt));
  return static_cast<uint64_t>(kind) | static_cast<uint64_t>(ndim + 1) << 4 |
         static_cast<uint64_t>(device.backend) << 9 | static_cast<uint64_t>(device.index) << 15 |
         static_cast<uint64_t>(dt) << 32;
}
inline void SetSignatureKey(bp_tensor_t* t) {
  t->sig_key = SignatureKey(BP_VALUE_TENSOR, t->geo.ndim, t->geo.dtype, t->geo.device);
}

// A fresh tensor and its storage in one heap allocation. Why: allocating the
// output of an operator call is on the hot path, and one allocation instead of
// two saves a malloc/free pair per call. The header's memory is released with
// the storage (views may keep the storage alive after the header died).
struct TensorBlock {
  TensorBlock() = default;
  explicit TensorBlock(Geometry::ArraysUnset unset) : tensor(unset) {}
  bp_tensor_t tensor;
  Storage storage;
};
}  // namespace bp::core

namespace bp::core {
constexpr uint32_t kTensorMagic = 0x7e45a11cu;
constexpr uint32_t kTensorDead = 0xdeadbeefu;

// A new contiguous tensor (uninitialized).
Status EmptyTensor(bp_context_t* ctx, bp_device_t device, int32_t ndim, const int64_t* sizes,
                   DLDataType dtype, const char* fn, bp_tensor_t** out);
// EmptyTensor(ctx, like.device, like.ndim, like.sizes, dtype, fn, out) for a
// caller that resolved `dev` for like.device and knows numel * itemsize fits
// int64 (the operator fast path): the same result and errors, without the
// checks and Geometry copies.
Status EmptyTensorLike(bp_context_t* ctx, DeviceState* dev, const Geometry& like, DLDataType dtype,
                       const char* fn, bp_tensor_t** out);
// A new tensor header over `storage` (takes a storage reference).
bp_tensor_t* WrapStorage(bp_context_t* ctx, Storage* storage, const Geometry& geo);
void TensorRelease(bp_tensor_t* t);
// True for a live tensor header; for one already released (its magic marked
// dead), reports "<fn>: tensor ... was already freed" on stderr and as this
// thread's last error (INVALID_ARGUMENT) and returns false.
bool CheckLiveTensor(const bp_tensor_t* t, const char* fn);
inline void TensorRetain(bp_tensor_t* t) { t->refs.fetch_add(1, std::memory_order_relaxed); }
}  // namespace bp::core
