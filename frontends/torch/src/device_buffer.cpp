// The context of every DataPtr of PrivateUse1 memory the bridge makes: the
// Backplane tensor that owns the memory (an allocator block, or an operator's
// result taken over as is) and the last Backplane view made over it. Passing
// a torch tensor to Backplane then costs a reference count when its geometry
// is the owner's or the cached view's (an operator's result fed to the next
// operator, a parameter used every step), instead of a DLPack import per
// argument per call.
#include <mutex>

#include "bridge.h"

namespace bptorch {
namespace {

struct DeviceBuffer {
  bp_tensor_t* owner = nullptr;  // one reference; immutable for the buffer's life
  bool is_block = false;         // made by the allocator: record_stream applies to it
  std::mutex mu;                 // guards view
  bp_tensor_t* view = nullptr;   // one reference, or NULL
};

void ReleaseBuffer(void* ctx) {
  auto* b = static_cast<DeviceBuffer*>(ctx);
  if (b->view != nullptr) bp_tensor_release(b->view);
  bp_tensor_release(b->owner);
  delete b;
}

DeviceBuffer* BufferOf(const c10::DataPtr& data) {
  return data.get_deleter() == &ReleaseBuffer ? static_cast<DeviceBuffer*>(data.get_context()) : nullptr;
}

// Whether Backplane tensor `b` describes exactly t's elements (same storage
// assumed): dtype, sizes, strides and offset.
bool SameGeometry(const bp_tensor_t* b, const at::Tensor& t, DLDataType dtype) {
  const DLDataType d = bp_tensor_dtype(b);
  const int64_t ndim = t.dim();
  if (d.code != dtype.code || d.bits != dtype.bits || bp_tensor_ndim(b) != ndim ||
      bp_tensor_storage_offset(b) != t.storage_offset()) {
    return false;
  }
  const int64_t* sizes = bp_tensor_sizes(b);
  const int64_t* strides = bp_tensor_strides(b);
  for (int64_t i = 0; i < ndim; ++i) {
    if (sizes[i] != t.size(i) || strides[i] != t.stride(i)) return false;
  }
  return true;
}

}  // namespace

c10::DataPtr DeviceDataPtr(void* base, bp_tensor_t* owner, bool is_block, const c10::Device& device) {
  auto* b = new DeviceBuffer();
  b->owner = owner;
  b->is_block = is_block;
  return {base, b, &ReleaseBuffer, device};
}

bp_tensor_t* BlockOf(const c10::DataPtr& data) {
  DeviceBuffer* b = BufferOf(data);
  return b != nullptr && b->is_block ? b->owner : nullptr;
}

bp_tensor_t* OwnerOf(const c10::DataPtr& data) {
  DeviceBuffer* b = BufferOf(data);
  return b != nullptr ? b->owner : nullptr;
}

bp_tensor_t* CachedView(const at::Tensor& t, DLDataType dtype) {
  DeviceBuffer* b = BufferOf(t.storage().data_ptr());
  if (b == nullptr) return nullptr;
  if (SameGeometry(b->owner, t, dtype)) {
    bp_tensor_retain(b->owner);
    return b->owner;
  }
  const std::lock_guard<std::mutex> lock(b->mu);
  if (b->view == nullptr || !SameGeometry(b->view, t, dtype)) return nullptr;
  bp_tensor_retain(b->view);
  return b->view;
}

void RememberView(const at::Tensor& t, bp_tensor_t* view) {
  DeviceBuffer* b = BufferOf(t.storage().data_ptr());
  if (b == nullptr) return;
  bp_tensor_retain(view);
  bp_tensor_t* old = nullptr;
  {
    const std::lock_guard<std::mutex> lock(b->mu);
    old = b->view;
    b->view = view;
  }
  if (old != nullptr) bp_tensor_release(old);
}

}  // namespace bptorch
