// Storage and tensor lifetime, and the C API for creating and reading tensors.
#include "tensor.h"
#include "graph_inputs.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <type_traits>
#include <string>

#include "api.h"
#include "copy.h"
#include "dispatch.h"
#include "dtype.h"
#include "plugin.h"
#include "rcu.h"

namespace bp::core {

void StorageRetain(Storage* s) { s->refs.fetch_add(1, std::memory_order_relaxed); }

namespace {
// Drops one reference; true when it was the last. A holder that sees the
// count at 1 holds the only reference (no one else can add one), so the
// common case needs no atomic read-modify-write.
inline bool DropRef(std::atomic<int64_t>& refs) {
  return refs.load(std::memory_order_acquire) == 1 || refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

// Frees an embedded storage (EmptyTensor's: allocator memory, never imported)
// and its TensorBlock: block and header go back to the allocator in one call.
void FreeTensorBlock(Storage* s) {
  if (__builtin_expect(g_watched_graphs.load(std::memory_order_relaxed) != 0, 0) && s->block != nullptr) {
    NoteStorageFreed(s->dev, s->block);  // a captured input going away (graph_inputs.h)
  }
  bp_plugin_t* plugin = s->plugin;
  CachingAllocator* allocator = s->dev->allocator.get();
  Block* block = s->block;
  auto* tb = reinterpret_cast<TensorBlock*>(reinterpret_cast<char*>(s) - offsetof(TensorBlock, storage));
  tb->~TensorBlock();
  allocator->Free(block, tb);
  if (plugin != nullptr) PluginRelease(plugin);
}
}  // namespace

void StorageRelease(Storage* s) {
  if (!DropRef(s->refs)) return;
  if (__builtin_expect(g_watched_graphs.load(std::memory_order_relaxed) != 0, 0) && s->block != nullptr) {
    NoteStorageFreed(s->dev, s->block);  // a captured input going away (graph_inputs.h)
  }
  if (s->embedded) {
    // Its header died earlier (TensorRelease then took the tensor off live_tensors).
    bp_context_t* ctx = s->ctx;
    FreeTensorBlock(s);
    ctx->live_tensors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (s->block != nullptr) s->dev->allocator->Free(s->block);
  if (s->managed != nullptr && s->managed->deleter != nullptr) s->managed->deleter(s->managed);
  if (s->managed_versioned != nullptr && s->managed_versioned->deleter != nullptr) {
    s->managed_versioned->deleter(s->managed_versioned);
  }
  if (s->aliased != nullptr) StorageRelease(s->aliased);
  bp_plugin_t* plugin = s->plugin;
  s->ctx->live_storages.fetch_sub(1, std::memory_order_relaxed);
  delete s;
  if (plugin != nullptr) PluginRelease(plugin);
}

Status ResolveDevice(bp_context_t* ctx, bp_device_t device, const char* fn, DeviceState** out) {
  BP_RETURN_IF_ERROR(CheckNotForked(ctx, fn));
  if (device.backend < 0 || device.backend >= ctx->num_backends.load(std::memory_order_acquire)) {
    return Error(BP_STATUS_NOT_FOUND, std::string(fn) + ": no backend with id " + std::to_string(device.backend));
  }
  BackendSlot& slot = ctx->slots[device.backend];
  if (!slot.loaded.load(std::memory_order_acquire)) {
    return Error(BP_STATUS_FAILED_PRECONDITION,
                 std::string(fn) + ": backend '" + slot.name + "' (id " + std::to_string(device.backend) +
                     ") was unloaded");
  }
  if (device.index < 0 || device.index >= static_cast<int32_t>(slot.devices.size())) {
    return Error(BP_STATUS_NOT_FOUND, std::string(fn) + ": backend '" + slot.name + "' has " +
                                          std::to_string(slot.devices.size()) + " device(s); index " +
                                          std::to_string(device.index) + " does not exist");
  }
  *out = slot.devices[device.index];
  return Status::Ok();
}

namespace {
// Fills a storage of nbytes from dev's caching allocator (s->refs is 1).
void FillStorage(bp_context_t* ctx, bp_device_t device, DeviceState* dev, size_t nbytes, Block* block, Storage* s) {
  s->ctx = ctx;
  s->device = device;
  s->dev = dev;
  s->block = block;
  s->data = block->ptr;
  s->nbytes = nbytes;
  if (!dev->slot->host_memory) {
    s->plugin = dev->slot->plugin;
    PluginRetain(s->plugin);
  }
}

Status InitStorage(bp_context_t* ctx, bp_device_t device, DeviceState* dev, size_t nbytes, const char* fn,
                   Storage* s) {
  Block* block = nullptr;
  Status st = dev->allocator->Allocate(nbytes, CurrentStream(dev), &block);
  if (!st.ok()) return Error(st.code(), std::string(fn) + ": " + st.message());
  FillStorage(ctx, device, dev, nbytes, block, s);
  ctx->live_storages.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

#ifdef NDEBUG
static_assert(sizeof(TensorBlock) <= CachingAllocator::kHeaderBytes, "tensor headers must fit the allocator's cache");
static_assert(std::is_trivially_destructible<TensorBlock>::value, "TensorBlock memory is reused raw");

// A fresh tensor header and storage of nbytes (refs 1 each) in one TensorBlock,
// block and header memory from one allocator call. The header's geometry is
// left for the caller, sizes and strides unwritten (Geometry::ArraysUnset):
// the caller writes every entry; it holds the storage's only reference.
Status NewTensorBlock(bp_context_t* ctx, bp_device_t device, DeviceState* dev, size_t nbytes, const char* fn,
                      bp_tensor_t** out) {
  Block* block = nullptr;
  void* mem = nullptr;
  Status st = dev->allocator->Allocate(nbytes, CurrentStream(dev), &block, &mem);
  if (!st.ok()) return Error(st.code(), std::string(fn) + ": " + st.message());
  if (mem == nullptr) {
    mem = ::operator new(CachingAllocator::kHeaderBytes, std::nothrow);
    if (mem == nullptr) {
      dev->allocator->Free(block);
      dev->allocator->DropPair();
      throw std::bad_alloc();  // ApiCall reports it as OUT_OF_MEMORY
    }
  }
  auto* tb = new (mem) TensorBlock(Geometry::ArraysUnset{});
  FillStorage(ctx, device, dev, nbytes, block, &tb->storage);
  tb->storage.embedded = true;
  bp_tensor_t* t = &tb->tensor;
  t->embedded = true;
  t->magic = kTensorMagic;
  t->storage = &tb->storage;
  *out = t;
  return Status::Ok();
}
#endif
}  // namespace

Status NewStorage(bp_context_t* ctx, bp_device_t device, size_t nbytes, const char* fn, Storage** out) {
  DeviceState* dev = nullptr;
  BP_RETURN_IF_ERROR(ResolveDevice(ctx, device, fn, &dev));
  auto* s = new Storage();
  Status st = InitStorage(ctx, device, dev, nbytes, fn, s);
  if (!st.ok()) {
    delete s;
    return st;
  }
  *out = s;
  return Status::Ok();
}

Status MakeContiguousGeometry(const char* fn, int32_t ndim, const int64_t* sizes, DLDataType dtype,
                              bp_device_t device, Geometry* out, size_t* out_nbytes) {
  if (ndim < 0 || ndim > BP_MAX_NDIM) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": ndim must be in [0, " +
                                                 std::to_string(BP_MAX_NDIM) + "], got " + std::to_string(ndim));
  }
  if (ndim > 0 && sizes == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": sizes is NULL");
  DType id = DtypeFromDL(dtype);
  if (id == DType::kInvalid) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(fn) + ": unsupported dtype " + DtypeName(dtype) +
                     " (expected bool, uint8, int8, int32, int64, float16, bfloat16, float32 or float64)");
  }
  Geometry g;
  g.dtype = dtype;
  g.ndim = ndim;
  g.device = device;
  int64_t numel = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (sizes[i] < 0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": size of dim " + std::to_string(i) +
                                                   " must be >= 0, got " + std::to_string(sizes[i]));
    }
    g.sizes[i] = sizes[i];
    if (__builtin_mul_overflow(numel, sizes[i], &numel)) {
      return Error(BP_STATUS_OUT_OF_RANGE, std::string(fn) + ": the number of elements overflows int64");
    }
  }
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(DtypeItemSize(id)), &nbytes)) {
    return Error(BP_STATUS_OUT_OF_RANGE, std::string(fn) + ": the byte size (" + std::to_string(numel) +
                                             " elements of " + DtypeName(id) + ") overflows int64");
  }
  int64_t stride = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    g.strides[i] = stride;
    stride *= sizes[i] > 0 ? sizes[i] : 1;
  }
  *out = g;
  *out_nbytes = static_cast<size_t>(nbytes);
  return Status::Ok();
}

