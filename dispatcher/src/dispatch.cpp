// bp_op_call: binds boxed arguments to the schema, computes the dispatch key,
// runs the meta function, allocates or checks outputs, builds the kernel call
// and runs the kernel (or a fallback). No lock and no string work on the
// success path; heap allocation only for outputs and temporaries.
#include "dispatch.h"

#include <cstring>
#include <string>
#include <vector>

#include "api.h"
#include "copy.h"
#include "dtype.h"
#include "fallback.h"
#include "meta/common.h"
#include "rcu.h"

namespace bp::core {
namespace {

const char* ValueKindName(int32_t kind) {
  switch (kind) {
    case BP_VALUE_NONE: return "None";
    case BP_VALUE_TENSOR: return "Tensor";
    case BP_VALUE_TENSOR_LIST: return "Tensor[]";
    case BP_VALUE_INT: return "int";
    case BP_VALUE_INT_LIST: return "int[]";
    case BP_VALUE_DOUBLE: return "float";
    case BP_VALUE_BOOL: return "bool";
    case BP_VALUE_DTYPE: return "ScalarType";
    case BP_VALUE_STRING: return "str";
    default: return "an unknown value kind";
  }
}

const char* ArgTypeName(ArgType t) {
  switch (t) {
    case ArgType::kTensor: return "Tensor";
    case ArgType::kTensorList: return "Tensor[]";
    case ArgType::kInt: return "int";
    case ArgType::kIntList: return "int[]";
    case ArgType::kFloat: return "float";
    case ArgType::kBool: return "bool";
    case ArgType::kScalar: return "Scalar (int, float or bool)";
    case ArgType::kScalarType: return "ScalarType";
    case ArgType::kString: return "str";
  }
  return "?";
}

std::string DeviceText(bp_context_t* ctx, bp_device_t d) {
  return ctx->slots[d.backend].name + ":" + std::to_string(d.index);
}

std::string DtypeList(uint32_t mask) {
  std::string s;
  for (int32_t i = 0; i < static_cast<int32_t>(DtypeId::kCount); ++i) {
    if (mask & (1u << i)) {
      if (!s.empty()) s += ", ";
      s += DtypeName(static_cast<DtypeId>(i));
    }
  }
  return s;
}

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

Status BindArgs(const bp_op_t* op, const bp_value_t* args, int32_t num_args, Bound& b,
                std::vector<ListArg>& lists) {
  const Schema& s = op->schema;
  if (num_args > op->num_args || num_args < 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": expected at most " + std::to_string(op->num_args) +
                                                 " arguments, got " + std::to_string(num_args));
  }
  for (int32_t i = 0; i < op->num_args; ++i) {
    const Argument& a = s.arguments[i];
    const bp_value_t* v;
    if (i < num_args) {
      v = &args[i];
    } else if (op->has_default[i]) {
      v = &op->defaults[i];
    } else {
      return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": missing argument '" + a.name + "' (" +
                                                   ArgTypeName(a.type) + ", no default); got " +
                                                   std::to_string(num_args) + " arguments");
    }
    MetaArg& m = b.margs[i];
    m = MetaArg{};
    int32_t k = v->kind;
    bool ok = false;
    if (k == BP_VALUE_NONE) {
      ok = a.optional;
      m.kind = BP_VALUE_NONE;
    } else {
      switch (a.type) {
        case ArgType::kTensor:
          if (k == BP_VALUE_TENSOR) {
            ok = true;
            if (v->u.tensor == nullptr) {
              return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' is a NULL tensor");
            }
            b.tensors[i] = v->u.tensor;
            b.geos[i] = v->u.tensor->geo;
            m.kind = BP_VALUE_TENSOR;
            m.tensor = &b.geos[i];
          }
          break;
        case ArgType::kTensorList:
          if (k == BP_VALUE_TENSOR_LIST) {
            ok = true;
            if (v->u.tensor_list.size < 0 || (v->u.tensor_list.size > 0 && v->u.tensor_list.data == nullptr)) {
              return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' has a bad list");
            }
            b.list_index[i] = static_cast<int>(lists.size());
            lists.emplace_back();
            ListArg& l = lists.back();
            int64_t n = v->u.tensor_list.size;
            l.tensors.resize(n);
            l.geos.resize(n);
            l.ptrs.resize(n);
            for (int64_t j = 0; j < n; ++j) {
              bp_tensor_t* t = v->u.tensor_list.data[j];
              if (t == nullptr) {
                return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' element " +
                                                             std::to_string(j) + " is a NULL tensor");
              }
              l.tensors[j] = t;
              l.geos[j] = t->geo;
            }
            for (int64_t j = 0; j < n; ++j) l.ptrs[j] = &l.geos[j];
            m.kind = BP_VALUE_TENSOR_LIST;
            m.tensors = l.ptrs.data();
            m.num_tensors = n;
          }
          break;
        case ArgType::kInt:
          if (k == BP_VALUE_INT) {
            ok = true;
            m.kind = k;
            m.i = v->u.i;
          }
          break;
        case ArgType::kIntList:
          if (k == BP_VALUE_INT_LIST) {
            ok = true;
            if (v->u.int_list.size < 0 || (v->u.int_list.size > 0 && v->u.int_list.data == nullptr)) {
              return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' has a bad int list");
            }
            m.kind = k;
            m.ints = v->u.int_list.data;
            m.num_ints = v->u.int_list.size;
          } else if (k == BP_VALUE_INT && a.list_size > 0 && a.list_size <= BP_MAX_NDIM) {
            ok = true;  // "stride=2" for int[2]: repeated, as PyTorch does
            for (int32_t j = 0; j < a.list_size; ++j) b.ints[i][j] = v->u.i;
            m.kind = BP_VALUE_INT_LIST;
            m.ints = b.ints[i];
            m.num_ints = a.list_size;
          }
          break;
        case ArgType::kFloat:
          if (k == BP_VALUE_DOUBLE || k == BP_VALUE_INT) {
            ok = true;
            m.kind = BP_VALUE_DOUBLE;
            m.d = k == BP_VALUE_DOUBLE ? v->u.d : static_cast<double>(v->u.i);
          }
          break;
        case ArgType::kBool:
          if (k == BP_VALUE_BOOL) {
            ok = true;
            m.kind = k;
            m.b = v->u.b != 0;
          }
          break;
        case ArgType::kScalar:
          if (k == BP_VALUE_INT || k == BP_VALUE_DOUBLE || k == BP_VALUE_BOOL) {
            ok = true;
            m.kind = k;
            m.i = v->u.i;
            if (k == BP_VALUE_DOUBLE) m.d = v->u.d;
            if (k == BP_VALUE_BOOL) m.b = v->u.b != 0;
          }
          break;
        case ArgType::kScalarType:
          if (k == BP_VALUE_DTYPE) {
            ok = true;
            if (DtypeFromDL(v->u.dtype) == DtypeId::kInvalid) {
              return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' is an unsupported dtype " +
                                                           DtypeName(v->u.dtype));
            }
            m.kind = k;
            m.dtype = v->u.dtype;
          }
          break;
        case ArgType::kString:
          if (k == BP_VALUE_STRING) {
            ok = true;
            if (v->u.str == nullptr) {
              return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' is a NULL string");
            }
            m.kind = k;
            m.str = v->u.str;
          }
          break;
      }
    }
    if (!ok) {
      return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' expected " +
                                                   ArgTypeName(a.type) + (a.optional ? " or None" : "") + ", got " +
                                                   ValueKindName(k));
    }
  }
  return Status::Ok();
}

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

