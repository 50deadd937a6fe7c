// The ATen operators PrivateUse1 must have natively, because torch 1.13's
// boxed CPU fallback gets them wrong: factories (would return CPU tensors),
// copies (_copy_from: infinite recursion without it), views (the fallback
// returns copies, so writes through a view would be lost), resize_ and set_
// (aliasing), .item(), convolution (its composite kernel hides the fallback)
// and index.Tensor (the fallback does not move Tensor?[] arguments).
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <utility>
#include <vector>

#include "bridge.h"

namespace bptorch {
namespace {

const c10::DispatchKeySet kKeys(c10::DispatchKey::PrivateUse1);

c10::Device TargetDevice(c10::optional<at::Device> device) {
  return device.has_value() ? *device : c10::Device(c10::DeviceType::PrivateUse1, CurrentDevice());
}

at::Tensor Empty(c10::SymIntArrayRef size, c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                 c10::optional<at::Device> device, c10::optional<bool> pin_memory,
                 c10::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(!layout.has_value() || *layout == at::kStrided, "empty: privateuseone supports only strided tensors");
  TORCH_CHECK(!pin_memory.value_or(false), "empty: pin_memory applies to CPU tensors only");
  const c10::Device d = TargetDevice(device);
  DeviceOf(d);  // checks the index
  const c10::DeviceGuard guard(d);
  return at::detail::empty_generic(C10_AS_INTARRAYREF_SLOW(size), DeviceAllocator(), kKeys,
                                   dtype.value_or(at::get_default_dtype_as_scalartype()), memory_format);
}

at::Tensor EmptyStrided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride, c10::optional<at::ScalarType> dtype,
                        c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                        c10::optional<bool> pin_memory) {
  TORCH_CHECK(!layout.has_value() || *layout == at::kStrided,
              "empty_strided: privateuseone supports only strided tensors");
  TORCH_CHECK(!pin_memory.value_or(false), "empty_strided: pin_memory applies to CPU tensors only");
  const c10::Device d = TargetDevice(device);
  DeviceOf(d);
  const c10::DeviceGuard guard(d);
  return at::detail::empty_strided_generic(C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride),
                                           DeviceAllocator(), kKeys,
                                           dtype.value_or(at::get_default_dtype_as_scalartype()));
}

// Any copy with a privateuseone side: both wrapped zero-copy, then
// Backplane's copy_ (strided, dtype-converting, host<->device and on the
// device), which the core routes and counts as transfers.
// non_blocking between pinned host memory (pin_memory()) and a contiguous
// device tensor of the same dtype: enqueued on the device's current stream,
// as CUDA does; the caller orders it with events or synchronize.
bool CopyAsync(const at::Tensor& src, const at::Tensor& dst) {
  const bool to_device = OnDevice(dst) && src.device().is_cpu();
  const at::Tensor& host = to_device ? src : dst;
  const at::Tensor& dev = to_device ? dst : src;
  if (!(to_device || (OnDevice(src) && dst.device().is_cpu()))) return false;
  if (src.scalar_type() != dst.scalar_type() || !host.is_contiguous() || !dev.is_contiguous() ||
      src.sizes() != dst.sizes() || !IsPinned(host.const_data_ptr())) {
    return false;
  }
  const size_t nbytes = static_cast<size_t>(dev.numel()) * dev.element_size();
  const c10::DeviceGuard guard(dev.device());
  bp_tensor_t* d = ToBackplane(dev, "_copy_from (non_blocking)", to_device ? "destination" : "source");
  const bp_status_t st = to_device ? bp_tensor_from_host_async(d, host.const_data_ptr(), nbytes)
                                   : bp_tensor_to_host_async(d, host.mutable_data_ptr(), nbytes);
  bp_tensor_release(d);
  Check(st, "_copy_from (non_blocking)");
  return true;
}

