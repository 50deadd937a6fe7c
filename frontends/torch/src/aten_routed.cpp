// Every ATen operator that has a Backplane schema of the same name runs
// through Backplane's dispatcher on PrivateUse1: the plugin's kernel where it
// has one, else Backplane's own fallback. The registrations are made at init
// from the op model (bp_op_count / bp_op_info), one boxed kernel for all, so
// a plugin built against any torch gets the same set and nothing here lists
// operators by hand.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/TypeProperties.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>
#include <torch/library.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "bridge.h"

namespace bptorch {
namespace {

// The schema type as one string, with SymInt read as int (1.13 marks sizes
// SymInt; Backplane's schemas say int).
std::string TypeKey(const c10::Argument& a) {
  std::string s = a.real_type()->str();
  for (size_t at = s.find("SymInt"); at != std::string::npos; at = s.find("SymInt", at)) s.replace(at, 6, "int");
  return s;
}

// Why the ATen operator cannot take the Backplane kernel as is ("" if it can).
std::string Mismatch(const c10::FunctionSchema& aten, const c10::FunctionSchema& bp) {
  if (aten.arguments().size() != bp.arguments().size()) return "argument count differs";
  if (aten.returns().size() != bp.returns().size()) return "return count differs";
  for (size_t i = 0; i < aten.arguments().size(); ++i) {
    const c10::Argument& a = aten.arguments()[i];
    const c10::Argument& b = bp.arguments()[i];
    if (TypeKey(a) != TypeKey(b)) return "argument '" + a.name() + "' is " + TypeKey(a) + " in ATen, " + TypeKey(b);
    if (WritesAlias(a) != WritesAlias(b)) return "argument '" + a.name() + "' mutability differs";
  }
  for (const c10::Argument& r : aten.returns()) {
    if (r.alias_info() != nullptr && !r.alias_info()->isWrite()) return "a view (aliases its input)";
    if (TypeKey(r) != "Tensor") return "returns " + TypeKey(r);
  }
  return "";
}

// Everything a call's bp_value_t array points into lives here for the call.
// Inline capacities cover common operators without a heap allocation (this
// runs for every call). values and strings are reserved to the argument
// count up front, so the pointers handed out stay valid (a short string's
// characters would move with it); the lists' heap buffers never move.
struct Boxed {
  c10::SmallVector<bp_value_t, 12> values;
  c10::SmallVector<bp_tensor_t*, 8> owned;  // released after the call
  c10::SmallVector<std::vector<int64_t>, 4> int_lists;
  c10::SmallVector<std::vector<bp_tensor_t*>, 2> tensor_lists;
  c10::SmallVector<std::string, 12> strings;
  ~Boxed() {
    for (bp_tensor_t* t : owned) bp_tensor_release(t);
  }
  bp_tensor_t* Wrap(const at::Tensor& t, const std::string& op, const c10::Argument& arg) {
    owned.push_back(nullptr);
    owned.back() = ToBackplane(t, op, arg.name().c_str());
    return owned.back();
  }
};

// The backend of the first device tensor among the arguments (the call's).
int32_t BackendOfCall(const c10::ArrayRef<c10::IValue>& args) {
  for (const c10::IValue& v : args) {
    if (v.isTensor() && OnDevice(v.toTensor())) return SlotOf(v.toTensor().device().index()).device.backend;
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) {
        if (OnDevice(t)) return SlotOf(t.device().index()).device.backend;
      }
    }
  }
  return Get().devices.front().device.backend;
}

// A Python number torch wrapped as a 0-dim tensor (float64 or int64) takes
// part in type promotion by its category only (x.sum() * 0.5 stays float32);
// Backplane sees plain 0-dim tensors, so each wrapped number is cast to the
// dtype torch's promotion gives the call's tensors (at::native::result_type).
void NarrowWrappedNumbers(c10::ArrayRef<c10::IValue> args, std::vector<c10::IValue>* narrowed) {
  bool any = false;
  for (const c10::IValue& v : args) {
    any = any || (v.isTensor() && v.toTensor().defined() && v.toTensor().unsafeGetTensorImpl()->is_wrapped_number());
  }
  if (!any) return;
  at::native::ResultTypeState state{};
  for (const c10::IValue& v : args) {
    if (v.isTensor() && v.toTensor().defined()) state = at::native::update_result_type_state(v.toTensor(), state);
  }
  const at::ScalarType common = at::native::result_type(state);
  narrowed->assign(args.begin(), args.end());
  for (c10::IValue& v : *narrowed) {
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().unsafeGetTensorImpl()->is_wrapped_number() &&
        v.toTensor().scalar_type() != common) {
      v = c10::IValue(v.toTensor().to(common));
    }
  }
}

