// bp_op_call: binds boxed arguments to the schema, computes the dispatch key,
// runs the meta function, allocates or checks outputs, builds the kernel call
// and runs the kernel (or a fallback). No lock and no string work on the
// success path; heap allocation only for outputs and temporaries.
#include "dispatch.h"

#include <cstring>
#include <string>
#include <vector>

#include "api.h"
#include "call_plan.h"
#include "copy.h"
#include "dispatch_internal.h"
#include "dtype.h"
#include "meta/common.h"
#include "rcu.h"

namespace bp::core {
namespace {
using namespace detail;

// The dtypes ops.yaml says an operator takes are the dtypes its kernel
// computes in: each tensor argument's dtype after the plan's casts, as torch
// (pow(bool, int64) runs in int64; mean(int32, dtype=float32) in float32).
// *dtypes: DtypeBit() of each, for the route (DecideRoute).
Status CheckComputeDtypes(const bp_op_t* op, const Bound& b, const MetaPlan& plan, uint32_t* dtypes) {
  *dtypes = 0;
  for (int32_t i = 0; i < op->num_meta_args; ++i) {
    const MetaArg& m = b.margs[i];
    if (i < 32 && ((plan.own_dtype_args >> i) & 1u) != 0) continue;
    const int64_t n = m.kind == BP_VALUE_TENSOR ? 1 : m.kind == BP_VALUE_TENSOR_LIST ? m.num_tensors : 0;
    for (int64_t j = 0; j < n; ++j) {
      const DLDataType given = m.kind == BP_VALUE_TENSOR ? m.tensor->dtype : m.tensors[j]->dtype;
      const bool cast = plan.cast_to[i].bits != 0 && !DtypeEqual(plan.cast_to[i], given);
      const DType id = DtypeFromDL(cast ? plan.cast_to[i] : given);
      if (id != DType::kInvalid && (op->dtype_mask & DtypeBit(id)) != 0) {
        *dtypes |= DtypeBit(id);
        continue;
      }
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   op->name + ": argument '" + op->arg_names[i] + "'" +
                       (m.kind == BP_VALUE_TENSOR_LIST ? "[" + std::to_string(j) + "]" : std::string()) +
                       " has dtype " + DtypeName(given) +
                       (cast ? std::string(" (computed as ") + DtypeName(plan.cast_to[i]) + ")" : std::string()) +
                       "; " + op->name + " takes " + DtypeList(op->dtype_mask));
    }
  }
  return Status::Ok();
}

}  // namespace

Status detail::InferPlan(const bp_op_t* op, Bound& b, MetaPlan* plan, uint32_t* dtypes) {
  if (op->meta == nullptr) {
    return Error(BP_STATUS_UNIMPLEMENTED, op->name + ": meta function '" + op->meta_name + "' is not available");
  }
  const int32_t nmeta = op->num_meta_args;
  MetaCallInfo info{op->name.c_str(), op->functional->arg_names, nmeta};
  // The plan's defaults, without zeroing its large arrays.
  plan->num_outputs = 1;
  plan->no_output_alias = false;
  plan->own_dtype_args = 0;
  std::memset(plan->cast_to, 0, sizeof(plan->cast_to));
  for (int32_t i = 0; i < nmeta; ++i) plan->rewritten[i].kind = BP_VALUE_NONE;
  BP_RETURN_IF_ERROR(op->meta->infer(info, b.margs, plan));
  return CheckComputeDtypes(op, b, *plan, dtypes);
}