at::Tensor CopyFrom(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(self.sizes() == dst.sizes() || self.numel() == dst.numel(), "_copy_from: source shape ", self.sizes(),
              " does not match destination shape ", dst.sizes());
  if (dst.numel() == 0) return dst;
  at::Tensor src = self;
  if (src.sizes() != dst.sizes()) src = src.expand(dst.sizes());
  const uint64_t bytes = static_cast<uint64_t>(dst.numel()) * dst.element_size();
  if (non_blocking && CopyAsync(src, dst)) {
    ChargeTransfer(bytes);
    return dst;
  }
  // Devices of two backends (backplane:0 -> backplane:1 across plugins):
  // through the host, as no backend addresses the other's memory.
  if (OnDevice(self) && OnDevice(dst) &&
      SlotOf(self.device().index()).device.backend != SlotOf(dst.device().index()).device.backend) {
    const at::Tensor host = at::empty(dst.sizes(), dst.options().device(at::kCPU));
    CopyFrom(src, host, false);
    return CopyFrom(host, dst, false);
  }
  if (HostAddressable(self) && HostAddressable(dst)) {
    // Both sides in host memory (the cpu backend, a unified device): torch's
    // CPU copy on aliases, after the device finished writing.
    for (const at::Tensor* t : {&self, &dst}) {
      if (OnDevice(*t)) Check(bp_device_synchronize(Get().ctx, DeviceOf(t->device())), "_copy_from");
    }
    // The conjugate and negative bits are metadata HostAlias drops: put them
    // back on the alias so torch's CPU copy resolves them.
    at::Tensor from = HostAlias(src);
    if (src.is_conj()) from = at::_conj(from);
    if (src.is_neg()) from = at::_neg_view(from);
    HostAlias(dst).copy_(from);
    if (self.device() != dst.device()) ChargeTransfer(bytes);
    return dst;
  }
  // Inside torch's CPU fallback, errors name the operator it was running.
  const std::string op = TorchFallbackOp();
  const std::string what = op.empty() ? "_copy_from" : op + ": copy for torch's CPU fallback";
  TORCH_CHECK(!src.is_conj() && !src.is_neg(), what, ": a conjugate or negative view cannot be copied to or from ",
              "device memory the host cannot address; call resolve_conj() / resolve_neg() on the host first");
  bp_tensor_t* d = ToBackplane(dst, what, "destination");
  bp_tensor_t* s = nullptr;
  try {
    s = ToBackplane(src, what, "source");
  } catch (...) {
    bp_tensor_release(d);
    throw;
  }
  static bp_op_t* copy = nullptr;
  if (copy == nullptr) Check(bp_op_find(Get().ctx, "copy_", &copy), "_copy_from");
  bp_value_t args[2]{};
  args[0].kind = BP_VALUE_TENSOR;
  args[0].u.tensor = d;
  args[1].kind = BP_VALUE_TENSOR;
  args[1].u.tensor = s;
  const bp_status_t st = bp_op_call(Get().ctx, copy, args, 2, nullptr, 0);
  bp_tensor_release(s);
  bp_tensor_release(d);
  Check(st, what);
  if (self.device() != dst.device()) ChargeTransfer(bytes);
  return dst;
}

at::Tensor CopyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return CopyFrom(self, dst, false);
}

void Grow(const at::Tensor& self, c10::StorageImpl* storage, size_t needed);

// Grows the storage through the device allocator, copying the old bytes on
// the device (ATen's CPU resize would memcpy device memory).
const at::Tensor& Resize(const at::Tensor& self, c10::SymIntArrayRef size_sym,
                         c10::optional<at::MemoryFormat> memory_format) {
  const at::IntArrayRef size = C10_AS_INTARRAYREF_SLOW(size_sym);
  int64_t numel = 1;
  for (const int64_t n : size) {
    TORCH_CHECK(n >= 0, "resize_: negative size ", n, " in ", size);
    numel *= n;
  }
  const size_t needed = numel == 0 ? 0 : static_cast<size_t>(self.storage_offset() + numel) * self.element_size();
  c10::StorageImpl* storage = self.storage().unsafeGetStorageImpl();
  if (needed > storage->nbytes()) Grow(self, storage, needed);  // before any change to self: it may throw
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  const auto format = memory_format.value_or(at::MemoryFormat::Contiguous);
  if (format != at::MemoryFormat::Preserve) impl->empty_tensor_restride(format);
  return self;
}