// Backplane's counters for one operator on the call's backend: read before
// and after a call, they tell where it ran and what it copied.
struct CallCounts {
  uint64_t native = 0, fallback = 0, bytes_moved = 0;
  static CallCounts Take(const Bridge& br, int32_t backend, bp_op_t* op) {
    CallCounts c;
    bp_native_count(br.ctx, op, backend, &c.native);
    bp_fallback_count(br.ctx, op, backend, &c.fallback);
    if (backend == 0) return c;  // backend 0's memory is host memory: its transfer counters stay 0
    bp_transfer_stats_t t{};
    t.struct_size = sizeof(t);
    bp_transfer_stats(br.ctx, backend, &t);
    c.bytes_moved = t.host_to_device_bytes + t.device_to_host_bytes;
    return c;
  }
};

// Whether every tensor argument, dtype argument (sum(dtype=torch.int16)) and
// Scalar has a Backplane equivalent. Anything else (a complex or int16
// tensor: autograd of torch's FFTs calls mul.out on complex gradients) is not
// Backplane's case: it takes torch's CPU fallback, which computes it where
// the host can address the device memory.
bool AllBackplaneDTypes(const c10::FunctionSchema& schema, c10::ArrayRef<c10::IValue> args) {
  DLDataType dt{};
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::IValue& v = args[i];
    if (v.isTensor() && v.toTensor().defined() && !TryDTypeOf(v.toTensor().scalar_type(), &dt)) return false;
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) {
        if (t.defined() && !TryDTypeOf(t.scalar_type(), &dt)) return false;
      }
    }
    if (v.isComplexDouble()) return false;
    if (v.isInt() && i < schema.arguments().size()) {
      c10::TypePtr type = schema.arguments()[i].real_type();  // type() says int for a ScalarType
      if (type->kind() == c10::TypeKind::OptionalType) type = type->castRaw<c10::OptionalType>()->getElementType();
      if (type->kind() == c10::TypeKind::ScalarTypeType && !TryDTypeOf(static_cast<at::ScalarType>(v.toInt()), &dt))
        return false;
    }
  }
  return true;
}

// Whether Backplane refused a write whose memory overlaps an input or itself
// (dispatcher/src/meta/overlap.cpp words it as torch does).
bool IsOverlapRefusal(const char* msg) {
  return msg != nullptr && std::strstr(msg, "unsupported operation: ") != nullptr &&
         std::strstr(msg, "refer") != nullptr && std::strstr(msg, "to a single memory location") != nullptr;
}

class RoutedKernel final : public c10::OperatorKernel {
 public:
  RoutedKernel(bp_op_t* op, std::string name) : op_(op), name_(std::move(name)), counters_(CountersFor(name_)) {}

  void operator()(const c10::OperatorHandle& handle, c10::DispatchKeySet, torch::jit::Stack* stack) {
    const c10::FunctionSchema& schema = handle.schema();
    const size_t n = schema.arguments().size();
    auto args = torch::jit::last(*stack, n);
    if (!AllBackplaneDTypes(schema, args)) {
      TorchCpuFallback(handle, stack);
      return;
    }
    std::vector<c10::IValue> narrowed;  // the arguments with wrapped numbers cast, when there are any
    NarrowWrappedNumbers(args, &narrowed);
    const c10::ArrayRef<c10::IValue> boxed_args = narrowed.empty() ? args : c10::ArrayRef<c10::IValue>(narrowed);
    Boxed b;
    b.values.reserve(n);
    b.strings.reserve(n);
    for (size_t i = 0; i < n; ++i) b.values.push_back(Box(b, schema.arguments()[i], boxed_args[i]));

    const Bridge& br = Get();
    const int32_t backend = BackendOfCall(args);
    const CallCounts before = CallCounts::Take(br, backend, op_);
    const size_t nret = schema.returns().size();
    c10::SmallVector<bp_tensor_t*, 4> results(nret, nullptr);
    const bp_status_t st =
        bp_op_call(br.ctx, op_, b.values.data(), static_cast<int32_t>(n), results.data(), static_cast<int32_t>(nret));
    if (st == BP_STATUS_INVALID_ARGUMENT && IsOverlapRefusal(bp_last_error_message())) {
      // Backplane's overlap check follows torch's (MemOverlap.cpp) and says
      // what torch says: raised as is. torch's CPU fallback would run on
      // host copies, or host aliases of storages of their own, where torch's
      // check cannot see the overlap, and write order-dependent values.
      for (bp_tensor_t*& r : results) bp_tensor_release(r);
      Check(st, name_);
    }
    if (st == BP_STATUS_INVALID_ARGUMENT) {
      // Backplane's meta function refused, before anything ran, arguments
      // that torch's semantics may accept (torch's OpInfo run found: integer
      // addmm/linear/avg_pool2d, an empty out= tensor torch resizes, a
      // negative integer exponent inside a tensor, scatter_reduce 'mean').
      // Such a case is not routed: torch's CPU fallback runs it exactly, or
      // raises torch's own error for input torch refuses too.
      for (bp_tensor_t*& r : results) {
        bp_tensor_release(r);
        r = nullptr;
      }
      TorchCpuFallback(handle, stack);
      return;
    }
    Check(st, name_);
    const CallCounts after = CallCounts::Take(br, backend, op_);
    const bool fell_back = after.fallback > before.fallback && after.native == before.native;
    Count(counters_, fell_back ? Path::kBackplaneFallback : Path::kPlugin, after.bytes_moved - before.bytes_moved);

    // Results: a mutated argument is returned as the very torch tensor it
    // came in as; a new tensor is taken over from Backplane.
    c10::SmallVector<c10::IValue, 4> outs;
    for (size_t r = 0; r < nret; ++r) {
      const int written = WrittenArgument(schema, schema.returns()[r]);
      if (written >= 0) {
        bp_tensor_release(results[r]);
        outs.push_back(args[written]);
      } else {
        outs.emplace_back(FromBackplane(results[r], name_));
      }
      results[r] = nullptr;
    }
    torch::jit::drop(*stack, n);
    for (c10::IValue& v : outs) stack->push_back(std::move(v));
  }

