// torch tensors as Backplane tensors and back, zero-copy through DLPack
// structs.

#include <memory>
#include <vector>

#include "bridge.h"

namespace bptorch {

bool TryDTypeOf(at::ScalarType s, DLDataType* out) {
  switch (s) {
    case at::kFloat:
      *out = {kDLFloat, 32, 1};
      return true;
    case at::kDouble:
      *out = {kDLFloat, 64, 1};
      return true;
    case at::kHalf:
      *out = {kDLFloat, 16, 1};
      return true;
    case at::kBFloat16:
      *out = {kDLBfloat, 16, 1};
      return true;
    case at::kInt:
      *out = {kDLInt, 32, 1};
      return true;
    case at::kLong:
      *out = {kDLInt, 64, 1};
      return true;
    case at::kChar:
      *out = {kDLInt, 8, 1};
      return true;
    case at::kByte:
      *out = {kDLUInt, 8, 1};
      return true;
    case at::kBool:
      *out = {BP_DTYPE_CODE_BOOL, 8, 1};
      return true;
    // int16 too: Backplane's dtype set has none (bp_tensor_from_dlpack refuses
    // it), so operators on int16 tensors take torch's CPU fallback, as complex.
    default:
      return false;
  }
}

DLDataType DTypeOf(at::ScalarType s, const std::string& what) {
  DLDataType d{};
  TORCH_CHECK(TryDTypeOf(s, &d), what, ": dtype ", c10::toString(s), " has no Backplane equivalent");
  return d;
}

namespace {

// DTypeOf's inverse (torch 1.13's toScalarType has no bool code).
at::ScalarType ScalarTypeOf(DLDataType d, const std::string& what) {
  for (at::ScalarType s :
       {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kInt, at::kLong, at::kChar, at::kByte, at::kBool}) {
    DLDataType m{};
    if (TryDTypeOf(s, &m) && m.code == d.code && m.bits == d.bits) return s;
  }
  TORCH_CHECK(false, what, ": Backplane returned a dtype torch has no type for (code ", int(d.code), ", bits ",
              int(d.bits), ")");
}

// What a wrapped torch tensor's DLManagedTensor owns: a reference on the
// memory (the torch storage's, or for device memory the Backplane tensor
// that owns it: a view cached in the storage must not keep the storage
// alive) and the shape arrays the DLTensor points at.
struct Wrapped {
  DLManagedTensor managed{};
  c10::Storage storage;
  bp_tensor_t* owner = nullptr;
  c10::SmallVector<int64_t, 6> shape, strides;
  ~Wrapped() {
    if (owner != nullptr) bp_tensor_release(owner);
  }
};

void DeleteWrapped(DLManagedTensor* m) { delete static_cast<Wrapped*>(m->manager_ctx); }

void DeleteExported(void* ctx) {
  auto* m = static_cast<DLManagedTensor*>(ctx);
  if (m->deleter != nullptr) m->deleter(m);
}

}  // namespace

bp_tensor_t* ToBackplane(const at::Tensor& t, const std::string& op, const char* arg) {
  // Messages are composed only on error: this runs for every tensor argument.
  auto what = [&] { return op + (arg != nullptr ? std::string(" (argument '") + arg + "')" : std::string()); };
  TORCH_CHECK(t.defined(), what(), ": an undefined tensor cannot be passed to Backplane");
  TORCH_CHECK(t.layout() == at::kStrided, what(), ": only strided tensors cross to Backplane, got ", t.layout());
  DLDataType dtype{};
  if (!TryDTypeOf(t.scalar_type(), &dtype)) DTypeOf(t.scalar_type(), what() + " on " + t.device().str());
  const bool on_device = OnDevice(t);
  if (on_device) {
    if (bp_tensor_t* cached = CachedView(t, dtype)) return cached;
  }
  auto w = std::make_unique<Wrapped>();
  bp_tensor_t* owner = on_device ? OwnerOf(t.storage().data_ptr()) : nullptr;
  if (owner != nullptr) {
    bp_tensor_retain(owner);
    w->owner = owner;
  } else {
    w->storage = t.storage();
  }
  w->shape.assign(t.sizes().begin(), t.sizes().end());
  w->strides.assign(t.strides().begin(), t.strides().end());
  DLTensor& d = w->managed.dl_tensor;
  // The storage's base plus a byte offset, never base + offset as one
  // pointer: a device's "pointer" may be a handle (an OpenCL buffer).
  d.data = t.storage().mutable_data();
  d.byte_offset = static_cast<uint64_t>(t.storage_offset()) * t.element_size();
  if (t.device().is_cpu()) {
    d.device = {kDLCPU, 0};
  } else {
    const DeviceSlot& slot = SlotOf(t.device().index());
    d.device = {static_cast<DLDeviceType>(slot.dl_device_type), slot.device.index};
  }
  d.ndim = static_cast<int32_t>(t.dim());
  d.dtype = dtype;
  d.shape = w->shape.data();
  d.strides = w->strides.data();
  w->managed.manager_ctx = w.get();
  w->managed.deleter = &DeleteWrapped;
  bp_tensor_t* out = nullptr;
  const bp_status_t st = bp_tensor_from_dlpack(Get().ctx, &w->managed, &out);
  if (st != BP_STATUS_OK) Check(st, what());
  w.release();  // the Backplane tensor owns it now
  if (owner != nullptr) RememberView(t, out);
  return out;
}

at::Tensor FromBackplane(bp_tensor_t* t, const std::string& what) {
  // A device behind PrivateUse1 means that device even when it is the CPU
  // backend's (its DLPack device is then kDLCPU); anything else is a host tensor.
  const int32_t index = IndexOf(bp_tensor_device(t));
  const bool on_host = index < 0;
  DLManagedTensor* m = nullptr;
  const bp_status_t st = bp_tensor_to_dlpack(t, &m);
  if (st != BP_STATUS_OK || on_host) bp_tensor_release(t);  // the export holds its own reference on the storage
  Check(st, what);
  const DLTensor& d = m->dl_tensor;
  const c10::SmallVector<int64_t, 6> sizes(d.shape, d.shape + d.ndim);
  c10::SmallVector<int64_t, 6> strides(d.ndim);
  int64_t extent = 1;  // elements from the first to one past the last
  bool empty = false;
  for (int32_t i = d.ndim - 1, running = 1; i >= 0; --i) {
    strides[i] = d.strides != nullptr ? d.strides[i] : running;
    running *= static_cast<int32_t>(d.shape[i]);
    if (d.shape[i] == 0) empty = true;
    extent += (d.shape[i] - 1) * strides[i];
  }
  at::ScalarType dtype;
  try {
    dtype = ScalarTypeOf(d.dtype, what);
  } catch (...) {
    DeleteExported(m);
    if (!on_host) bp_tensor_release(t);
    throw;
  }
  const int64_t itemsize = c10::elementSize(dtype);
  const int64_t offset_elems = static_cast<int64_t>(d.byte_offset) / itemsize;
  const size_t nbytes = static_cast<size_t>((offset_elems + (empty ? 0 : extent)) * itemsize);
  const at::Device device =
      on_host ? at::Device(at::kCPU)
              : at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(index));
  // Device memory: the result itself owns it (DeviceDataPtr), so passing
  // this tensor on to the next operator reuses it; the export only told
  // where the memory starts.
  c10::DataPtr data = on_host ? c10::DataPtr(d.data, m, &DeleteExported, device)
                              : DeviceDataPtr(d.data, t, /*is_block=*/false, device);
  if (!on_host) DeleteExported(m);
  c10::Storage storage(c10::Storage::use_byte_size_t(), nbytes, std::move(data), on_host ? nullptr : DeviceAllocator(),
                       /*resizable=*/!on_host);
  at::Tensor out = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(on_host ? c10::DispatchKey::CPU : c10::DispatchKey::PrivateUse1),
      c10::scalarTypeToTypeMeta(dtype));
  out.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides, offset_elems);
  return out;
}

bool OnDevice(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

bool HostAddressable(const at::Tensor& t) { return !OnDevice(t) || SlotOf(t.device().index()).unified; }

at::Tensor HostAlias(const at::Tensor& t) {
  if (!OnDevice(t)) return t;
  const auto options = t.options().device(at::kCPU);
  if (t.numel() == 0) return at::empty_strided(t.sizes(), t.strides(), options);
  c10::Storage keep = t.storage();
  void* data = static_cast<char*>(keep.mutable_data()) + t.storage_offset() * t.element_size();
  // Resizable: a CPU kernel may grow an out= argument (structured
  // TensorIterator ops such as mse_loss.out first size their out to the
  // elementwise shape, then reduce into it); the alias then moves to new host
  // memory, which HostAddressableFallback copies back into the device tensor.
  return at::for_blob(data, t.sizes())
      .strides(t.strides())
      .deleter([keep](void*) {})
      .options(options)
      .allocator(c10::GetAllocator(c10::DeviceType::CPU))  // what a resize takes new memory from
      .resizeable_storage()
      .make_tensor();
}

}  // namespace bptorch
