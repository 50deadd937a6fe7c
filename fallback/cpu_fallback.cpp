#include <cstring>
#include <string>
#include <vector>

#include "copy.h"
#include "dispatch.h"
#include "dtype.h"
#include "fallback.h"
#include "tensor.h"

namespace bp::core {
namespace {

Geometry GeometryOf(const DLTensor& dl, bp_device_t device) {
  Geometry g;
  g.dtype = dl.dtype;
  g.ndim = dl.ndim;
  g.device = device;
  size_t item = DtypeItemSize(DtypeFromDL(dl.dtype));
  g.offset = item != 0 ? static_cast<int64_t>(dl.byte_offset / item) : 0;
  for (int32_t i = 0; i < dl.ndim; ++i) {
    g.sizes[i] = dl.shape[i];
    g.strides[i] = dl.strides[i];
  }
  return g;
}

// True when an output is an argument's view (in-place, copy_). Zero-size
// tensors may all have NULL data: they never alias.
bool SameView(const DLTensor& a, const DLTensor& b) {
  if (a.data == nullptr || a.data != b.data || a.byte_offset != b.byte_offset || a.ndim != b.ndim) return false;
  if (a.dtype.code != b.dtype.code || a.dtype.bits != b.dtype.bits) return false;
  return std::memcmp(a.shape, b.shape, sizeof(int64_t) * a.ndim) == 0 &&
         std::memcmp(a.strides, b.strides, sizeof(int64_t) * a.ndim) == 0;
}

// CPU copies of the call's tensors; released at scope end.
struct CpuCopies {
  std::vector<bp_tensor_t*> tensors;
  ~CpuCopies() {
    for (bp_tensor_t* t : tensors) TensorRelease(t);
  }
};

}  // namespace

Status CpuFallback(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, const bp_kernel_call_t& call) {
  const int32_t backend = dev->slot->id;
  const bp_op_t* f = op->functional;
  bp_op_t* counted = const_cast<bp_op_t*>(op);
  // One warning per kernel (functional op): its variants share it, and the message names it.
  if (!const_cast<bp_op_t*>(f)->fallback_warned[backend].exchange(true, std::memory_order_relaxed)) {
    LogMessage(ctx, BP_LOG_WARNING,
               "CPU fallback: " + f->name + " has no kernel on backend '" + dev->slot->name +
                   "'; running the CPU kernel with copies (reported once per operator and backend)");
  }
  const bp_device_t cpu{0, 0};
  const bp_device_t where{backend, dev->index};
  CpuCopies copies;

  // One CPU tensor per device tensor argument, holding its kernel view.
  auto to_cpu = [&](const DLTensor& dl, bp_tensor_t** out) -> Status {
    Geometry g = GeometryOf(dl, where);
    bp_tensor_t* t = nullptr;
    BP_RETURN_IF_ERROR(EmptyTensor(ctx, cpu, g.ndim, g.sizes, g.dtype, "cpu fallback", &t));
    copies.tensors.push_back(t);
    BP_RETURN_IF_ERROR(ReadView(dev, dl.data, g, g.dtype, t->storage->data));
    *out = t;
    return Status::Ok();
  };

  const int32_t n = call.num_args;
  std::vector<bp_kernel_arg_t> args(call.args, call.args + n);
  std::vector<DLTensor> dl_args(n);
  std::vector<bp_tensor_t*> cpu_args(n, nullptr);
  std::vector<std::vector<DLTensor>> list_dl(n);
  std::vector<std::vector<const DLTensor*>> list_ptrs(n);
  for (int32_t i = 0; i < n; ++i) {
    if (args[i].kind == BP_VALUE_TENSOR) {
      BP_RETURN_IF_ERROR(to_cpu(*call.args[i].u.tensor, &cpu_args[i]));
      FillDLTensor(cpu_args[i]->storage, cpu_args[i]->geo, &dl_args[i]);
      args[i].u.tensor = &dl_args[i];
    } else if (args[i].kind == BP_VALUE_TENSOR_LIST) {
      int64_t m = call.args[i].u.tensor_list.size;
      list_dl[i].resize(m);
      list_ptrs[i].resize(m);
      for (int64_t j = 0; j < m; ++j) {
        bp_tensor_t* t = nullptr;
        BP_RETURN_IF_ERROR(to_cpu(*call.args[i].u.tensor_list.data[j], &t));
        FillDLTensor(t->storage, t->geo, &list_dl[i][j]);
        list_ptrs[i][j] = &list_dl[i][j];
      }
      args[i].u.tensor_list.data = list_ptrs[i].data();
    }
  }
  // Outputs: an output that is an argument's view (in-place, copy_) shares
  // that argument's CPU copy; others get fresh CPU tensors.
  const int32_t nout = call.num_outputs;
  std::vector<DLTensor> dl_out(nout);
  std::vector<DLTensor*> out_ptrs(nout);
  std::vector<bp_tensor_t*> cpu_out(nout, nullptr);
  for (int32_t k = 0; k < nout; ++k) {
    const DLTensor& o = *call.outputs[k];
    for (int32_t i = 0; i < n && cpu_out[k] == nullptr; ++i) {
      if (call.args[i].kind == BP_VALUE_TENSOR && SameView(o, *call.args[i].u.tensor)) cpu_out[k] = cpu_args[i];
    }
    if (cpu_out[k] == nullptr) {
      Geometry g = GeometryOf(o, where);
      BP_RETURN_IF_ERROR(EmptyTensor(ctx, cpu, g.ndim, g.sizes, g.dtype, "cpu fallback", &cpu_out[k]));
      copies.tensors.push_back(cpu_out[k]);
    }
    FillDLTensor(cpu_out[k]->storage, cpu_out[k]->geo, &dl_out[k]);
    out_ptrs[k] = &dl_out[k];
  }

  const KernelEntry& k = KernelFor(op, 0);
  if (k.fn == nullptr) {
    return Error(BP_STATUS_UNIMPLEMENTED, f->name + ": not implemented for backend '" + dev->slot->name +
                                              "' and no CPU kernel to fall back to");
  }
  bp_kernel_call_t cpu_call = call;
  cpu_call.args = args.data();
  cpu_call.outputs = out_ptrs.data();
  cpu_call.stream = nullptr;
  cpu_call.device_index = 0;
  cpu_call.kernel_data = k.data;
  cpu_call.backend_data = ctx->slots[0].props_table.backend_data;
  RearmCallError(&cpu_call);  // the error slot of `call`: clear the declining kernel's message
  bp_status_t rc = k.fn(&cpu_call);
  if (rc != BP_STATUS_OK) {
    std::string msg = KernelMessage(cpu_call);
    return Error(rc, msg.empty() ? f->name + ": CPU kernel failed in the fallback for backend '" + dev->slot->name + "'"
                                 : msg);
  }
  for (int32_t j = 0; j < nout; ++j) {
    const DLTensor& o = *call.outputs[j];
    Geometry g = GeometryOf(o, where);
    BP_RETURN_IF_ERROR(WriteView(dev, o.data, g, cpu_out[j]->storage->data, g.dtype));
  }
  counted->fallback_count[backend].fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace bp::core