 private:
  bp_value_t Box(Boxed& b, const c10::Argument& arg, const c10::IValue& v) {
    auto what = [&] { return name_ + " (argument '" + arg.name() + "')"; };
    bp_value_t out{};
    const c10::TypePtr& type = arg.real_type();
    c10::TypePtr base = type;
    if (type->kind() == c10::TypeKind::OptionalType) {
      if (v.isNone()) {
        out.kind = BP_VALUE_NONE;
        return out;
      }
      base = type->castRaw<c10::OptionalType>()->getElementType();
    }
    switch (base->kind()) {
      case c10::TypeKind::TensorType:
        if (!v.toTensor().defined()) {
          out.kind = BP_VALUE_NONE;
        } else {
          out.kind = BP_VALUE_TENSOR;
          out.u.tensor = b.Wrap(v.toTensor(), name_, arg);
        }
        break;
      case c10::TypeKind::ListType: {
        if (v.isTensorList()) {
          b.tensor_lists.emplace_back();
          for (const at::Tensor& t : v.toTensorVector()) b.tensor_lists.back().push_back(b.Wrap(t, name_, arg));
          out.kind = BP_VALUE_TENSOR_LIST;
          out.u.tensor_list.data = b.tensor_lists.back().data();
          out.u.tensor_list.size = static_cast<int64_t>(b.tensor_lists.back().size());
        } else {
          TORCH_CHECK(v.isIntList(), what(), ": expected a list of ints, got ", v.tagKind());
          b.int_lists.push_back(v.toIntVector());
          out.kind = BP_VALUE_INT_LIST;
          out.u.int_list.data = b.int_lists.back().data();
          out.u.int_list.size = static_cast<int64_t>(b.int_lists.back().size());
        }
        break;
      }
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType:
        out.kind = BP_VALUE_INT;
        out.u.i = v.isInt() ? v.toInt() : v.toSymInt().expect_int();
        break;
      case c10::TypeKind::FloatType:
        out.kind = BP_VALUE_DOUBLE;
        out.u.d = v.toDouble();
        break;
      case c10::TypeKind::BoolType:
        out.kind = BP_VALUE_BOOL;
        out.u.b = v.toBool() ? 1 : 0;
        break;
      case c10::TypeKind::NumberType:  // Scalar
        if (v.isBool()) {
          out.kind = BP_VALUE_BOOL;
          out.u.b = v.toBool() ? 1 : 0;
        } else if (v.isInt()) {
          out.kind = BP_VALUE_INT;
          out.u.i = v.toInt();
        } else {
          TORCH_CHECK(v.isDouble(), what(), ": a complex Scalar has no Backplane equivalent");
          out.kind = BP_VALUE_DOUBLE;
          out.u.d = v.toDouble();
        }
        break;
      case c10::TypeKind::ScalarTypeType:
        out.kind = BP_VALUE_DTYPE;
        if (!TryDTypeOf(static_cast<at::ScalarType>(v.toInt()), &out.u.dtype))
          DTypeOf(static_cast<at::ScalarType>(v.toInt()), what());
        break;
      case c10::TypeKind::StringType:
        b.strings.push_back(v.toStringRef());
        out.kind = BP_VALUE_STRING;
        out.u.str = b.strings.back().c_str();
        break;
      default:
        TORCH_CHECK(false, what(), ": type ", type->str(), " has no Backplane equivalent");
    }
    return out;
  }

