// The one boxed operator call behind every function of the generated
// backplane.ops: Python values are boxed by the schema type the generator
// passes along (bp_value_t), then bp_op_find + bp_op_call.
#include <pybind11/stl.h>

#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.h"

namespace bppy {
namespace {

// Everything a call's bp_value_t array points into lives here for the call.
struct Boxed {
  std::vector<bp_value_t> values;
  std::vector<std::vector<int64_t>> int_lists;
  std::vector<std::vector<bp_tensor_t*>> tensor_lists;
  std::vector<std::string> strings;
};

std::string TypeName(py::handle v) { return py::str(py::type::handle_of(v).attr("__name__")); }

[[noreturn]] void Mismatch(const std::string& op, const std::string& arg, const std::string& type, py::handle v) {
  Raise(BP_STATUS_INVALID_ARGUMENT, op + ": argument '" + arg + "' expects " + type + ", got " + TypeName(v));
}

bp_tensor_t* AsTensor(const std::string& op, const std::string& arg, const std::string& type, py::handle v) {
  if (!py::isinstance<Tensor>(v)) Mismatch(op, arg, type, v);
  return Get(v.cast<const Tensor*>());
}

int64_t AsInt(const std::string& op, const std::string& arg, const std::string& type, py::handle v) {
  // bool is an int in Python; a schema int given True is more likely a slip.
  if (PyBool_Check(v.ptr()) || PyIndex_Check(v.ptr()) == 0) Mismatch(op, arg, type, v);
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long r = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) Raise(BP_STATUS_OUT_OF_RANGE, op + ": argument '" + arg + "' does not fit in int64");
  if (r == -1 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<int64_t>(r);
}

void Box(Boxed& b, const std::string& op, const std::string& arg, const std::string& type, py::handle v) {
  bp_value_t out{};
  const bool optional = !type.empty() && type.back() == '?';
  const std::string base = optional ? type.substr(0, type.size() - 1) : type;
  if (v.is_none()) {
    if (!optional) Mismatch(op, arg, type, v);
    out.kind = BP_VALUE_NONE;
  } else if (base == "Tensor") {
    out.kind = BP_VALUE_TENSOR;
    out.u.tensor = AsTensor(op, arg, type, v);
  } else if (base == "Tensor[]") {
    if (!py::isinstance<py::sequence>(v) || py::isinstance<py::str>(v)) Mismatch(op, arg, type, v);
    b.tensor_lists.emplace_back();
    for (py::handle e : py::reinterpret_borrow<py::sequence>(v))
      b.tensor_lists.back().push_back(AsTensor(op, arg, type, e));
    out.kind = BP_VALUE_TENSOR_LIST;
    out.u.tensor_list.data = b.tensor_lists.back().data();
    out.u.tensor_list.size = static_cast<int64_t>(b.tensor_lists.back().size());
  } else if (base.rfind("int[", 0) == 0) {
    b.int_lists.emplace_back();
    if (py::isinstance<py::sequence>(v) && !py::isinstance<py::str>(v)) {
      for (py::handle e : py::reinterpret_borrow<py::sequence>(v))
        b.int_lists.back().push_back(AsInt(op, arg, type, e));
    } else {
      b.int_lists.back().push_back(AsInt(op, arg, type, v));  // int[N] accepts one int, as in PyTorch
    }
    out.kind = BP_VALUE_INT_LIST;
    out.u.int_list.data = b.int_lists.back().data();
    out.u.int_list.size = static_cast<int64_t>(b.int_lists.back().size());
  } else if (base == "int") {
    out.kind = BP_VALUE_INT;
    out.u.i = AsInt(op, arg, type, v);
  } else if (base == "bool") {
    if (!PyBool_Check(v.ptr())) Mismatch(op, arg, type, v);
    out.kind = BP_VALUE_BOOL;
    out.u.b = v.ptr() == Py_True ? 1 : 0;
  } else if (base == "float" || base == "Scalar") {
    if (base == "Scalar" && PyBool_Check(v.ptr())) {
      out.kind = BP_VALUE_BOOL;
      out.u.b = v.ptr() == Py_True ? 1 : 0;
    } else if (base == "Scalar" && PyIndex_Check(v.ptr()) != 0) {
      out.kind = BP_VALUE_INT;
      out.u.i = AsInt(op, arg, type, v);
    } else if (PyFloat_Check(v.ptr()) || PyIndex_Check(v.ptr()) != 0) {
      out.kind = BP_VALUE_DOUBLE;
      out.u.d = PyFloat_AsDouble(v.ptr());
      if (PyErr_Occurred()) throw py::error_already_set();
    } else {
      Mismatch(op, arg, type, v);
    }
  } else if (base == "ScalarType") {
    out.kind = BP_VALUE_DTYPE;
    // "float32", numpy.dtype("float32"), numpy.float32 (a type), torch.float32.
    out.u.dtype = DTypeFromName(PyType_Check(v.ptr()) ? py::str(v.attr("__name__")) : py::str(v));
  } else if (base == "str") {
    if (!py::isinstance<py::str>(v)) Mismatch(op, arg, type, v);
    b.strings.push_back(v.cast<std::string>());
    out.kind = BP_VALUE_STRING;
  } else {
    Raise(BP_STATUS_UNIMPLEMENTED, op + ": argument '" + arg + "' has type " + type + ", not callable from Python");
  }
  b.values.push_back(out);
}

bp_op_t* Find(const std::string& name) {
  static std::mutex mu;
  static std::unordered_map<std::string, bp_op_t*> cache;  // handles live as long as the context
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  bp_op_t* op = nullptr;
  Check(bp_op_find(Ctx(), name.c_str(), &op), name.c_str());
  cache[name] = op;
  return op;
}

py::object Call(const std::string& name, const std::vector<std::string>& names, const std::vector<std::string>& types,
                const py::tuple& values, int32_t num_results) {
  if (names.size() != types.size() || values.size() != names.size() || num_results < 0 || num_results > 8) {
    Raise(BP_STATUS_INVALID_ARGUMENT, name + ": malformed call (generated code and _C disagree)");
  }
  bp_op_t* op = Find(name);
  Boxed b;
  b.strings.reserve(values.size());  // string pointers must stay put
  for (size_t i = 0; i < names.size(); ++i) Box(b, name, names[i], types[i], values[i]);
  size_t s = 0;
  for (bp_value_t& v : b.values) {
    if (v.kind == BP_VALUE_STRING) v.u.str = b.strings[s++].c_str();
  }
  std::vector<bp_tensor_t*> results(static_cast<size_t>(num_results), nullptr);
  bp_status_t st;
  {
    py::gil_scoped_release nogil;  // kernels may take a while; tensors are held by `values`
    st = bp_op_call(Ctx(), op, b.values.data(), static_cast<int32_t>(b.values.size()),
                    num_results > 0 ? results.data() : nullptr, num_results);
  }
  if (st != BP_STATUS_OK) Raise(st, bp_last_error_message());
  if (num_results == 0) return py::none();
  if (num_results == 1) return py::cast(std::make_unique<Tensor>(results[0]));
  py::tuple out(num_results);
  for (int32_t i = 0; i < num_results; ++i) out[i] = py::cast(std::make_unique<Tensor>(results[i]));
  return std::move(out);
}

}  // namespace

void BindOps(py::module_& m) {
  m.def("call", &Call, py::arg("name"), py::arg("names"), py::arg("types"), py::arg("values"), py::arg("num_results"));
  m.def(
      "set_kernel_masked",
      [](const std::string& op, const std::string& backend, bool masked) {
        int32_t id = -1;
        Check(bp_backend_find(Ctx(), backend.c_str(), &id), ("backend '" + backend + "'").c_str());
        Check(bp_op_set_kernel_masked(Ctx(), Find(op), id, masked ? 1 : 0), ("mask " + op).c_str());
      },
      py::arg("op"), py::arg("backend"), py::arg("masked"));
  m.def("op_names", [] {
    int32_t n = 0;
    Check(bp_op_count(Ctx(), &n), "op count");
    std::vector<std::string> out;
    for (int32_t i = 0; i < n; ++i) {
      bp_op_t* op = nullptr;
      bp_op_info_t info{};
      info.struct_size = sizeof(info);
      if (bp_op_at(Ctx(), i, &op) == BP_STATUS_OK && bp_op_info(op, &info) == BP_STATUS_OK) out.push_back(info.name);
    }
    return out;
  });
}

}  // namespace bppy
