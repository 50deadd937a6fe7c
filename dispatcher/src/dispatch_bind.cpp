// Binding boxed arguments to an operator's schema, with messages naming the
// operator, the argument, what was expected and what came.
#include <string>
#include <vector>

#include "dispatch_internal.h"
#include "dtype.h"

namespace bp::core::detail {
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

// Whether a value of kind k binds to an argument of a's type (the value
// itself is checked while binding).
bool KindFits(const Argument& a, int32_t k) {
  switch (a.type) {
    case ArgType::kTensor:
      return k == BP_VALUE_TENSOR;
    case ArgType::kTensorList:
      return k == BP_VALUE_TENSOR_LIST;
    case ArgType::kInt:
      return k == BP_VALUE_INT;
    case ArgType::kIntList:  // or one int repeated for int[N]
      return k == BP_VALUE_INT_LIST || (k == BP_VALUE_INT && a.list_size > 0 && a.list_size <= BP_MAX_NDIM);
    case ArgType::kFloat:
      return k == BP_VALUE_DOUBLE || k == BP_VALUE_INT;
    case ArgType::kBool:
      return k == BP_VALUE_BOOL;
    case ArgType::kScalar:
      return k == BP_VALUE_INT || k == BP_VALUE_DOUBLE || k == BP_VALUE_BOOL;
    case ArgType::kScalarType:
      return k == BP_VALUE_DTYPE;
    case ArgType::kString:
      return k == BP_VALUE_STRING;
  }
  return false;
}

}  // namespace

std::string DeviceText(bp_context_t* ctx, bp_device_t d) {
  return ctx->slots[d.backend].name + ":" + std::to_string(d.index);
}

Status KeyChooser::Check(bp_context_t* ctx, const bp_op_t* op, int32_t i, bp_device_t d, int32_t ndim,
                         bool* joins) const {
  if (SameDevice(d, key)) return Status::Ok();
  if (ndim == 0 && d.backend == host && i != op->mutated_arg) {
    if (joins != nullptr) *joins = true;
    return Status::Ok();
  }
  return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": expected all tensors on one device, but argument '" +
                                               op->arg_names[i] + "' is on " + DeviceText(ctx, d) + " and argument '" +
                                               op->arg_names[key_arg] + "' is on " + DeviceText(ctx, key));
}

std::string DtypeList(uint32_t mask) {
  std::string s;
  for (int32_t i = 0; i < static_cast<int32_t>(DType::kCount); ++i) {
    if (mask & (1u << i)) {
      if (!s.empty()) s += ", ";
      s += DtypeName(static_cast<DType>(i));
    }
  }
  return s;
}


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
    } else if (KindFits(a, k)) {
      ok = true;
      switch (a.type) {
        case ArgType::kTensor:
          if (v->u.tensor == nullptr) {
            return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' is a NULL tensor");
          }
          b.tensors[i] = v->u.tensor;
          b.geos[i] = v->u.tensor->geo;
          m.kind = BP_VALUE_TENSOR;
          m.tensor = &b.geos[i];
          break;
        case ArgType::kTensorList: {
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
              return Error(BP_STATUS_INVALID_ARGUMENT,
                           op->name + ": argument '" + a.name + "' element " + std::to_string(j) + " is a NULL tensor");
            }
            l.tensors[j] = t;
            l.geos[j] = t->geo;
          }
          for (int64_t j = 0; j < n; ++j) l.ptrs[j] = &l.geos[j];
          m.kind = BP_VALUE_TENSOR_LIST;
          m.tensors = l.ptrs.data();
          m.num_tensors = n;
          break;
        }
        case ArgType::kInt:
          m.kind = k;
          m.i = v->u.i;
          break;
        case ArgType::kIntList:
          if (k == BP_VALUE_INT_LIST) {
            if (v->u.int_list.size < 0 || (v->u.int_list.size > 0 && v->u.int_list.data == nullptr)) {
              return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' has a bad int list");
            }
            m.kind = k;
            m.ints = v->u.int_list.data;
            m.num_ints = v->u.int_list.size;
          } else {  // "stride=2" for int[2]: repeated, as PyTorch does
            for (int32_t j = 0; j < a.list_size; ++j) b.ints[i][j] = v->u.i;
            m.kind = BP_VALUE_INT_LIST;
            m.ints = b.ints[i];
            m.num_ints = a.list_size;
          }
          break;
        case ArgType::kFloat:
          m.kind = BP_VALUE_DOUBLE;
          m.d = k == BP_VALUE_DOUBLE ? v->u.d : static_cast<double>(v->u.i);
          break;
        case ArgType::kBool:
          m.kind = k;
          m.b = v->u.b != 0;
          break;
        case ArgType::kScalar:
          m.kind = k;
          m.i = v->u.i;
          if (k == BP_VALUE_DOUBLE) m.d = v->u.d;
          if (k == BP_VALUE_BOOL) m.b = v->u.b != 0;
          break;
        case ArgType::kScalarType:
          if (DtypeFromDL(v->u.dtype) == DType::kInvalid) {
            return Error(BP_STATUS_INVALID_ARGUMENT,
                         op->name + ": argument '" + a.name + "' is an unsupported dtype " + DtypeName(v->u.dtype));
          }
          m.kind = k;
          m.dtype = v->u.dtype;
          break;
        case ArgType::kString:
          if (v->u.str == nullptr) {
            return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + a.name + "' is a NULL string");
          }
          m.kind = k;
          m.str = v->u.str;
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



Status NewLike(bp_context_t* ctx, bp_device_t device, const Geometry& g, DLDataType dtype, const char* fn,
               bp_tensor_t** out) {
  return EmptyTensor(ctx, device, g.ndim, g.sizes, dtype, fn, out);
}

Status NewOutput(bp_context_t* ctx, bp_device_t device, const Geometry& g, const char* fn, bp_tensor_t** out) {
  BP_RETURN_IF_ERROR(EmptyTensor(ctx, device, g.ndim, g.sizes, g.dtype, fn, out));
  // Same elements, same bytes: only the strides differ.
  if (g.ndim == 4 && g.is_channels_last()) (*out)->geo.set_channels_last_strides();
  return Status::Ok();
}


}  // namespace bp::core::detail