bp_tensor_t* WrapStorage(bp_context_t* ctx, Storage* storage, const Geometry& geo) {
  auto* t = new bp_tensor_t();
  t->magic = kTensorMagic;
  StorageRetain(storage);
  t->storage = storage;
  t->geo = geo;
  SetSignatureKey(t);
  ctx->live_tensors.fetch_add(1, std::memory_order_relaxed);
  return t;
}

Status EmptyTensor(bp_context_t* ctx, bp_device_t device, int32_t ndim, const int64_t* sizes,
                   DLDataType dtype, const char* fn, bp_tensor_t** out) {
  Geometry g;
  size_t nbytes = 0;
  BP_RETURN_IF_ERROR(MakeContiguousGeometry(fn, ndim, sizes, dtype, device, &g, &nbytes));
#ifdef NDEBUG
  DeviceState* dev = nullptr;
  BP_RETURN_IF_ERROR(ResolveDevice(ctx, device, fn, &dev));
  bp_tensor_t* t = nullptr;
  BP_RETURN_IF_ERROR(NewTensorBlock(ctx, device, dev, nbytes, fn, &t));
  t->geo = g;
  SetSignatureKey(t);
  *out = t;
  return Status::Ok();
#else
  // Debug builds keep headers apart: TensorRelease quarantines freed headers.
  Storage* s = nullptr;
  BP_RETURN_IF_ERROR(NewStorage(ctx, device, nbytes, fn, &s));
  auto* t = new bp_tensor_t();
  // The tensor takes over the new storage's only reference (no retain/release pair).
  t->magic = kTensorMagic;
  t->storage = s;
  t->geo = g;
  SetSignatureKey(t);
  ctx->live_tensors.fetch_add(1, std::memory_order_relaxed);
  *out = t;
  return Status::Ok();
#endif
}