void Grow(const at::Tensor& self, c10::StorageImpl* storage, size_t needed) {
  TORCH_CHECK(storage->resizable(), "resize_: the tensor's storage cannot be resized");
  const c10::DeviceGuard guard(self.device());
  c10::DataPtr grown = DeviceAllocator()->allocate(needed);
  const size_t old_bytes = storage->nbytes();
  if (old_bytes > 0 && storage->data() != nullptr) {
    // Old contents copied byte for byte on the device, as uint8 views.
    c10::Storage fresh(c10::Storage::use_byte_size_t(), needed, std::move(grown), DeviceAllocator(), true);
    at::Tensor from = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(self.storage()), kKeys,
                                                               caffe2::TypeMeta::Make<uint8_t>());
    from.unsafeGetTensorImpl()->set_sizes_contiguous({static_cast<int64_t>(old_bytes)});
    at::Tensor to =
        at::detail::make_tensor<c10::TensorImpl>(c10::Storage(fresh), kKeys, caffe2::TypeMeta::Make<uint8_t>());
    to.unsafeGetTensorImpl()->set_sizes_contiguous({static_cast<int64_t>(old_bytes)});
    CopyFrom(from, to, false);
    grown = std::move(fresh.unsafeGetStorageImpl()->mutable_data_ptr());
  }
  storage->set_data_ptr_noswap(std::move(grown));
  storage->set_nbytes(needed);
}

// zero_ has no Backplane schema; as fill_ with 0 it runs where fill_.Scalar
// does (the plugin, else Backplane's fallback) instead of in torch's CPU
// fallback with a copy each way (optimizers call it for every gradient).
// A dtype Backplane lacks still goes to torch's fallback.
at::Tensor& Zero(at::Tensor& self) {
  DLDataType unused;
  if (TryDTypeOf(self.scalar_type(), &unused)) return self.fill_(0);
  static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::zero_", "");
  torch::jit::Stack stack{self};
  TorchCpuFallback(op, &stack);
  return self;
}

at::Scalar LocalScalarDense(const at::Tensor& self) { return at::_local_scalar_dense(self.cpu()); }

at::Tensor AsStrided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                     c10::optional<c10::SymInt> offset) {
  c10::optional<int64_t> off;
  if (offset.has_value()) off = offset->expect_int();
  return at::native::as_strided_tensorimpl(self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride), off);
}

at::Tensor View(const at::Tensor& self, c10::SymIntArrayRef size) {
  return at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
}

at::Tensor ReshapeAlias(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  return at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride));
}

at::Tensor& SetStorage(at::Tensor& self, at::Storage source, c10::SymInt offset, c10::SymIntArrayRef size,
                       c10::SymIntArrayRef stride) {
  TORCH_CHECK(source.device() == self.device(), "set_: the storage is on ", source.device(), ", the tensor on ",
              self.device());
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  const at::IntArrayRef sz = C10_AS_INTARRAYREF_SLOW(size);
  const at::IntArrayRef st = C10_AS_INTARRAYREF_SLOW(stride);
  if (st.empty()) {
    impl->set_sizes_contiguous(sz);
  } else {
    impl->set_sizes_and_strides(sz, st);
  }
  impl->set_storage_offset(offset.expect_int());
  return self;
}

at::Tensor& SetSourceStorage(at::Tensor& self, at::Storage source) {
  const int64_t n = static_cast<int64_t>(source.nbytes()) / static_cast<int64_t>(self.element_size());
  const c10::SymInt sizes[1] = {c10::SymInt(n)};
  return SetStorage(self, std::move(source), c10::SymInt(0), c10::SymIntArrayRef(sizes, 1), {});
}

at::Tensor& SetSourceTensor(at::Tensor& self, const at::Tensor& source) {
  if (!self.is_same(source)) {
    SetStorage(self, source.storage(), c10::SymInt(source.storage_offset()), source.sym_sizes(), source.sym_strides());
  }
  return self;
}

