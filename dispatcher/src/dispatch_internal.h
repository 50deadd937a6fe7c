// Internals of the operator call path shared by dispatch*.cpp: the bound
// arguments of one call (all on the stack) and the core's own operations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch.h"

namespace bp::core::detail {

// Tensors created during a call, released when it ends.
struct Temps {
  bp_tensor_t* items[3 * kMaxArgs];
  int n = 0;
  std::vector<bp_tensor_t*> more;
  void add(bp_tensor_t* t) {
    if (n < 3 * kMaxArgs) items[n++] = t; else more.push_back(t);
  }
  ~Temps() {
    for (int i = 0; i < n; ++i) TensorRelease(items[i]);
    for (bp_tensor_t* t : more) TensorRelease(t);
  }
};

// A tensor-list argument, bound.
struct ListArg {
  std::vector<bp_tensor_t*> tensors;
  std::vector<Geometry> geos;
  std::vector<const Geometry*> ptrs;
  std::vector<DLTensor> dl;
  std::vector<const DLTensor*> dl_ptrs;
};

// Storage for T that is not value-initialized: the call path fills only the
// entries it uses (zeroing every Geometry of a call would cost more than the
// rest of the dispatch). T must be trivially copyable and destructible.
template <typename T>
union Uninit {
  Uninit() {}
  T value;
};

// Everything a call binds, on the stack. Only entries of tensor arguments are
// written into geos.
struct Bound {
  Bound() {}
  union {
    MetaArg margs[kMaxArgs];  // BindArgs writes the op's num_args entries
  };
  union {
    Geometry geos[kMaxArgs];
  };
  bp_tensor_t* tensors[kMaxArgs] = {};
  int64_t ints[kMaxArgs][BP_MAX_NDIM];
  std::vector<ListArg>* lists = nullptr;  // only when the op takes Tensor[]
  int list_index[kMaxArgs];
};


// Applies `fn` to every bound tensor: fn(arg index, list element or -1, tensor*&, geometry&).
template <typename F>
void ForEachTensor(const bp_op_t* op, Bound& b, std::vector<ListArg>& lists, F&& fn) {
  for (int32_t i = 0; i < op->num_args; ++i) {
    if (b.margs[i].kind == BP_VALUE_TENSOR) {
      fn(i, -1, b.tensors[i], b.geos[i]);
    } else if (b.margs[i].kind == BP_VALUE_TENSOR_LIST) {
      ListArg& l = lists[b.list_index[i]];
      for (size_t j = 0; j < l.tensors.size(); ++j) fn(i, static_cast<int>(j), l.tensors[j], l.geos[j]);
    }
  }
}


inline bool SameDevice(bp_device_t a, bp_device_t b) { return a.backend == b.backend && a.index == b.index; }

// The dispatch key of a call, offered its tensors one by one (the bound
// ones in CallOp, a signature's in PreparePlan): the device of the first
// tensor with dims; without one, a 0-dim tensor off the host; else the first.
struct KeyChooser {
  explicit KeyChooser(int32_t host_backend) : host(host_backend), key{host_backend, 0} {}
  void Offer(int32_t i, bp_device_t d, bool dims) {
    if (!any || (dims && !has_dims) || (!has_dims && !dims && key.backend == host && d.backend != host)) {
      key = d;
      key_arg = i;
      has_dims = dims;
      any = true;
    }
  }
  // OK when argument i (a tensor on `d` of rank `ndim`) is on the key's
  // device, or joins it as a 0-dim host tensor (*joins set); else the error
  // naming both devices.
  Status Check(bp_context_t* ctx, const bp_op_t* op, int32_t i, bp_device_t d, int32_t ndim,
               bool* joins = nullptr) const;