Status EmptyTensorLike(bp_context_t* ctx, DeviceState* dev, const Geometry& like, DLDataType dtype,
                       const char* fn, bp_tensor_t** out) {
#ifdef NDEBUG
  const int32_t ndim = like.ndim;
  int64_t numel = 1;
  for (int32_t i = 0; i < ndim; ++i) numel *= like.sizes[i];
  const size_t nbytes = static_cast<size_t>(numel) * (dtype.bits / 8);
  bp_tensor_t* t = nullptr;
  BP_RETURN_IF_ERROR(NewTensorBlock(ctx, like.device, dev, nbytes, fn, &t));
  // The geometry MakeContiguousGeometry gives, written in place.
  Geometry& g = t->geo;
  g.dtype = dtype;
  g.ndim = ndim;
  g.device = like.device;
  int64_t stride = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    g.sizes[i] = like.sizes[i];
    g.strides[i] = stride;
    stride *= like.sizes[i] > 0 ? like.sizes[i] : 1;
  }
  for (int32_t i = ndim; i < BP_MAX_NDIM; ++i) {
    g.sizes[i] = 0;
    g.strides[i] = 0;
  }
  SetSignatureKey(t);
  *out = t;
  return Status::Ok();
#else
  (void)dev;
  return EmptyTensor(ctx, like.device, like.ndim, like.sizes, dtype, fn, out);
#endif
}

bool CheckLiveTensor(const bp_tensor_t* t, const char* fn) {
  if (t->magic == kTensorMagic) return true;
  // Released already: its header was marked dead (debug builds keep it in a
  // quarantine; release builds hand it back to the allocator's header cache,
  // whose link overwrites the mark). Ignored, not freed a second time.
  std::string msg = std::string(fn) + ": tensor " + std::to_string(reinterpret_cast<uintptr_t>(t)) +
                    " was already freed (double release or use after release); the call is ignored";
  std::fprintf(stderr, "backplane: %s\n", msg.c_str());
  SetLastError(Status(BP_STATUS_INVALID_ARGUMENT, std::move(msg)));
  return false;
}

