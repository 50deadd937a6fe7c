// torch's CPU fallback for every ATen operator PrivateUse1 has no kernel for,
// counted per operator (backplane.torch.stats()). Three ways to run it:
// - a device whose memory the host can address (BP_DEVICE_CAP_UNIFIED, e.g.
//   the cpu backend): the arguments are CPU tensors over the same memory, so
//   inputs are not copied and in-place and out= results are written where
//   they live; new results are copied to device memory, or on the cpu
//   backend taken over as they are;
// - operators that change a Tensor[] in place (the _foreach_ ops of
//   foreach=True optimizers): host copies, written back (1.13's cpu_fallback
//   writes back Tensor arguments only and would lose the update);
// - everything else: torch 1.13's at::native::cpu_fallback (copies both ways).
#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <utility>
#include <vector>

#include "bridge.h"

namespace bptorch {
namespace {

// Calls fn on every defined tensor of an argument (Tensor, Tensor?, Tensor[],
// Tensor?[]); returns the argument with each tensor replaced by fn's result.
template <typename Fn>
c10::IValue MapTensors(const c10::IValue& v, Fn fn) {
  if (v.isTensor()) return v.toTensor().defined() ? c10::IValue(fn(v.toTensor())) : v;
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorVector()) out.push_back(t.defined() ? fn(t) : t);
    return c10::IValue(out);
  }
  if (v.isList()) {  // Tensor?[] is a generic list of tensors and Nones
    const auto& elems = v.toListRef();
    bool optional_tensors = true;
    for (const c10::IValue& e : elems) optional_tensors = optional_tensors && (e.isTensor() || e.isNone());
    if (!optional_tensors || elems.empty()) return v;
    c10::List<c10::optional<at::Tensor>> out;
    for (const c10::IValue& e : elems) {
      const bool defined = e.isTensor() && e.toTensor().defined();
      out.push_back(defined ? c10::optional<at::Tensor>(fn(e.toTensor())) : c10::optional<at::Tensor>());
    }
    return c10::IValue(out);
  }
  return v;
}

bool AnyTensor(const c10::IValue& v, bool (*pred)(const at::Tensor&)) {
  bool any = false;
  MapTensors(v, [&](const at::Tensor& t) {
    any = any || pred(t);
    return t;
  });
  return any;
}

bool NotHostAddressable(const at::Tensor& t) { return !HostAddressable(t); }

// A new host result as a privateuseone tensor. Where device memory is host
// memory handed to Backplane as kDLCPU (the cpu backend) it is adopted as is;
// elsewhere (a unified device's memory is its own arena) it is copied in.
at::Tensor ToDevice(const at::Tensor& host, c10::Device device) {
  if (SlotOf(device.index()).dl_device_type != kDLCPU || !host.device().is_cpu()) return host.to(device);
  auto* keep = new c10::Storage(host.storage());
  c10::DataPtr data(
      keep->mutable_data(), keep, [](void* c) { delete static_cast<c10::Storage*>(c); }, device);
  c10::Storage storage(c10::Storage::use_byte_size_t(), keep->nbytes(), std::move(data), DeviceAllocator(),
                       /*resizable=*/true);
  at::Tensor out = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), host.dtype());
  out.unsafeGetTensorImpl()->set_sizes_and_strides(host.sizes(), host.strides(), host.storage_offset());
  return out;
}