bool SameDevice(bp_device_t a, bp_device_t b) { return a.backend == b.backend && a.index == b.index; }

// Status of a failed kernel: its own message, or one naming op and backend.
Status KernelError(const bp_op_t* op, DeviceState* dev, bp_status_t rc) {
  std::string msg = bp_last_error_message();
  if (msg.empty()) msg = op->name + ": kernel on backend '" + dev->slot->name + "' failed with " + bp_status_name(rc);
  return Error(rc, msg);
}

bool Overlaps(const bp_tensor_t* out, const bp_tensor_t* in) { return out->storage == in->storage; }

Status NewLike(bp_context_t* ctx, bp_device_t device, const Geometry& g, DLDataType dtype, const char* fn,
               bp_tensor_t** out) {
  return EmptyTensor(ctx, device, g.ndim, g.sizes, dtype, fn, out);
}

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
      case BP_VALUE_TENSOR: k.u.tensor = &dl[i]; break;
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
                 bp_tensor_t** results) {
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
    bp_kernel_call_t call{};
    call.struct_size = sizeof(call);
    call.op_name = op->name.c_str();
    call.args = kargs;
    call.num_args = op->num_args;
    call.num_outputs = op->num_returns;
    call.outputs = out_ptrs;
    call.stream = dev->stream;
    call.device_index = dev->index;
    st = RunKernel(ctx, op, dev, &call);
  }
  if (!st.ok()) {
    for (bp_tensor_t* t : outs) if (t != nullptr) TensorRelease(t);
    return st;
  }
  for (int32_t k = 0; k < op->num_returns; ++k) results[k] = outs[k];
  return Status::Ok();
}