void TensorRelease(bp_tensor_t* t) {
#ifdef NDEBUG
  // The sole holder (count 1) needs no atomic read-modify-write: no one else
  // can add a reference. Debug builds decrement always, to catch double releases.
  int32_t prev = t->refs.load(std::memory_order_acquire) == 1 ? 1 : t->refs.fetch_sub(1, std::memory_order_acq_rel);
#else
  int32_t prev = t->refs.fetch_sub(1, std::memory_order_acq_rel);
#endif
#ifndef NDEBUG
  if (prev <= 0) {
    std::fprintf(stderr, "backplane: bp_tensor_release: reference count of tensor %p went below zero\n",
                 static_cast<void*>(t));
    std::abort();
  }
#endif
  if (prev != 1) return;
  t->magic = kTensorDead;  // a second release sees this (CheckLiveTensor)
  bp_context_t* ctx = t->storage->ctx;
  if (t->embedded) {
    // The header's memory goes with its storage's; nothing may touch t (or
    // the storage, unless this was its last reference) after DropRef.
    // The allocator counts the pair as a live tensor and storage until its
    // block is freed (LivePairs).
    Storage* s = t->storage;
    if (DropRef(s->refs)) {
      FreeTensorBlock(s);
    } else {
      ctx->live_tensors.fetch_sub(1, std::memory_order_relaxed);  // views keep the storage: the tensor is gone
    }
    return;
  }
  StorageRelease(t->storage);
  ctx->live_tensors.fetch_sub(1, std::memory_order_relaxed);
#ifndef NDEBUG
  // Debug builds keep recently freed headers (poisoned) in a quarantine so a
  // second release is caught with a message even after many allocations.
  t->storage = nullptr;
  static std::mutex quarantine_mu;
  static bp_tensor_t* quarantine[4096] = {};
  static size_t next = 0;
  std::lock_guard<std::mutex> lock(quarantine_mu);
  delete quarantine[next];
  quarantine[next] = t;
  next = (next + 1) % 4096;
#else
  delete t;
#endif
}

}  // namespace bp::core

using namespace bp::core;

namespace bp::core {

Status CheckNotConstant(const bp_tensor_t* t, const char* fn, const char* arg) {
  if (__builtin_expect(t->storage->constant_id.load(std::memory_order_relaxed) == 0 && !t->storage->read_only, 1)) {
    return Status::Ok();
  }
  if (t->storage->read_only) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": argument '" + arg +
                                                 "' is a read-only tensor (a DLPack import flagged "
                                                 "DLPACK_FLAG_BITMASK_READ_ONLY), which is never written; write a "
                                                 "copy of it instead");
  }
  return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": argument '" + arg +
                                               "' is a constant tensor (bp_tensor_set_constant), which is never "
                                               "written; write a copy of it instead");
}

}  // namespace bp::core

extern "C" {

BP_API bp_status_t bp_tensor_empty(bp_context_t* context, bp_device_t device, int32_t ndim,
                                   const int64_t* sizes, DLDataType dtype, bp_tensor_t** out_tensor) {
  return ApiCall("bp_tensor_empty", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_tensor != nullptr, "bp_tensor_empty", "context and out_tensor must not be NULL");
    ReadSection rs;
    return EmptyTensor(context, device, ndim, sizes, dtype, "bp_tensor_empty", out_tensor);
  });
}

