// Operations the core does itself: views (metadata over shared storage),
// composites (to.dtype, clone, contiguous: done with copy_) and custom
// operators (meta function given at definition).
#include <string>
#include <vector>

#include "copy.h"
#include "dispatch_internal.h"
#include "dtype.h"

namespace bp::core::detail {
namespace {
Status Clone(bp_context_t* ctx, bp_tensor_t* self, bp_tensor_t** out) {
  bp_tensor_t* t = nullptr;
  BP_RETURN_IF_ERROR(NewLike(ctx, self->geo.device, self->geo, self->geo.dtype, "clone", &t));
  Status st = CopyInto(ctx, t, self);
  if (!st.ok()) {
    TensorRelease(t);
    return st;
  }
  *out = t;
  return Status::Ok();
}

}  // namespace

Status RunView(bp_context_t* ctx, const bp_op_t* op, Bound& b, bp_tensor_t** result) {
  if (op->view == nullptr) {
    return Error(BP_STATUS_UNIMPLEMENTED, op->name + ": view function '" + op->meta_name + "' is not available");
  }
  MetaCallInfo info{op->name.c_str(), op->arg_names, op->num_args};
  Geometry g;
  Status st = op->view->view(info, b.margs, &g);
  bp_tensor_t* base = b.tensors[0];
  Temps temps;
  if (!st.ok()) {
    // reshape: when no view exists, a contiguous copy is reshaped instead.
    if (st.code() != kViewNeedsCopy || op->meta_name != "reshape") return st;
    bp_tensor_t* c = nullptr;
    BP_RETURN_IF_ERROR(Clone(ctx, base, &c));
    temps.add(c);
    b.geos[0] = c->geo;
    BP_RETURN_IF_ERROR(op->view->view(info, b.margs, &g));
    base = c;
  }
  g.device = base->geo.device;
  g.dtype = base->geo.dtype;
  *result = WrapStorage(ctx, base->storage, g);
  return Status::Ok();
}

Status RunComposite(bp_context_t* ctx, const bp_op_t* op, Bound& b, bp_tensor_t** result) {
  bp_tensor_t* self = b.tensors[0];
  const std::string& m = op->meta_name;
  if (m == "to_dtype") {
    DLDataType dt = b.margs[1].dtype;
    bool force = b.margs[3].kind == BP_VALUE_BOOL && b.margs[3].b;
    if (DtypeEqual(dt, self->geo.dtype) && !force) {
      TensorRetain(self);
      *result = self;
      return Status::Ok();
    }
    bp_tensor_t* t = nullptr;
    BP_RETURN_IF_ERROR(NewLike(ctx, self->geo.device, self->geo, dt, op->name.c_str(), &t));
    Status st = CopyInto(ctx, t, self);
    if (!st.ok()) {
      TensorRelease(t);
      return st;
    }
    *result = t;
    return Status::Ok();
  }
  if (m == "contiguous" && self->geo.is_contiguous()) {
    TensorRetain(self);
    *result = self;
    return Status::Ok();
  }
  if (m == "clone" || m == "contiguous") return Clone(ctx, self, result);
  return Error(BP_STATUS_UNIMPLEMENTED, op->name + ": composite '" + m + "' is not implemented by the core");
}

// Builds kernel arguments from bound meta arguments and DLTensors.
void BuildKernelArgs(int32_t n, const MetaArg* margs, DLTensor* dl, std::vector<ListArg>& lists, const Bound& b,
                     bp_kernel_arg_t* kargs) {
  for (int32_t i = 0; i < n; ++i) {
    const MetaArg& m = margs[i];
    bp_kernel_arg_t& k = kargs[i];
    k = bp_kernel_arg_t{};
    k.kind = m.kind;
    switch (m.kind) {
      case BP_VALUE_TENSOR: {
        k.u.tensor = &dl[i];
        // A constant storage's id (BP_KERNEL_ARG_CONSTANT): a kernel may keep
        // what it derives from the values under it.
        const uint64_t id = b.tensors[i]->storage->constant_id.load(std::memory_order_relaxed);
        if (id != 0) {
          k.flags = BP_KERNEL_ARG_CONSTANT;
          k.u.constant.id = id;
        }
        break;
      }
      case BP_VALUE_TENSOR_LIST: {
        ListArg& l = lists[b.list_index[i]];
        k.u.tensor_list.data = l.dl_ptrs.data();
        k.u.tensor_list.size = static_cast<int64_t>(l.dl_ptrs.size());
        break;
      }
      case BP_VALUE_INT: k.u.i = m.i; break;
      case BP_VALUE_INT_LIST: k.u.int_list.data = m.ints; k.u.int_list.size = m.num_ints; break;
      case BP_VALUE_DOUBLE: k.u.d = m.d; break;
      case BP_VALUE_BOOL: k.u.b = m.b ? 1 : 0; break;
      case BP_VALUE_DTYPE: k.u.dtype = m.dtype; break;
      case BP_VALUE_STRING: k.u.str = m.str; break;
      default: break;
    }
  }
}

Status RunCustom(bp_context_t* ctx, const bp_op_t* op, Bound& b, std::vector<ListArg>& lists, DeviceState* dev,
                 const Route& route, bp_tensor_t** results, bool* to_host) {
  DLTensor dl[kMaxArgs];
  for (int32_t i = 0; i < op->num_args; ++i) {
    if (b.margs[i].kind == BP_VALUE_TENSOR) {
      FillDLTensor(b.tensors[i]->storage, b.geos[i], &dl[i]);
      dl[i].data = nullptr;  // meta functions must not read data
    }
  }
  for (ListArg& l : lists) {
    l.dl.resize(l.tensors.size());
    l.dl_ptrs.resize(l.tensors.size());
    for (size_t j = 0; j < l.tensors.size(); ++j) {
      FillDLTensor(l.tensors[j]->storage, l.geos[j], &l.dl[j]);
      l.dl[j].data = nullptr;
      l.dl_ptrs[j] = &l.dl[j];
    }
  }
  bp_kernel_arg_t kargs[kMaxArgs];
  BuildKernelArgs(op->num_args, b.margs, dl, lists, b, kargs);
  bp_tensor_spec_t specs[kMaxOutputs] = {};
  for (auto& s : specs) s.struct_size = sizeof(s);
  bp_meta_call_t mc{};
  mc.struct_size = sizeof(mc);
  mc.op_name = op->name.c_str();
  mc.args = kargs;
  mc.num_args = op->num_args;
  mc.num_outputs = op->num_returns;
  mc.out_specs = specs;
  mc.meta_data = op->custom_meta_data;
  SetLastError(BP_STATUS_OK, "");
  bp_status_t rc = op->custom_meta(&mc);
  if (rc != BP_STATUS_OK) {
    std::string msg = bp_last_error_message();
    return Error(rc, msg.empty() ? op->name + ": meta function failed" : msg);
  }
  bp_device_t device{dev->slot->id, dev->index};
  bp_tensor_t* outs[kMaxOutputs] = {};
  DLTensor dl_out[kMaxOutputs];
  DLTensor* out_ptrs[kMaxOutputs];
  Status st;
  for (int32_t k = 0; k < op->num_returns && st.ok(); ++k) {
    if (specs[k].ndim < 0 || specs[k].ndim > BP_MAX_NDIM) {
      st = Error(BP_STATUS_INTERNAL, op->name + ": meta function returned a bad ndim for output " + std::to_string(k));
      break;
    }
    st = EmptyTensor(ctx, device, specs[k].ndim, specs[k].sizes, specs[k].dtype, op->name.c_str(), &outs[k]);
    if (st.ok()) {
      FillDLTensor(outs[k]->storage, outs[k]->geo, &dl_out[k]);
      out_ptrs[k] = &dl_out[k];
    }
  }
  if (st.ok()) {
    for (int32_t i = 0; i < op->num_args; ++i) {
      if (b.margs[i].kind == BP_VALUE_TENSOR) dl[i].data = b.tensors[i]->storage->data;
    }
    for (ListArg& l : lists) {
      for (size_t j = 0; j < l.tensors.size(); ++j) l.dl[j].data = l.tensors[j]->storage->data;
    }
    bp_kernel_call_t call = MakeKernelCall(op, dev, kargs, op->num_args, out_ptrs, op->num_returns);
    st = ExecuteRoute(ctx, op, dev, route, &call, to_host);
  }
  if (!st.ok() || *to_host) {
    for (bp_tensor_t* t : outs) if (t != nullptr) TensorRelease(t);
    return st;
  }
  for (int32_t k = 0; k < op->num_returns; ++k) results[k] = outs[k];
  return Status::Ok();
}


}  // namespace bp::core::detail