Status RunMeta(bp_context_t* ctx, const bp_op_t* op, Bound& b, std::vector<ListArg>& lists, DeviceState* dev,
               Temps& temps, bp_tensor_t** results) {
  if (op->meta == nullptr) {
    return Error(BP_STATUS_UNIMPLEMENTED, op->name + ": meta function '" + op->meta_name + "' is not available");
  }
  const bp_op_t* f = op->functional;
  const int32_t nmeta = op->num_meta_args;
  MetaCallInfo info{op->name.c_str(), f->arg_names, nmeta};
  // The plan's defaults, without zeroing its large arrays.
  Uninit<MetaPlan> plan_storage;
  MetaPlan& plan = plan_storage.value;
  plan.num_outputs = 1;
  plan.no_output_alias = false;
  for (int32_t i = 0; i < kMaxArgs; ++i) {
    plan.cast_to[i] = DLDataType{};
    plan.rewritten[i].kind = BP_VALUE_NONE;
  }
  BP_RETURN_IF_ERROR(op->meta->infer(info, b.margs, &plan));
  bp_device_t device{dev->slot->id, dev->index};
  const int32_t nout = plan.num_outputs;

  // Outputs: fresh, the caller's out= tensor, or the mutated self.
  bp_tensor_t* outs[kMaxOutputs] = {};
  bp_tensor_t* finals[kMaxOutputs] = {};  // where a temporary output is copied to after the kernel
  bool fresh[kMaxOutputs] = {};
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
        if (!DtypeEqual(g.dtype, want.dtype) && !CanCast(want.dtype, g.dtype)) {
          return Error(BP_STATUS_INVALID_ARGUMENT,
                       op->name + ": result type " + DtypeName(want.dtype) + " can't be cast to the desired output type " +
                           DtypeName(g.dtype) + " of argument '" + op->arg_names[mut] + "'");
        }
      }
      bool needs_temp = !DtypeEqual(g.dtype, want.dtype);
      if (!needs_temp && plan.no_output_alias) {
        for (int32_t i = 0; i < nmeta; ++i) {
          if (i != mut && b.margs[i].kind == BP_VALUE_TENSOR && Overlaps(t, b.tensors[i])) needs_temp = true;
        }
      }
      if (needs_temp) {
        bp_tensor_t* tmp = nullptr;
        BP_RETURN_IF_ERROR(NewLike(ctx, device, want, want.dtype, op->name.c_str(), &tmp));
        temps.add(tmp);
        outs[k] = tmp;
        finals[k] = t;
      } else {
        outs[k] = t;
      }
    } else {
      Status st = NewLike(ctx, device, want, want.dtype, op->name.c_str(), &outs[k]);
      if (!st.ok()) {
        for (int32_t j = 0; j < k; ++j) if (fresh[j]) TensorRelease(outs[j]);
        return st;
      }
      fresh[k] = true;
    }
  }
  auto release_fresh = [&]() {
    for (int32_t k = 0; k < nout; ++k) if (fresh[k]) TensorRelease(outs[k]);
  };

  // Casts: each tensor argument the plan wants in another dtype is copied
  // into a temporary of that dtype.
  for (int32_t i = 0; i < nmeta; ++i) {
    DLDataType want = plan.cast_to[i];
    if (want.bits == 0) continue;
    if (b.margs[i].kind == BP_VALUE_TENSOR && !DtypeEqual(b.geos[i].dtype, want)) {
      bp_tensor_t* tmp = nullptr;
      Status st = NewLike(ctx, device, b.geos[i], want, op->name.c_str(), &tmp);
      if (st.ok()) {
        temps.add(tmp);
        st = CopyInto(ctx, tmp, b.tensors[i]);
      }
      if (!st.ok()) {
        release_fresh();
        return st;
      }
      b.tensors[i] = tmp;
      b.geos[i] = tmp->geo;
    } else if (b.margs[i].kind == BP_VALUE_TENSOR_LIST) {
      ListArg& l = lists[b.list_index[i]];
      for (size_t j = 0; j < l.tensors.size(); ++j) {
        if (DtypeEqual(l.geos[j].dtype, want)) continue;
        bp_tensor_t* tmp = nullptr;
        Status st = NewLike(ctx, device, l.geos[j], want, op->name.c_str(), &tmp);
        if (st.ok()) {
          temps.add(tmp);
          st = CopyInto(ctx, tmp, l.tensors[j]);
        }
        if (!st.ok()) {
          release_fresh();
          return st;
        }
        l.tensors[j] = tmp;
        l.geos[j] = tmp->geo;
      }
    }
  }
  for (int32_t i = 0; i < nmeta; ++i) {
    if (plan.rewritten[i].kind != BP_VALUE_NONE) b.margs[i] = plan.rewritten[i];
  }

  Uninit<Geometry[kMaxOutputs]> out_storage;
  Geometry* out_geos = out_storage.value;
  for (int32_t k = 0; k < nout; ++k) out_geos[k] = outs[k]->geo;
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
  bp_kernel_call_t call{};
  call.struct_size = sizeof(call);
  call.op_name = f->name.c_str();
  call.args = kargs;
  call.num_args = nmeta;
  call.num_outputs = nout;
  call.outputs = out_ptrs;
  call.stream = dev->stream;
  call.device_index = dev->index;
  st = RunKernel(ctx, op, dev, &call);
  for (int32_t k = 0; k < nout && st.ok(); ++k) {
    if (finals[k] != nullptr) st = CopyInto(ctx, finals[k], outs[k]);
  }
  if (!st.ok()) {
    release_fresh();
    return st;
  }
  for (int32_t k = 0; k < nout; ++k) {
    if (fresh[k]) {
      results[k] = outs[k];
    } else {
      bp_tensor_t* r = finals[k] != nullptr ? finals[k] : outs[k];
      TensorRetain(r);
      results[k] = r;
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunKernel(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, bp_kernel_call_t* call) {
  const int32_t backend = dev->slot->id;
  bp_op_t* counted = const_cast<bp_op_t*>(op);
  const KernelEntry& k = KernelFor(op, backend);
  call->backend_data = dev->slot->props_table.backend_data;
  if (k.fn != nullptr) {
    call->kernel_data = k.data;
    bp_status_t rc = k.fn(call);
    if (rc != BP_STATUS_OK) return KernelError(op, dev, rc);
    counted->native_count[backend].fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }
  const KernelEntry* fb = dev->slot->fallback.load(std::memory_order_acquire);
  if (fb != nullptr) {
    call->kernel_data = fb->data;
    bp_status_t rc = fb->fn(call);
    if (rc != BP_STATUS_OK) return KernelError(op, dev, rc);
    counted->native_count[backend].fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }
  if (backend != 0 && KernelFor(op, 0).fn != nullptr) {
    if (ctx->strict.load(std::memory_order_relaxed)) {
      return Error(BP_STATUS_FAILED_PRECONDITION, "strict mode: " + op->functional->name +
                                                      " has no kernel on backend '" + dev->slot->name +
                                                      "' (the CPU fallback is disabled)");
    }
    return CpuFallback(ctx, op, dev, *call);
  }
  return Error(BP_STATUS_UNIMPLEMENTED, op->functional->name + ": not implemented for backend '" + dev->slot->name +
                                            "'" + (backend != 0 ? " (no kernel, no backend fallback, no CPU kernel)"
                                                                : " (no kernel registered; is the cpu plugin loaded?)"));
}

Status CallOp(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
              bp_tensor_t** out_results, int32_t num_results) {
  if (op->ctx != ctx) return Error(BP_STATUS_INVALID_ARGUMENT, "bp_op_call: operator belongs to another context");
  if (op->removed.load(std::memory_order_acquire)) {
    return Error(BP_STATUS_FAILED_PRECONDITION, "bp_op_call: operator '" + op->name + "' was removed (plugin unloaded)");
  }
  if (num_results < 0 || num_results > op->num_returns || (num_results > 0 && out_results == nullptr)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": asked for " + std::to_string(num_results) +
                                                 " results; the operator returns " + std::to_string(op->num_returns));
  }
  if (num_args > 0 && args == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": args is NULL");
  Bound b;
  std::vector<ListArg> lists;
  BP_RETURN_IF_ERROR(BindArgs(op, args, num_args, b, lists));

  // dtypes the operator takes.
  if (op->kind != OpKind::kCustom) {
    Status st;
    ForEachTensor(op, b, lists, [&](int32_t i, int j, bp_tensor_t*&, Geometry& g) {
      if (!st.ok() || (i == op->mutated_arg && op->variant == OpVariant::kOut)) return;
      DtypeId id = DtypeFromDL(g.dtype);
      if (id == DtypeId::kInvalid || (op->dtype_mask & DtypeBit(id)) == 0) {
        st = Error(BP_STATUS_INVALID_ARGUMENT,
                   op->name + ": argument '" + op->arg_names[i] + "'" + (j >= 0 ? "[" + std::to_string(j) + "]" : "") +
                       " has dtype " + DtypeName(g.dtype) + "; " + op->name + " takes " + DtypeList(op->dtype_mask));
      }
    });
    BP_RETURN_IF_ERROR(st);
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

  // The dispatch key: the device of the tensors with dims; 0-dim CPU tensors join it.
  bp_device_t key{0, 0};
  int key_arg = -1;
  bool any = false, key_has_dims = false;
  ForEachTensor(op, b, lists, [&](int32_t i, int, bp_tensor_t*&, Geometry& g) {
    bool dims = g.ndim > 0;
    if (!any || (dims && !key_has_dims) || (!key_has_dims && !dims && key.backend == 0 && g.device.backend != 0)) {
      key = g.device;
      key_arg = i;
      key_has_dims = dims;
      any = true;
    }
  });
  bool joiners = false;
  Status st;
  ForEachTensor(op, b, lists, [&](int32_t i, int, bp_tensor_t*&, Geometry& g) {
    if (!st.ok() || SameDevice(g.device, key)) return;
    if (g.ndim == 0 && g.device.backend == 0 && i != op->mutated_arg) {
      joiners = true;
      return;
    }
    st = Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": expected all tensors on one device, but argument '" +
                                               op->arg_names[i] + "' is on " + DeviceText(ctx, g.device) +
                                               " and argument '" + op->arg_names[key_arg] + "' is on " +
                                               DeviceText(ctx, key));
  });
  BP_RETURN_IF_ERROR(st);
  DeviceState* dev = nullptr;
  BP_RETURN_IF_ERROR(ResolveDevice(ctx, key, op->name.c_str(), &dev));

  Temps temps;
  if (joiners) {
    // 0-dim CPU tensors become 0-dim tensors on the device.
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
  switch (op->kind) {
    case OpKind::kView: BP_RETURN_IF_ERROR(RunView(ctx, op, b, &results[0])); break;
    case OpKind::kComposite: BP_RETURN_IF_ERROR(RunComposite(ctx, op, b, &results[0])); break;
    case OpKind::kCustom: BP_RETURN_IF_ERROR(RunCustom(ctx, op, b, lists, dev, results)); break;
    default: BP_RETURN_IF_ERROR(RunMeta(ctx, op, b, lists, dev, temps, results)); break;
  }
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

using namespace bp::core;

extern "C" BP_API bp_status_t bp_op_call(bp_context_t* context, const bp_op_t* op, const bp_value_t* args,
                                         int32_t num_args, bp_tensor_t** out_results, int32_t num_results) {
  if (context == nullptr || op == nullptr) {
    return SetLastError(BP_STATUS_INVALID_ARGUMENT, "bp_op_call: context and op must not be NULL");
  }
  return ApiCall("bp_op_call", [&]() -> Status {
    ReadSection rs;
    return CallOp(context, op, args, num_args, out_results, num_results);
  });
}