namespace {

// The tensor a call writes (in-place self, out=, copy_'s self) against
// itself and against every input, by meta/overlap.cpp's rules, before any
// route runs (so the fallbacks refuse what the kernels refuse). Memory is
// compared, not storage identity (SameMemory): views of one buffer reach the
// core as storages of their own (the torch bridge, two DLPack imports). Only
// inputs on the written tensor's device and memory cost more than a compare.
Status CheckWrittenOverlap(const bp_op_t* op, const Bound& b, const std::vector<ListArg>& lists) {
  const int32_t mut = op->mutated_arg;
  const Geometry& out = b.geos[mut];
  const MetaCallInfo info{op->name.c_str(), op->arg_names, op->num_args};
  BP_RETURN_IF_ERROR(CheckNoInternalOverlap(info, mut, out));  // fill_ never gets here with one (CallWritingDistinct)
  // Other operators read inputs in an order of their own: an overlapping
  // input goes through a temporary (MetaPlan::no_output_alias) instead.
  const bool pointwise = op->kind == OpKind::kCopy || IsPointwise(op->meta);
  if (!pointwise) return Status::Ok();
  const bp_tensor_t* written = b.tensors[mut];
  int64_t shift = 0;
  for (int32_t i = 0; i < op->num_args; ++i) {
    if (i == mut) continue;
    if (b.margs[i].kind == BP_VALUE_TENSOR && SameMemory(written, b.tensors[i], &shift)) {
      BP_RETURN_IF_ERROR(CheckNoPartialOverlap(info, mut, out, i, b.geos[i], true, shift));
    } else if (b.margs[i].kind == BP_VALUE_TENSOR_LIST) {
      const ListArg& l = lists[b.list_index[i]];
      for (size_t j = 0; j < l.tensors.size(); ++j) {
        if (SameMemory(written, l.tensors[j], &shift))
          BP_RETURN_IF_ERROR(CheckNoPartialOverlap(info, mut, out, i, l.geos[j], true, shift));
      }
    }
  }
  return Status::Ok();
}

// A kernel operator whose route runs on the device, past binding, the meta
// function (`plan`, InferPlan's) and routing: outputs, casts on the device,
// kernel views, the route's kernel. A native call on a device backend the
// core cast arguments or results for is counted as the cast route, with the
// host<->device bytes of those casts. *to_host: the kernel declined and the
// host fallback must run instead (every fresh output released, nothing written).
// fresh_on: as CallOp's.
Status RunKernelOp(bp_context_t* ctx, const bp_op_t* op, Bound& b, std::vector<ListArg>& lists, DeviceState* dev,
                   const Route& route, const MetaPlan& plan, Temps& temps, bp_tensor_t** results, bool* to_host,
                   DeviceState* fresh_on) {
  const bp_op_t* f = op->functional;
  const int32_t nmeta = op->num_meta_args;
  MetaCallInfo info{op->name.c_str(), f->arg_names, nmeta};
  bp_device_t device{dev->slot->id, dev->index};
  bool cast = false;  // the core casts for the kernel (the cast route)
  const uint64_t staged_before = StagedBytesOnThread();
  const int32_t nout = plan.num_outputs;

  // Outputs: fresh, the caller's out= tensor, or the mutated self.
  bp_tensor_t* outs[kMaxOutputs] = {};
  bp_tensor_t* finals[kMaxOutputs] = {};  // where a temporary output is copied to after the kernel
  bool fresh[kMaxOutputs] = {};
  bp_tensor_t* owned[kMaxOutputs] = {};  // a fresh output as the caller gets it (outs[k] may be its host view)
  const int32_t mut = op->mutated_arg;
  for (int32_t k = 0; k < nout; ++k) {
    const Geometry& want = plan.outputs[k];
    if (mut >= 0 && k == 0) {
      bp_tensor_t* t = b.tensors[mut];
      const Geometry& g = t->geo;
      bool same_sizes = g.ndim == want.ndim && std::memcmp(g.sizes, want.sizes, sizeof(int64_t) * g.ndim) == 0;
      if (op->variant == OpVariant::kOut) {
        if (!same_sizes || !DtypeEqual(g.dtype, want.dtype)) {
          return Error(BP_STATUS_INVALID_ARGUMENT,
                       op->name + ": argument '" + op->arg_names[mut] + "' has sizes " + meta::SizesText(g) +
                           " and dtype " + DtypeName(g.dtype) + "; expected sizes " + meta::SizesText(want) +
                           " and dtype " + DtypeName(want.dtype));
        }
      } else {
        if (!same_sizes) {
          return Error(BP_STATUS_INVALID_ARGUMENT,
                       op->name + ": argument '" + op->arg_names[mut] + "' of sizes " + meta::SizesText(g) +
                           " cannot hold the result of sizes " + meta::SizesText(want) +
                           " (in-place operations do not resize self)");
        }
        if (!DtypeEqual(g.dtype, want.dtype) && !CanCastDtype(want.dtype, g.dtype)) {
          return Error(BP_STATUS_INVALID_ARGUMENT,
                       op->name + ": result type " + DtypeName(want.dtype) + " can't be cast to the desired output type " +
                           DtypeName(g.dtype) + " of argument '" + op->arg_names[mut] + "'");
        }
      }
      bool needs_temp = !DtypeEqual(g.dtype, want.dtype);
      cast |= needs_temp;
      if (!needs_temp && plan.no_output_alias) {
        for (int32_t i = 0; i < nmeta; ++i) {
          if (i != mut && b.margs[i].kind == BP_VALUE_TENSOR && Overlaps(t, b.tensors[i])) needs_temp = true;
        }
      }
      if (needs_temp) {
        bp_tensor_t* tmp = nullptr;
        BP_RETURN_IF_ERROR(NewOutput(ctx, device, want, op->name.c_str(), &tmp));
        temps.add(tmp);
        outs[k] = tmp;
        finals[k] = t;
      } else {
        outs[k] = t;
      }
    } else {
      const bp_device_t where = fresh_on != nullptr ? bp_device_t{fresh_on->slot->id, fresh_on->index} : device;
      Status st = NewOutput(ctx, where, want, op->name.c_str(), &owned[k]);
      if (st.ok() && fresh_on != nullptr) {
        st = HostViews(ctx, fresh_on, &owned[k], 1, &outs[k]);
        if (st.ok())
          temps.add(outs[k]);
        else
          TensorRelease(owned[k]);
      } else if (st.ok()) {
        outs[k] = owned[k];
      }
      if (!st.ok()) {
        for (int32_t j = 0; j < k; ++j)
          if (fresh[j]) TensorRelease(owned[j]);
        return st;
      }
      fresh[k] = true;
    }
  }
  auto release_fresh = [&]() {
    for (int32_t k = 0; k < nout; ++k)
      if (fresh[k]) TensorRelease(owned[k]);
  };

  // Casts: each tensor argument the plan wants in another dtype is copied
  // into a temporary of that dtype.
  // Replaces `t` (geometry `g`, a call argument or a list element) by a
  // temporary copy of it in dtype `want`.
  auto cast_into_temp = [&](bp_tensor_t*& t, Geometry& g, DLDataType want) -> Status {
    bp_tensor_t* tmp = nullptr;
    BP_RETURN_IF_ERROR(NewLike(ctx, device, g, want, op->name.c_str(), &tmp));
    temps.add(tmp);
    BP_RETURN_IF_ERROR(CopyInto(ctx, tmp, t));
    t = tmp;
    g = tmp->geo;
    cast = true;
    return Status::Ok();
  };
  for (int32_t i = 0; i < nmeta; ++i) {
    DLDataType want = plan.cast_to[i];
    if (want.bits == 0) continue;
    Status st;
    if (b.margs[i].kind == BP_VALUE_TENSOR && !DtypeEqual(b.geos[i].dtype, want)) {
      st = cast_into_temp(b.tensors[i], b.geos[i], want);
    } else if (b.margs[i].kind == BP_VALUE_TENSOR_LIST) {
      ListArg& l = lists[b.list_index[i]];
      for (size_t j = 0; j < l.tensors.size() && st.ok(); ++j) {
        if (!DtypeEqual(l.geos[j].dtype, want)) st = cast_into_temp(l.tensors[j], l.geos[j], want);
      }
    }
    if (!st.ok()) {
      release_fresh();
      return st;
    }
  }
  for (int32_t i = 0; i < nmeta; ++i) {
    if (plan.rewritten[i].kind != BP_VALUE_NONE) b.margs[i] = plan.rewritten[i];
  }

  // prepare takes the outputs' geometries as one array: a single output's
  // own geometry is that array; several are copied.
  Uninit<Geometry[kMaxOutputs]> out_storage;
  const Geometry* out_geos = &outs[0]->geo;
  if (nout > 1) {
    for (int32_t k = 0; k < nout; ++k) out_storage.value[k] = outs[k]->geo;
    out_geos = out_storage.value;
  }
  Uninit<KernelViews> views_storage;
  KernelViews& views = views_storage.value;
  Status st = op->meta->prepare(info, b.margs, plan, out_geos, &views);
  if (!st.ok()) {
    release_fresh();
    return st;
  }

  DLTensor dl[kMaxArgs];
  for (int32_t i = 0; i < nmeta; ++i) {
    if (b.margs[i].kind == BP_VALUE_TENSOR) FillDLTensor(b.tensors[i]->storage, views.args[i], &dl[i]);
  }
  const bool is_cat = !lists.empty() && op->meta_name == "cat";
  for (ListArg& l : lists) {
    l.dl.resize(l.tensors.size());
    l.dl_ptrs.clear();
    for (size_t j = 0; j < l.tensors.size(); ++j) {
      FillDLTensor(l.tensors[j]->storage, l.geos[j], &l.dl[j]);
      // cat drops legacy empty 1-D inputs before the kernel (kernel contract).
      if (is_cat && CatSkipsInput(l.geos[j])) continue;
      l.dl_ptrs.push_back(&l.dl[j]);
    }
  }
  DLTensor dl_out[kMaxOutputs];
  DLTensor* out_ptrs[kMaxOutputs];
  for (int32_t k = 0; k < nout; ++k) {
    FillDLTensor(outs[k]->storage, views.outputs[k], &dl_out[k]);
    out_ptrs[k] = &dl_out[k];
  }
  bp_kernel_arg_t kargs[kMaxArgs];
  BuildKernelArgs(nmeta, b.margs, dl, lists, b, kargs);
  bp_kernel_call_t call = MakeKernelCall(op, dev, kargs, nmeta, out_ptrs, nout);
  // The host backend's casts are its own arithmetic, not a detour.
  cast = cast && route.kind == RouteKind::kNative && dev->slot->id != ctx->host_backend;
  st = ExecuteRoute(ctx, op, dev, route, &call, to_host, cast);
  if (st.ok() && *to_host) {
    release_fresh();
    return st;
  }
  for (int32_t k = 0; k < nout && st.ok(); ++k) {
    if (finals[k] != nullptr) st = CopyInto(ctx, finals[k], outs[k]);
  }
  if (!st.ok()) {
    release_fresh();
    return st;
  }
  if (cast) CountCastBytes(op, dev, StagedBytesOnThread() - staged_before);
  for (int32_t k = 0; k < nout; ++k) {
    if (fresh[k]) {
      results[k] = owned[k];
    } else {
      bp_tensor_t* r = finals[k] != nullptr ? finals[k] : outs[k];
      TensorRetain(r);
      results[k] = r;
    }
  }
  return Status::Ok();
}

}  // namespace