// torch's own CPU fallback, counted: the operator ran on the host through
// copies. Registered explicitly for operators whose composite kernel would
// otherwise win over the boxed fallback.
// index.Tensor with device indices: 1.13's fallback moves only plain Tensor
// arguments, so everything is moved here.
at::Tensor IndexTensor(const at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices) {
  const TorchFallbackScope scope("aten::index.Tensor");
  c10::List<c10::optional<at::Tensor>> host;
  for (const c10::optional<at::Tensor>& i : indices) {
    host.push_back(i.has_value() && i->defined() ? c10::optional<at::Tensor>(i->cpu()) : i);
  }
  const at::Tensor out = at::index(self.cpu(), host).to(self.device());
  return out;
}

// Tensor.record_stream: the block is reused only after `s` passed the work
// queued on it so far (Backplane's caching allocator, as CUDA's).
void RecordStream(at::Tensor& self, c10::Stream s) {
  TORCH_CHECK(s.device() == self.device(), "record_stream: the stream is on ", s.device(), ", the tensor on ",
              self.device());
  if (bp_tensor_t* block = BlockOf(self.storage().data_ptr())) {
    Check(bp_tensor_record_stream(block, StreamHandle(s)), "record_stream");
  }
}

}  // namespace

// PrivateUse1HooksInterface::resizePrivateUse1Bytes (storage.resize_()).
void ResizeStorageBytes(const c10::Storage& storage, size_t nbytes) {
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  if (nbytes > impl->nbytes()) {
    at::Tensor owner = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(storage), kKeys,
                                                                caffe2::TypeMeta::Make<uint8_t>());
    Grow(owner, impl, nbytes);
  } else {
    impl->set_nbytes(nbytes);
  }
}

// _copy_from resolves conjugate and negative views itself (above): torch's
// math-bit fallbacks would clone the source on the device through
// _copy_from again, recursing until the stack overflows (torch.fft on the
// device, issue 42 item 6).
TORCH_LIBRARY_IMPL(aten, Conjugate, m) { m.impl("_copy_from", torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(aten, Negative, m) { m.impl("_copy_from", torch::CppFunction::makeFallthrough()); }

// The bridge's own PrivateUse1 kernels (not torch's CPU fallback): the
// compile backend lowers these nodes as the eager bridge runs them.
namespace {
std::vector<std::string>& NativeNames() {
  static std::vector<std::string> names;
  return names;
}

template <class Fn>
void Native(torch::Library& m, const char* name, Fn&& fn) {
  NativeNames().emplace_back(name);
  m.impl(name, std::forward<Fn>(fn));
}

}  // namespace

const std::vector<std::string>& NativeOps() { return NativeNames(); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  Native(m, "empty.memory_format", TORCH_FN(Empty));
  Native(m, "empty_strided", TORCH_FN(EmptyStrided));
  Native(m, "_copy_from", TORCH_FN(CopyFrom));
  Native(m, "_copy_from_and_resize", TORCH_FN(CopyFromAndResize));
  Native(m, "resize_", TORCH_FN(Resize));
  Native(m, "_local_scalar_dense", TORCH_FN(LocalScalarDense));
  Native(m, "zero_", TORCH_FN(Zero));
  Native(m, "as_strided", TORCH_FN(AsStrided));
  Native(m, "view", TORCH_FN(View));
  Native(m, "_reshape_alias", TORCH_FN(ReshapeAlias));
  Native(m, "unfold", TORCH_FN(at::native::unfold));
  Native(m, "set_.source_Storage_storage_offset", TORCH_FN(SetStorage));
  Native(m, "set_.source_Storage", TORCH_FN(SetSourceStorage));
  Native(m, "set_.source_Tensor", TORCH_FN(SetSourceTensor));
  Native(m, "index.Tensor", TORCH_FN(IndexTensor));
  Native(m, "record_stream", TORCH_FN(RecordStream));
  m.impl("convolution", torch::CppFunction::makeFromBoxedFunction<&TorchCpuFallback>());
  m.impl("convolution_backward", torch::CppFunction::makeFromBoxedFunction<&TorchCpuFallback>());
}

}  // namespace bptorch
