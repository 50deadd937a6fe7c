// copy_ done by the core: validation, broadcasting, cross-device staging
// through the host, and the backend's copy_ kernel when one is registered.
#include <string>
#include <vector>

#include "copy.h"
#include "dispatch.h"
#include "dtype.h"
#include "meta/common.h"

namespace bp::core {

void FillDLTensor(const Storage* storage, const Geometry& geo, DLTensor* out) {
  out->data = storage->data;
  out->device.device_type = static_cast<DLDeviceType>(storage->dev->slot->device_type);
  out->device.device_id = geo.device.index;
  out->ndim = geo.ndim;
  out->dtype = geo.dtype;
  out->shape = const_cast<int64_t*>(geo.sizes);
  out->strides = const_cast<int64_t*>(geo.strides);
  out->byte_offset = static_cast<uint64_t>(geo.offset) * DtypeItemSize(DtypeFromDL(geo.dtype));
}

namespace {

bool SameDevice(bp_device_t a, bp_device_t b) { return a.backend == b.backend && a.index == b.index; }

// Stages src (broadcast view `src_view`) through a host buffer into dst.
Status StageCopy(bp_tensor_t* dst, bp_tensor_t* src, const Geometry& src_view) {
  std::vector<char> host(ContiguousBytes(dst->geo));
  BP_RETURN_IF_ERROR(ReadView(src->storage->dev, src->storage->data, src_view, dst->geo.dtype, host.data()));
  return WriteView(dst->storage->dev, dst->storage->data, dst->geo, host.data(), dst->geo.dtype);
}

}  // namespace

Status CopyInto(bp_context_t* ctx, bp_tensor_t* dst, bp_tensor_t* src) {
  const Geometry& d = dst->geo;
  const Geometry& s = src->geo;
  // src broadcasts to dst's sizes (trailing dims aligned).
  if (s.ndim > d.ndim) {
    return Error(BP_STATUS_INVALID_ARGUMENT, "copy_: argument 'src' of sizes " + meta::SizesText(s) +
                                                 " cannot broadcast to 'self' of sizes " + meta::SizesText(d));
  }
  Geometry view = d;
  view.dtype = s.dtype;
  view.offset = s.offset;
  view.device = s.device;
  for (int32_t i = 0; i < d.ndim; ++i) {
    int32_t si = i - (d.ndim - s.ndim);
    if (si < 0) {
      view.strides[i] = 0;
    } else if (s.sizes[si] == d.sizes[i]) {
      view.strides[i] = s.strides[si];
    } else if (s.sizes[si] == 1) {
      view.strides[i] = 0;
    } else {
      return Error(BP_STATUS_INVALID_ARGUMENT, "copy_: argument 'src' of sizes " + meta::SizesText(s) +
                                                   " cannot broadcast to 'self' of sizes " + meta::SizesText(d) +
                                                   " at dim " + std::to_string(i));
    }
  }
  if (!SameDevice(d.device, s.device)) return StageCopy(dst, src, view);

  DeviceState* dev = dst->storage->dev;
  const bp_op_t* op = ctx->copy_op;
  int32_t backend = dev->slot->id;
  const KernelEntry& k = KernelFor(op, backend);
  if (k.fn != nullptr) {
    DLTensor dl_self, dl_src;
    FillDLTensor(dst->storage, d, &dl_self);
    FillDLTensor(src->storage, view, &dl_src);
    bp_kernel_arg_t kargs[3] = {};
    kargs[0].kind = BP_VALUE_TENSOR;
    kargs[0].u.tensor = &dl_self;
    kargs[1].kind = BP_VALUE_TENSOR;
    kargs[1].u.tensor = &dl_src;
    kargs[2].kind = BP_VALUE_BOOL;
    kargs[2].u.b = 0;
    DLTensor* outs[1] = {&dl_self};
    bp_kernel_call_t call{};
    call.struct_size = sizeof(call);
    call.op_name = op->name.c_str();
    call.args = kargs;
    call.num_args = 3;
    call.num_outputs = 1;
    call.outputs = outs;
    call.stream = dev->stream;
    call.device_index = d.device.index;
    call.kernel_data = k.data;
    call.backend_data = dev->slot->props_table.backend_data;
    CallError error;
    AttachCallError(&call, &error);
    bp_status_t rc = k.fn(&call);
    if (rc == BP_STATUS_OK) {
      const_cast<bp_op_t*>(op)->native_count[backend].fetch_add(1, std::memory_order_relaxed);
      return Status::Ok();
    }
    // UNIMPLEMENTED: the kernel declined this call (a dtype or layout it
    // lacks) before writing; the core moves the data below.
    if (rc != BP_STATUS_UNIMPLEMENTED) return KernelFailure(call, op->name, dev->slot->name, rc);
  }
  // No copy_ kernel: the core moves the data itself (through the host for
  // device memory; straight host loops for host memory unless src and dst
  // share storage, where a temporary avoids overlapping reads and writes).
  if (dev->slot->host_memory && dst->storage != src->storage) {
    HostConvert(src->storage->data, view, dst->storage->data, d);
    return Status::Ok();
  }
  return StageCopy(dst, src, view);
}

}  // namespace bp::core
