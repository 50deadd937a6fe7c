// Zero-copy DLPack import and export.
#include <cstdio>
#include <cstring>
#include <string>

#include "api.h"
#include "dtype.h"
#include "plugin.h"
#include "rcu.h"
#include "tensor.h"

using namespace bp::core;

namespace {

std::string ToHex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// What an exported DLManagedTensor (0.6) or DLManagedTensorVersioned (1.x)
// points to: shape and strides arrays and a storage reference that keeps the
// memory alive until the consumer's deleter.
template <typename Managed>
struct ExportHolder {
  Managed managed{};
  int64_t shape[BP_MAX_NDIM] = {};
  int64_t strides[BP_MAX_NDIM] = {};
  Storage* storage = nullptr;
};

template <typename Managed>
void ExportDeleter(Managed* managed) {
  auto* holder = static_cast<ExportHolder<Managed>*>(managed->manager_ctx);
  ReadSection rs;
  StorageRelease(holder->storage);
  delete holder;
}

// Fills `dl` to view `tensor` through the holder's shape and strides arrays,
// and takes the storage reference the holder keeps.
template <typename Holder>
void FillExport(bp_tensor_t* tensor, Holder* h, DLTensor* dl) {
  const Geometry& g = tensor->geo;
  for (int32_t i = 0; i < g.ndim; ++i) {
    h->shape[i] = g.sizes[i];
    h->strides[i] = g.strides[i];
  }
  StorageRetain(tensor->storage);
  h->storage = tensor->storage;
  dl->data = tensor->storage->data;
  dl->device.device_type = static_cast<DLDeviceType>(tensor->storage->dev->slot->device_type);
  dl->device.device_id = g.device.index;
  dl->ndim = g.ndim;
  dl->dtype = g.dtype;
  dl->shape = h->shape;
  dl->strides = h->strides;
  dl->byte_offset = static_cast<uint64_t>(g.offset) * DtypeItemSize(DtypeFromDL(g.dtype));
}

// Checks `dl` and makes a storage over its memory (one reference, no owner
// recorded yet) and its geometry. The caller holds a ReadSection.
Status ImportDl(bp_context_t* context, const DLTensor& dl, const char* fn, Storage** out_storage, Geometry* out_geo) {
  // Read as an integer: a producer built against a newer dlpack.h may pass a
  // device type this build's enum does not list (loading it as the enum is
  // undefined behaviour; found by fuzz/dlpack_fuzz.cpp).
  int32_t device_type = 0;
  static_assert(sizeof(dl.device.device_type) == sizeof(device_type), "DLDeviceType is 32 bits");
  std::memcpy(&device_type, &dl.device.device_type, sizeof(device_type));
  if (dl.dtype.lanes != 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(fn) + ": dtype lanes must be 1, got " + std::to_string(dl.dtype.lanes));
  }
  DType id = DtypeFromDL(dl.dtype);
  if (id == DType::kInvalid) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": unsupported dtype " + DtypeName(dl.dtype));
  }
  if (dl.ndim < 0 || dl.ndim > BP_MAX_NDIM) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": ndim must be in [0, " + std::to_string(BP_MAX_NDIM) +
                                                 "], got " + std::to_string(dl.ndim));
  }
  if (dl.ndim > 0 && dl.shape == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": shape is NULL");
  size_t item = DtypeItemSize(id);
  if (dl.byte_offset % item != 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": byte_offset " + std::to_string(dl.byte_offset) +
                                                 " is not a multiple of the item size " + std::to_string(item));
  }
  // Sizes: none negative, and their product (and byte size) fits int64.
  int64_t numel = 1;
  for (int32_t i = 0; i < dl.ndim; ++i) {
    if (dl.shape[i] < 0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": size of dim " + std::to_string(i) +
                                                   " must be >= 0, got " + std::to_string(dl.shape[i]));
    }
    if (__builtin_mul_overflow(numel, dl.shape[i], &numel)) {
      return Error(BP_STATUS_OUT_OF_RANGE, std::string(fn) + ": the number of elements overflows int64");
    }
  }
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(item), &nbytes)) {
    return Error(BP_STATUS_OUT_OF_RANGE, std::string(fn) + ": the byte size (" + std::to_string(numel) +
                                             " elements of " + std::to_string(item) + " bytes) overflows int64");
  }
  if (dl.data == nullptr && numel != 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(fn) + ": data is NULL for a tensor of " + std::to_string(numel) + " element(s)");
  }
  if (device_type == kDLCPU && dl.device.device_id != 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": a kDLCPU tensor must have device_id 0, got " +
                                                 std::to_string(dl.device.device_id));
  }
  // What cannot be checked: that data, byte_offset and the strides stay
  // inside the producer's buffer (DLPack carries no buffer size).
  // Find the backend of the DLPack device.
  bp_device_t device{-1, dl.device.device_id};
  if (device_type == kDLCPU || device_type == kDLCUDAHost) {
    device = {context->host_backend, 0};
  } else {
    int32_t n = context->num_backends.load(std::memory_order_acquire);
    for (int32_t b = 0; b < n; ++b) {
      if (b != context->host_backend && context->slots[b].loaded.load(std::memory_order_acquire) &&
          context->slots[b].device_type == device_type) {
        device.backend = b;
        break;
      }
    }
    if (device.backend < 0) {
      return Error(BP_STATUS_NOT_FOUND,
                   std::string(fn) + ": no loaded backend has DLPack device type " + std::to_string(device_type));
    }
  }
  DeviceState* dev = nullptr;
  BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
  Geometry g;
  g.dtype = dl.dtype;
  g.ndim = dl.ndim;
  g.device = device;
  g.offset = static_cast<int64_t>(dl.byte_offset / item);
  int64_t stride = 1;
  for (int32_t i = dl.ndim - 1; i >= 0; --i) {
    g.sizes[i] = dl.shape[i];
    g.strides[i] = dl.strides != nullptr ? dl.strides[i] : stride;
    // With a zero-size dimension the element count fits while the other
    // dimensions' product may not (found by fuzz/dlpack_fuzz.cpp).
    if (__builtin_mul_overflow(stride, dl.shape[i] > 0 ? dl.shape[i] : 1, &stride)) {
      return Error(BP_STATUS_OUT_OF_RANGE, std::string(fn) + ": the contiguous strides of a tensor of " +
                                               std::to_string(dl.ndim) + " dimensions overflow int64");
    }
  }
  auto* s = new Storage();
  context->live_storages.fetch_add(1, std::memory_order_relaxed);
  s->ctx = context;
  s->device = device;
  s->dev = dev;
  s->data = dl.data;
  if (!dev->slot->host_memory) {
    s->plugin = dev->slot->plugin;
    PluginRetain(s->plugin);
  }
  *out_storage = s;
  *out_geo = g;
  return Status::Ok();
}