  int32_t host;
  bp_device_t key;
  int32_t key_arg = -1;
  bool any = false, has_dims = false;
};
// Whether the memory of `in` can be placed relative to that of `out` (the
// overlap checks compare memory ranges, not storage identity: the torch
// bridge and two DLPack imports of one buffer give views of one memory
// storages of their own). *shift: the byte distance from out's storage base
// to in's. One storage or one base pointer on one device always compare;
// different bases only where the device's pointers are addresses (host
// memory, CUDA/ROCm/oneAPI), not handles (a cl_mem: device pointers are
// opaque to the core, backend.h).
inline bool SameMemory(const bp_tensor_t* out, const bp_tensor_t* in, int64_t* shift) {
  const Storage* a = out->storage;
  const Storage* b = in->storage;
  *shift = 0;
  if (a == b) return true;
  if (a->device.backend != b->device.backend || a->device.index != b->device.index) return false;
  if (a->data == b->data) return true;
  if (a->data == nullptr || b->data == nullptr) return false;
  const BackendSlot* slot = a->dev->slot;
  bool addresses = slot->host_memory;
  switch (slot->device_type) {
    case kDLCPU:
    case kDLCUDA:
    case kDLCUDAHost:
    case kDLCUDAManaged:
    case kDLROCM:
    case kDLROCMHost:
      addresses = true;
      break;
    default:
      break;
  }
  if (!addresses) return false;
  *shift = static_cast<int64_t>(reinterpret_cast<uintptr_t>(b->data) - reinterpret_cast<uintptr_t>(a->data));
  return true;
}

// Whether `out` may share a byte with `in` (the bytes each can touch, from
// offset, sizes and strides): the core then writes `out` through a temporary.
inline bool Overlaps(const bp_tensor_t* out, const bp_tensor_t* in) {
  int64_t shift = 0;
  if (!SameMemory(out, in, &shift)) return false;
  if (out->storage == in->storage) return true;  // as before: any two views of one storage
  int64_t ob = 0, oe = 0, ib = 0, ie = 0;
  if (!TouchedBytes(out->geo, &ob, &oe) || !TouchedBytes(in->geo, &ib, &ie)) return false;
  return ob < ie + shift && ib + shift < oe;
}

// The meta function's plan for the bound arguments: validation, output
// sizes and dtypes, casts; *dtypes the compute dtypes (DtypeBit() of each
// tensor argument's dtype after the casts, for DecideRoute).
// `plan` need not be initialized.
Status InferPlan(const bp_op_t* op, Bound& b, MetaPlan* plan, uint32_t* dtypes);
// Binds boxed arguments to the schema (defaults filled, kinds checked).
Status BindArgs(const bp_op_t* op, const bp_value_t* args, int32_t num_args, Bound& b,
                std::vector<ListArg>& lists);
// "add.Tensor takes float32, ..." lists.
std::string DtypeList(uint32_t mask);
std::string DeviceText(bp_context_t* ctx, bp_device_t d);
Status NewLike(bp_context_t* ctx, bp_device_t device, const Geometry& g, DLDataType dtype, const char* fn,
               bp_tensor_t** out);
// A fresh operator output of the meta plan's geometry `g`: channels-last
// when the meta function chose it (Geometry::is_channels_last), else contiguous.
Status NewOutput(bp_context_t* ctx, bp_device_t device, const Geometry& g, const char* fn, bp_tensor_t** out);
// Views, composites and custom operators: done by the core.
Status RunView(bp_context_t* ctx, const bp_op_t* op, Bound& b, bp_tensor_t** result);
Status RunComposite(bp_context_t* ctx, const bp_op_t* op, Bound& b, bp_tensor_t** result);
// Custom operators run their own meta function, then the route's kernel;
// *to_host as ExecuteRoute's.
Status RunCustom(bp_context_t* ctx, const bp_op_t* op, Bound& b, std::vector<ListArg>& lists, DeviceState* dev,
                 const Route& route, bp_tensor_t** results, bool* to_host);
// Builds kernel arguments from bound meta arguments and DLTensors.
void BuildKernelArgs(int32_t n, const MetaArg* margs, DLTensor* dl, std::vector<ListArg>& lists, const Bound& b,
                     bp_kernel_arg_t* kargs);

}  // namespace bp::core::detail