BP_API bp_status_t bp_tensor_from_host(bp_context_t* context, bp_device_t device, int32_t ndim,
                                       const int64_t* sizes, DLDataType dtype, const void* data,
                                       size_t nbytes, bp_tensor_t** out_tensor) {
  return ApiCall("bp_tensor_from_host", [&]() -> Status {
    const char* fn = "bp_tensor_from_host";
    BP_CHECK_ARG(context != nullptr && out_tensor != nullptr, fn, "context and out_tensor must not be NULL");
    ReadSection rs;
    Geometry g;
    size_t expected = 0;
    BP_RETURN_IF_ERROR(MakeContiguousGeometry(fn, ndim, sizes, dtype, device, &g, &expected));
    if (nbytes != expected) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": nbytes must be numel * itemsize = " +
                                                   std::to_string(expected) + ", got " + std::to_string(nbytes));
    }
    BP_CHECK_ARG(data != nullptr || nbytes == 0, fn, "data is NULL");
    bp_tensor_t* t = nullptr;
    BP_RETURN_IF_ERROR(EmptyTensor(context, device, ndim, sizes, dtype, fn, &t));
    Status st = WriteView(t->storage->dev, t->storage->data, t->geo, data, dtype);
    if (!st.ok()) {
      TensorRelease(t);
      return Error(st.code(), std::string(fn) + ": " + st.message());
    }
    *out_tensor = t;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_to_host(const bp_tensor_t* tensor, void* dst, size_t nbytes) {
  return ApiCall("bp_tensor_to_host", [&]() -> Status {
    const char* fn = "bp_tensor_to_host";
    BP_CHECK_ARG(tensor != nullptr, fn, "tensor is NULL");
    ReadSection rs;
    size_t expected = ContiguousBytes(tensor->geo);
    if (nbytes != expected) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": nbytes must be numel * itemsize = " +
                                                   std::to_string(expected) + ", got " + std::to_string(nbytes));
    }
    BP_CHECK_ARG(dst != nullptr || nbytes == 0, fn, "dst is NULL");
    BP_RETURN_IF_ERROR(CheckNotForked(tensor->storage->ctx, fn));
    Status st = ReadView(tensor->storage->dev, tensor->storage->data, tensor->geo, tensor->geo.dtype, dst);
    if (!st.ok()) return Error(st.code(), std::string(fn) + ": " + st.message());
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_to_device(const bp_tensor_t* tensor, bp_device_t device,
                                       bp_tensor_t** out_tensor) {
  return ApiCall("bp_tensor_to_device", [&]() -> Status {
    const char* fn = "bp_tensor_to_device";
    BP_CHECK_ARG(tensor != nullptr && out_tensor != nullptr, fn, "tensor and out_tensor must not be NULL");
    ReadSection rs;
    bp_context_t* ctx = tensor->storage->ctx;
    bp_tensor_t* t = nullptr;
    BP_RETURN_IF_ERROR(EmptyTensor(ctx, device, tensor->geo.ndim, tensor->geo.sizes, tensor->geo.dtype, fn, &t));
    // The one copy path: staging through the host only where neither side is host memory.
    Status st = CopyInto(ctx, t, const_cast<bp_tensor_t*>(tensor));
    if (!st.ok()) {
      TensorRelease(t);
      return Error(st.code(), std::string(fn) + ": " + st.message());
    }
    *out_tensor = t;
    return Status::Ok();
  });
}

BP_API int32_t bp_tensor_ndim(const bp_tensor_t* tensor) { return tensor ? tensor->geo.ndim : 0; }
BP_API const int64_t* bp_tensor_sizes(const bp_tensor_t* tensor) { return tensor ? tensor->geo.sizes : nullptr; }
BP_API const int64_t* bp_tensor_strides(const bp_tensor_t* tensor) { return tensor ? tensor->geo.strides : nullptr; }
BP_API int64_t bp_tensor_storage_offset(const bp_tensor_t* tensor) { return tensor ? tensor->geo.offset : 0; }
BP_API int64_t bp_tensor_numel(const bp_tensor_t* tensor) {
  if (tensor == nullptr) return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < tensor->geo.ndim; ++i) n *= tensor->geo.sizes[i];
  return n;
}
BP_API DLDataType bp_tensor_dtype(const bp_tensor_t* tensor) { return tensor ? tensor->geo.dtype : DLDataType{}; }
BP_API bp_device_t bp_tensor_device(const bp_tensor_t* tensor) { return tensor ? tensor->geo.device : bp_device_t{}; }
BP_API int32_t bp_tensor_is_contiguous(const bp_tensor_t* tensor) {
  if (tensor == nullptr) return 0;
  int64_t expected = 1;
  for (int32_t i = tensor->geo.ndim - 1; i >= 0; --i) {
    if (tensor->geo.sizes[i] != 1 && tensor->geo.strides[i] != expected) return 0;
    expected *= tensor->geo.sizes[i];
  }
  return 1;
}

BP_API bp_status_t bp_tensor_set_constant(bp_tensor_t* tensor) {
  return ApiCall("bp_tensor_set_constant", [&]() -> Status {
    BP_CHECK_ARG(tensor != nullptr, "bp_tensor_set_constant", "tensor is NULL");
    // Ids start at 1 (0 means "not constant") and are never reused.
    static std::atomic<uint64_t> next_id{1};
    uint64_t none = 0;
    const uint64_t id = next_id.fetch_add(1, std::memory_order_relaxed);
    tensor->storage->constant_id.compare_exchange_strong(none, id, std::memory_order_relaxed);
    return Status::Ok();
  });
}

BP_API int32_t bp_tensor_is_constant(const bp_tensor_t* tensor) {
  return tensor != nullptr && tensor->storage->constant_id.load(std::memory_order_relaxed) != 0 ? 1 : 0;
}

BP_API void bp_tensor_retain(bp_tensor_t* tensor) {
  if (tensor == nullptr || !CheckLiveTensor(tensor, "bp_tensor_retain")) return;
  TensorRetain(tensor);
}

BP_API void bp_tensor_release(bp_tensor_t* tensor) {
  if (tensor == nullptr || !CheckLiveTensor(tensor, "bp_tensor_release")) return;
  ReadSection rs;
  TensorRelease(tensor);
}

}  // extern "C"