// Wraps a storage ImportDl made in its first tensor.
bp_tensor_t* WrapImported(bp_context_t* context, Storage* s, const Geometry& g) {
  bp_tensor_t* t = WrapStorage(context, s, g);
  s->refs.fetch_sub(1, std::memory_order_relaxed);  // the tensor holds the only reference
  return t;
}

}  // namespace

extern "C" {

BP_API bp_status_t bp_tensor_from_dlpack(bp_context_t* context, DLManagedTensor* managed, bp_tensor_t** out_tensor) {
  return ApiCall("bp_tensor_from_dlpack", [&]() -> Status {
    const char* fn = "bp_tensor_from_dlpack";
    BP_CHECK_ARG(context != nullptr && managed != nullptr && out_tensor != nullptr, fn,
                 "context, managed and out_tensor must not be NULL");
    ReadSection rs;
    Storage* s = nullptr;
    Geometry g;
    BP_RETURN_IF_ERROR(ImportDl(context, managed->dl_tensor, fn, &s, &g));
    s->managed = managed;
    *out_tensor = WrapImported(context, s, g);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_to_dlpack(bp_tensor_t* tensor, DLManagedTensor** out_managed) {
  return ApiCall("bp_tensor_to_dlpack", [&]() -> Status {
    BP_CHECK_ARG(tensor != nullptr && out_managed != nullptr, "bp_tensor_to_dlpack",
                 "tensor and out_managed must not be NULL");
    auto* h = new ExportHolder<DLManagedTensor>();
    FillExport(tensor, h, &h->managed.dl_tensor);
    h->managed.manager_ctx = h;
    h->managed.deleter = ExportDeleter<DLManagedTensor>;
    *out_managed = &h->managed;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_from_dlpack_versioned(bp_context_t* context, DLManagedTensorVersioned* managed,
                                                   bp_tensor_t** out_tensor) {
  return ApiCall("bp_tensor_from_dlpack_versioned", [&]() -> Status {
    const char* fn = "bp_tensor_from_dlpack_versioned";
    BP_CHECK_ARG(context != nullptr && managed != nullptr && out_tensor != nullptr, fn,
                 "context, managed and out_tensor must not be NULL");
    // The stable prefix: only the version is read before it is known to be 1.x.
    if (managed->version.major != BP_DLPACK_VERSION_MAJOR) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   std::string(fn) + ": DLPack version " + std::to_string(managed->version.major) + "." +
                       std::to_string(managed->version.minor) + " is not supported (major version " +
                       std::to_string(BP_DLPACK_VERSION_MAJOR) + " expected)");
    }
    ReadSection rs;
    Storage* s = nullptr;
    Geometry g;
    BP_RETURN_IF_ERROR(ImportDl(context, managed->dl_tensor, fn, &s, &g));
    s->managed_versioned = managed;
    s->read_only = (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    *out_tensor = WrapImported(context, s, g);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_to_dlpack_versioned(bp_tensor_t* tensor, uint64_t flags,
                                                 DLManagedTensorVersioned** out_managed) {
  return ApiCall("bp_tensor_to_dlpack_versioned", [&]() -> Status {
    const char* fn = "bp_tensor_to_dlpack_versioned";
    BP_CHECK_ARG(tensor != nullptr && out_managed != nullptr, fn, "tensor and out_managed must not be NULL");
    const uint64_t known = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
    if ((flags & ~known) != 0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": flags 0x" + ToHex(flags) +
                                                   " has bits other than READ_ONLY (0x1) and IS_COPIED (0x2)");
    }
    // Memory Backplane never writes must not be written by the consumer either.
    const Storage* st = tensor->storage;
    if (st->read_only || st->constant_id.load(std::memory_order_relaxed) != 0) flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    auto* h = new ExportHolder<DLManagedTensorVersioned>();
    FillExport(tensor, h, &h->managed.dl_tensor);
    h->managed.version.major = BP_DLPACK_VERSION_MAJOR;
    h->managed.version.minor = BP_DLPACK_VERSION_MINOR;
    h->managed.flags = flags;
    h->managed.manager_ctx = h;
    h->managed.deleter = ExportDeleter<DLManagedTensorVersioned>;
    *out_managed = &h->managed;
    return Status::Ok();
  });
}

BP_API int32_t bp_tensor_is_read_only(const bp_tensor_t* tensor) {
  return tensor != nullptr && tensor->storage->read_only ? 1 : 0;
}

}  // extern "C"