// HostAlias for one call's arguments, with the views of one device storage
// sharing one CPU storage (over the whole device storage, in `made`): torch's
// own overlap checks (MemOverlap.cpp compares storages) then see that
// x[1:] and x[:-1] share memory and raise as on the CPU, where aliases with
// storages of their own would let the kernel write order-dependent values.
at::Tensor SharedHostAlias(const at::Tensor& t, std::vector<std::pair<c10::StorageImpl*, c10::Storage>>* made) {
  if (!OnDevice(t) || t.numel() == 0) return HostAlias(t);
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  const c10::Storage* host = nullptr;
  for (const auto& m : *made) {
    if (m.first == impl) host = &m.second;
  }
  if (host == nullptr) {
    auto* keep = new c10::Storage(t.storage());
    c10::DataPtr data(
        keep->mutable_data(), keep, [](void* c) { delete static_cast<c10::Storage*>(c); }, at::Device(at::kCPU));
    // Resizable, as HostAlias: a CPU kernel may grow an out= argument.
    made->emplace_back(impl, c10::Storage(c10::Storage::use_byte_size_t(), keep->nbytes(), std::move(data),
                                          c10::GetAllocator(c10::DeviceType::CPU), /*resizable=*/true));
    host = &made->back().second;
  }
  at::Tensor out = at::empty({0}, t.options().device(at::kCPU));
  out.set_(*host, t.storage_offset(), t.sizes(), t.strides());
  return out;
}

void HostAddressableFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t n = schema.arguments().size();
  auto args = torch::jit::last(*stack, n);
  c10::optional<c10::Device> device;
  for (const c10::IValue& v : args) {
    MapTensors(v, [&](const at::Tensor& t) {
      if (OnDevice(t) && !device.has_value()) device = t.device();
      return t;
    });
  }
  // An asynchronous device may still be writing what the host is about to read.
  Check(bp_device_synchronize(Get().ctx, DeviceOf(*device)), c10::toString(op.operator_name()));
  torch::jit::Stack host;
  std::vector<std::pair<c10::StorageImpl*, c10::Storage>> shared;  // the call's host storages
  for (const c10::IValue& v : args) {
    host.push_back(MapTensors(v, [&](const at::Tensor& t) { return SharedHostAlias(t, &shared); }));
  }
  const std::vector<c10::IValue> aliases(host.begin(), host.end());
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &host);
  // An out= argument the CPU kernel resized now owns new host memory: the
  // device tensor is resized to match and the result copied into it.
  for (size_t i = 0; i < n; ++i) {
    if (!WritesAlias(schema.arguments()[i]) || !args[i].isTensor() || !OnDevice(args[i].toTensor())) continue;
    const at::Tensor& alias = aliases[i].toTensor();
    const at::Tensor& dev = args[i].toTensor();
    if (alias.sizes() != dev.sizes() || (alias.numel() > 0 && alias.data_ptr() != HostAlias(dev).data_ptr())) {
      dev.resize_(alias.sizes());
      dev.copy_(alias);
    }
  }
  // In-place and out= results were written through the aliases: return the
  // arguments themselves. New results are copied into device memory.
  std::vector<c10::IValue> outs;
  for (size_t r = 0; r < host.size(); ++r) {
    const int written = r < schema.returns().size() ? WrittenArgument(schema, schema.returns()[r]) : -1;
    if (written >= 0) {
      outs.push_back(args[written]);
    } else {
      outs.push_back(MapTensors(host[r], [&](const at::Tensor& t) { return ToDevice(t, *device); }));
    }
  }
  torch::jit::drop(*stack, n);
  for (c10::IValue& v : outs) stack->push_back(std::move(v));
}

// The copying fallbacks copy each argument to the host on its own, where
// torch's CPU kernel cannot see that two views of one device storage share
// memory: a written argument partly overlapping another argument raises
// torch's own error here, as the CPU kernel would on CPU tensors
// (MemoryOverlap.h: the exact alias and views too hard to compare pass).
void CheckWrittenOverlap(const c10::OperatorHandle& op, c10::ArrayRef<c10::IValue> args) {
  const c10::FunctionSchema& schema = op.schema();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!WritesAlias(schema.arguments()[i]) || !args[i].isTensor() || !OnDevice(args[i].toTensor())) continue;
    const at::Tensor& out = args[i].toTensor();
    for (size_t j = 0; j < args.size(); ++j) {
      if (j == i) continue;
      MapTensors(args[j], [&](const at::Tensor& in) {
        if (OnDevice(in)) at::assert_no_partial_overlap(out, in);
        return in;
      });
    }
  }
}