namespace {

// fill_ into a broadcast view (meta WritesOneValue): the view's distinct
// addresses are the view with each stride-0 dim at size 1, and writing one
// value there is the same write. The call runs on that view, so no kernel or
// fallback ever gets an output that overlaps itself; the caller gets self.
Status CallWritingDistinct(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                           bp_tensor_t** out_results, int32_t num_results) {
  const int32_t mut = op->mutated_arg;
  bp_tensor_t* self = args[mut].u.tensor;
  Geometry g = self->geo;
  for (int32_t d = 0; d < g.ndim; ++d) {
    if (g.strides[d] == 0) g.sizes[d] = 1;
  }
  bp_value_t local[kMaxArgs];
  for (int32_t i = 0; i < num_args; ++i) local[i] = args[i];
  local[mut].u.tensor = WrapStorage(ctx, self->storage, g);
  bp_tensor_t* r = nullptr;
  Status st = CallOp(ctx, op, local, num_args, &r, 1, nullptr);
  TensorRelease(local[mut].u.tensor);
  if (r != nullptr) TensorRelease(r);
  BP_RETURN_IF_ERROR(st);
  if (num_results > 0) {
    TensorRetain(self);
    out_results[0] = self;
  }
  return Status::Ok();
}

}  // namespace

Status CallOp(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args, bp_tensor_t** out_results,
              int32_t num_results, const bp_call_plan_t* plan, DeviceState* fresh_on) {
  if (op->ctx != ctx) return Error(BP_STATUS_INVALID_ARGUMENT, "bp_op_call: operator belongs to another context");
  if (op->removed.load(std::memory_order_acquire)) {
    return Error(BP_STATUS_FAILED_PRECONDITION, "bp_op_call: operator '" + op->name + "' was removed (plugin unloaded)");
  }
  if (num_results < 0 || num_results > op->num_returns || (num_results > 0 && out_results == nullptr)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": asked for " + std::to_string(num_results) +
                                                 " results; the operator returns " + std::to_string(op->num_returns));
  }
  if (num_args > 0 && args == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": args is NULL");
  const int32_t mut = op->mutated_arg;
  if (WritesOneValue(op->meta) && mut >= 0 && mut < num_args && num_args <= kMaxArgs &&
      args[mut].kind == BP_VALUE_TENSOR && args[mut].u.tensor != nullptr &&
      HasInternalOverlap(args[mut].u.tensor->geo)) {
    return CallWritingDistinct(ctx, op, args, num_args, out_results, num_results);
  }
  Bound b;
  std::vector<ListArg> lists;
  BP_RETURN_IF_ERROR(BindArgs(op, args, num_args, b, lists));

  // dtypes the operator takes; for kernel operators with a meta function
  // only dtypes Backplane knows here, the claims after the meta function's
  // casts (CheckComputeDtypes).
  if (op->kind != OpKind::kCustom) {
    const bool after_casts = op->kind == OpKind::kKernel && op->meta != nullptr;
    Status st;
    ForEachTensor(op, b, lists, [&](int32_t i, int j, bp_tensor_t*&, Geometry& g) {
      if (!st.ok() || (i == op->mutated_arg && op->variant == OpVariant::kOut)) return;
      DType id = DtypeFromDL(g.dtype);
      if (id == DType::kInvalid || (!after_casts && (op->dtype_mask & DtypeBit(id)) == 0)) {
        st = Error(BP_STATUS_INVALID_ARGUMENT,
                   op->name + ": argument '" + op->arg_names[i] + "'" + (j >= 0 ? "[" + std::to_string(j) + "]" : "") +
                       " has dtype " + DtypeName(g.dtype) + "; " + op->name + " takes " + DtypeList(op->dtype_mask));
      }
    });
    BP_RETURN_IF_ERROR(st);
  }

  if (op->mutated_arg >= 0 && b.margs[op->mutated_arg].kind == BP_VALUE_TENSOR) {
    BP_RETURN_IF_ERROR(CheckNotConstant(b.tensors[op->mutated_arg], op->name.c_str(), op->arg_names[op->mutated_arg]));
    BP_RETURN_IF_ERROR(CheckWrittenOverlap(op, b, lists));
  }

  if (op->kind == OpKind::kCopy) {
    bp_tensor_t* self = b.tensors[0];
    BP_RETURN_IF_ERROR(CopyInto(ctx, self, b.tensors[1]));
    if (num_results > 0) {
      TensorRetain(self);
      out_results[0] = self;
    }
    return Status::Ok();
  }

  // The dispatch key: the device of the tensors with dims; 0-dim host tensors join it.
  KeyChooser chooser(ctx->host_backend);
  ForEachTensor(op, b, lists,
                [&](int32_t i, int, bp_tensor_t*&, Geometry& g) { chooser.Offer(i, g.device, g.ndim > 0); });
  const bp_device_t key = chooser.key;
  bool joiners = false;
  Status st;
  ForEachTensor(op, b, lists, [&](int32_t i, int, bp_tensor_t*&, Geometry& g) {
    if (st.ok()) st = chooser.Check(ctx, op, i, g.device, g.ndim, &joiners);
  });
  BP_RETURN_IF_ERROR(st);
  DeviceState* dev = nullptr;
  BP_RETURN_IF_ERROR(ResolveDevice(ctx, key, op->name.c_str(), &dev));

  // The route, before anything is cast, copied or allocated: the plan's,
  // decided for this device, unless the call's compute dtypes are outside
  // its kernel's dtype mask; bad arguments are reported before a missing
  // kernel, as on every backend.
  const bool has_route = op->kind == OpKind::kKernel || op->kind == OpKind::kCustom;
  const bool has_plan = op->kind == OpKind::kKernel;  // InferPlan reports a missing meta function
  Uninit<MetaPlan> meta_plan;
  Route route;
  if (has_route) {
    uint32_t dtypes = 0;
    if (has_plan) {
      BP_RETURN_IF_ERROR(InferPlan(op, b, &meta_plan.value, &dtypes));
    } else {
      ForEachTensor(op, b, lists, [&](int32_t, int, bp_tensor_t*&, Geometry& g) {
        const DType id = DtypeFromDL(g.dtype);
        if (id != DType::kInvalid) dtypes |= DtypeBit(id);
      });
    }
    if (plan != nullptr && plan->dev == dev && plan->route_kind != BP_PLAN_ROUTE_ERROR &&
        (plan->route.kind != RouteKind::kNative || KernelTakes(plan->route.kernel, dtypes))) {
      route = plan->route;
    } else {
      BP_RETURN_IF_ERROR(DecideRoute(ctx, op, dev->slot->id, dtypes, &route));
    }
    if (route.kind == RouteKind::kHostFallback) {
      return RunHostFallback(ctx, op, args, num_args, dev, out_results, num_results);
    }
  }

  Temps temps;
  if (joiners) {
    // 0-dim host tensors become 0-dim tensors on the device.
    ForEachTensor(op, b, lists, [&](int32_t, int, bp_tensor_t*& t, Geometry& g) {
      if (!st.ok() || SameDevice(g.device, key)) return;
      bp_tensor_t* moved = nullptr;
      st = EmptyTensor(ctx, key, 0, nullptr, g.dtype, op->name.c_str(), &moved);
      if (!st.ok()) return;
      temps.add(moved);
      st = CopyInto(ctx, moved, t);
      t = moved;
      g = moved->geo;
    });
    BP_RETURN_IF_ERROR(st);
  }

  bp_tensor_t* results[kMaxOutputs] = {};
  bool to_host = false;  // the kernel declined; the host fallback serves the call
  switch (op->kind) {
    case OpKind::kView: BP_RETURN_IF_ERROR(RunView(ctx, op, b, &results[0])); break;
    case OpKind::kComposite: BP_RETURN_IF_ERROR(RunComposite(ctx, op, b, &results[0])); break;
    case OpKind::kCustom: BP_RETURN_IF_ERROR(RunCustom(ctx, op, b, lists, dev, route, results, &to_host)); break;
    default:
      BP_RETURN_IF_ERROR(
          RunKernelOp(ctx, op, b, lists, dev, route, meta_plan.value, temps, results, &to_host, fresh_on));
      break;
  }
  if (to_host) return RunHostFallback(ctx, op, args, num_args, dev, out_results, num_results);
  for (int32_t k = 0; k < op->num_returns; ++k) {
    if (k < num_results) {
      out_results[k] = results[k];
    } else if (results[k] != nullptr) {
      TensorRelease(results[k]);
    }
  }
  return Status::Ok();
}

}  // namespace bp::core