  bp_op_t* op_;
  std::string name_;
  OpCounters* counters_;
};

// Whether the bridge implements the ATen operator itself: one of its own
// PrivateUse1 kernels (aten_native.cpp, registered when the module loads),
// or copy_, whose ATen kernel reaches the bridge's _copy_from.
bool IsNative(const std::string& aten_name) {
  const std::vector<std::string>& native = NativeOps();
  return aten_name == "copy_" || std::find(native.begin(), native.end(), aten_name) != native.end();
}

// The ATen operator for a Backplane one: the same name, else (out= variants
// are named differently: Backplane's "eq.out" is ATen's "eq.Tensor_out") the
// operator of the same base name whose schema matches exactly.
c10::optional<c10::OperatorHandle> FindAten(const std::string& name, const c10::FunctionSchema& bp, std::string* why) {
  const size_t dot = name.find('.');
  const std::string base = "aten::" + name.substr(0, dot);
  auto handle = c10::Dispatcher::singleton().findSchema({base, dot == std::string::npos ? "" : name.substr(dot + 1)});
  if (handle.has_value()) {
    *why = Mismatch(handle->schema(), bp);
    return handle;
  }
  for (const c10::OperatorName& n : c10::Dispatcher::singleton().getAllOpNames()) {
    if (n.name != base) continue;
    auto h = c10::Dispatcher::singleton().findSchema(n);
    if (h.has_value() && Mismatch(h->schema(), bp).empty()) {
      why->clear();
      return h;
    }
  }
  *why = "no ATen operator with this name or schema";
  return c10::nullopt;
}

// The ATen names ("add.Tensor") RegisterRoutedOps registered.
std::vector<std::string>& RoutedNames() {
  static std::vector<std::string> names;
  return names;
}

}  // namespace

const std::vector<std::string>& RoutedOps() { return RoutedNames(); }

int RegisterRoutedOps(std::vector<std::pair<std::string, std::string>>* skipped) {
  const Bridge& br = Get();
  // Lives for the process: torch removes the registrations with the Library.
  static auto* lib =
      new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  int32_t count = 0;
  Check(bp_op_count(br.ctx, &count), "backplane.torch.init");
  int registered = 0;
  for (int32_t i = 0; i < count; ++i) {
    bp_op_t* op = nullptr;
    bp_op_info_t info{};
    info.struct_size = sizeof(info);
    if (bp_op_at(br.ctx, i, &op) != BP_STATUS_OK || bp_op_info(op, &info) != BP_STATUS_OK) continue;
    const std::string name = info.name;
    if (name.find("::") != std::string::npos) continue;  // a vendor namespace: not an ATen operator
    c10::optional<c10::FunctionSchema> bp_schema;
    try {
      bp_schema = torch::jit::parseSchema(info.schema);
    } catch (const std::exception& e) {
      if (skipped != nullptr) skipped->emplace_back(name, std::string("schema not parsed by torch: ") + e.what());
      continue;
    }
    std::string why;
    auto handle = FindAten(name, *bp_schema, &why);
    std::string aten_name;  // "add.Tensor", as torch names it
    if (handle.has_value()) {
      const c10::OperatorName& n = handle->operator_name();
      aten_name = n.name.substr(6) + (n.overload_name.empty() ? "" : "." + n.overload_name);
      if (IsNative(aten_name)) {
        why = "implemented by the bridge itself";
      } else if (handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) {
        why = "composite in ATen: torch decomposes it into other operators";
      }
    }
    if (!why.empty()) {
      if (skipped != nullptr) skipped->emplace_back(name, why);
      continue;
    }
    try {
      lib->impl(aten_name.c_str(),
                torch::CppFunction::makeFromBoxedFunctor(std::make_unique<RoutedKernel>(op, "aten::" + aten_name)));
      ++registered;
      RoutedNames().push_back(aten_name);
    } catch (const c10::Error& e) {  // e.g. two Backplane operators matching one ATen schema
      if (skipped != nullptr) skipped->emplace_back(name, e.what_without_backtrace());
    }
  }
  return registered;
}

}  // namespace bptorch