bool MutatesTensorList(const c10::FunctionSchema& schema) {
  for (const c10::Argument& a : schema.arguments()) {
    if (WritesAlias(a) && a.type()->kind() == c10::TypeKind::ListType) return true;
  }
  return false;
}

// 1.13's cpu_fallback copies back mutated Tensor arguments but not mutated
// Tensor[] ones (the in-place _foreach_ ops of optimizers with foreach=True),
// whose updates would be lost: those run here on host copies, written back.
void ListMutatingFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t n = schema.arguments().size();
  auto args = torch::jit::last(*stack, n);
  const auto to_host = [](const at::Tensor& t) { return t.cpu(); };
  std::vector<c10::IValue> host;
  for (const c10::IValue& v : args) host.push_back(MapTensors(v, to_host));
  torch::jit::Stack host_stack(host.begin(), host.end());
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &host_stack);
  for (size_t i = 0; i < n; ++i) {
    if (!WritesAlias(schema.arguments()[i])) continue;
    if (args[i].isTensor()) {
      args[i].toTensor().copy_(host[i].toTensor());
    } else if (args[i].isTensorList()) {
      const std::vector<at::Tensor> dst = args[i].toTensorVector();
      const std::vector<at::Tensor> src = host[i].toTensorVector();
      for (size_t k = 0; k < dst.size(); ++k) dst[k].copy_(src[k]);
    }
  }
  const c10::Device device = args[0].isTensor() ? args[0].toTensor().device() : args[0].toTensorVector().at(0).device();
  std::vector<c10::IValue> outs;
  for (const c10::IValue& v : host_stack)
    outs.push_back(MapTensors(v, [&](const at::Tensor& t) { return t.to(device); }));
  torch::jit::drop(*stack, n);
  for (c10::IValue& v : outs) stack->push_back(std::move(v));
}

// Random operators: a Generator? argument becomes the CPU generator the
// device's generator wraps (hooks.cpp), so CPU kernels accept it and draw
// from the device's own, seedable state.
void UseDeviceGenerators(const c10::OperatorHandle& op, torch::jit::Stack* stack, c10::DeviceIndex device) {
  const auto& schema_args = op.schema().arguments();
  const size_t n = schema_args.size();
  for (size_t i = 0; i < n; ++i) {
    const c10::TypePtr& type = schema_args[i].real_type();
    const bool is_gen = type->kind() == c10::TypeKind::GeneratorType ||
                        (type->kind() == c10::TypeKind::OptionalType &&
                         type->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType);
    if (!is_gen) continue;
    c10::IValue& v = (*stack)[stack->size() - n + i];
    const c10::optional<at::Generator> gen = v.isNone() ? c10::nullopt : c10::optional<at::Generator>(v.toGenerator());
    v = c10::IValue(CpuGeneratorOf(gen, device));
  }
}

// torch's own CPU fallback, counted: the operator ran on the host through
// copies. Registered explicitly for operators whose composite kernel would
// otherwise win over the boxed fallback.
void RunTorchCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const TorchFallbackScope scope(c10::toString(op.operator_name()));
  bool host_addressable = true, on_device = false;
  c10::DeviceIndex device = -1;
  for (const c10::IValue& v : torch::jit::last(*stack, op.schema().arguments().size())) {
    host_addressable = host_addressable && !AnyTensor(v, &NotHostAddressable);
    MapTensors(v, [&](const at::Tensor& t) {
      if (OnDevice(t) && device < 0) device = t.device().index();
      return t;
    });
  }
  on_device = device >= 0;
  if (on_device) UseDeviceGenerators(op, stack, device);
  if (on_device && host_addressable) {
    HostAddressableFallback(op, stack);
  } else if (MutatesTensorList(op.schema())) {
    ListMutatingFallback(op, stack);
  } else {
    CheckWrittenOverlap(op, torch::jit::last(*stack, op.schema().arguments().size()));
    at::native::cpu_fallback(op, stack);
  }
}

}  // namespace

void TorchCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) { RunTorchCpuFallback(op, stack); }

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&RunTorchCpuFallback>()); }

}  // namespace bptorch
