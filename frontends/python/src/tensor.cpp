// backplane._C.Tensor: a reference on a bp_tensor_t, host copies both ways
// and the DLPack protocol's methods (capsules: dlpack_capsule.cpp).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <vector>

#include "common.h"
#include "dlpack_capsule.h"

namespace bppy {
namespace {

DLDataType FromNumpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'b' && size == 1) return DLDataType{BP_DTYPE_CODE_BOOL, 8, 1};
  if (kind == 'u' && size == 1) return DLDataType{kDLUInt, 8, 1};
  if (kind == 'i' && (size == 1 || size == 4 || size == 8))
    return DLDataType{kDLInt, static_cast<uint8_t>(size * 8), 1};
  if (kind == 'f' && (size == 2 || size == 4 || size == 8))
    return DLDataType{kDLFloat, static_cast<uint8_t>(size * 8), 1};
  Raise(BP_STATUS_INVALID_ARGUMENT, "numpy dtype '" + py::str(py::handle(dt)).cast<std::string>() +
                                        "' has no Backplane dtype (bool, uint8, int8, int32, int64, float16, "
                                        "float32, float64)");
}

py::dtype ToNumpy(DLDataType d) {
  std::string n = DTypeName(d);
  if (n == "bfloat16" || n.rfind("unknown", 0) == 0) {
    Raise(BP_STATUS_UNIMPLEMENTED, "numpy has no dtype for " + n + "; convert with ops.to first");
  }
  return py::dtype(n == "bool" ? "bool" : n);
}

// A new tensor on `device` holding a copy of a C-contiguous numpy array.
std::unique_ptr<Tensor> FromHost(const py::array& a, const std::string& device) {
  bp_device_t dev = ParseDevice(device);
  if (!(a.flags() & py::array::c_style)) Raise(BP_STATUS_INVALID_ARGUMENT, "from_host needs a C-contiguous array");
  std::vector<int64_t> sizes(a.shape(), a.shape() + a.ndim());
  bp_tensor_t* t = nullptr;
  Check(bp_tensor_from_host(Ctx(), dev, static_cast<int32_t>(sizes.size()), sizes.data(), FromNumpy(a.dtype()),
                            a.data(), static_cast<size_t>(a.nbytes()), &t),
        "tensor");
  return std::make_unique<Tensor>(t);
}

py::array Numpy(const Tensor* self) {
  bp_tensor_t* t = Get(self);
  std::vector<py::ssize_t> shape(bp_tensor_sizes(t), bp_tensor_sizes(t) + bp_tensor_ndim(t));
  py::array out(ToNumpy(bp_tensor_dtype(t)), shape);
  Check(bp_tensor_to_host(t, out.mutable_data(), static_cast<size_t>(out.nbytes())), "numpy");
  return out;
}

std::vector<int64_t> Shape(const Tensor* self) {
  bp_tensor_t* t = Get(self);
  return {bp_tensor_sizes(t), bp_tensor_sizes(t) + bp_tensor_ndim(t)};
}

}  // namespace

void BindTensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", R"(An n-dimensional array on one Backplane device.

Holds one reference on the native tensor; the memory lives while any Tensor,
view or DLPack consumer still refers to it. Make one with backplane.tensor()
or backplane.from_dlpack(), or get one from backplane.ops.)")
      .def_property_readonly(
          "shape", [](const Tensor* t) { return py::tuple(py::cast(Shape(t))); },
          "The sizes, a tuple of ints (() for a 0-dim tensor).")
      .def_property_readonly(
          "strides",
          [](const Tensor* t) {
            bp_tensor_t* p = Get(t);
            return py::tuple(
                py::cast(std::vector<int64_t>(bp_tensor_strides(p), bp_tensor_strides(p) + bp_tensor_ndim(p))));
          },
          "The strides in elements (not bytes, unlike numpy).")
      .def_property_readonly(
          "dtype", [](const Tensor* t) { return DTypeName(bp_tensor_dtype(Get(t))); },
          "The dtype name as numpy spells it: 'float32', 'int64', 'bool', ...")
      .def_property_readonly(
          "device", [](const Tensor* t) { return DeviceString(bp_tensor_device(Get(t))); },
          "The device, 'backend:index' ('cpu:0', 'opencl:0').")
      .def_property_readonly("ndim", [](const Tensor* t) { return bp_tensor_ndim(Get(t)); })
      .def_property_readonly("numel", [](const Tensor* t) { return bp_tensor_numel(Get(t)); })
      .def("is_contiguous", [](const Tensor* t) { return bp_tensor_is_contiguous(Get(t)) != 0; })
      .def("numpy", &Numpy, R"(A new numpy array holding a copy of the elements (any device).

Always a copy, so it stays valid whatever happens to the tensor; for a
zero-copy view of a CPU tensor use numpy.from_dlpack(tensor). Raises
backplane.Error (UNIMPLEMENTED) for bfloat16, which numpy lacks.)")
      .def(
          "to",
          [](const Tensor* t, const std::string& device) {
            bp_tensor_t* out = nullptr;
            Check(bp_tensor_to_device(Get(t), ParseDevice(device), &out), "to");
            return std::make_unique<Tensor>(out);
          },
          py::arg("device"), "A new contiguous copy on `device` ('cpu', 'vendor_sim:0', ...).")
      .def(
          "__dlpack__",
          [](const Tensor* t, const py::object&, const py::object& max_version, const py::object& dl_device,
             const py::object& copy) { return ToDlpack(t, max_version, dl_device, copy); },
          py::arg("stream") = py::none(), py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none(),
          R"(A DLPack capsule viewing this tensor's memory (zero-copy), as the Python array API says.

max_version None or below (1, 0): a legacy capsule named 'dltensor'
(DLPack 0.6); refused (BufferError) for a read-only tensor, which it cannot
mark. max_version >= (1, 0): a capsule named 'dltensor_versioned' (DLPack
1.0, DLManagedTensorVersioned) whose flags say READ_ONLY for a read-only or
constant tensor and IS_COPIED for copy=True. copy=True exports a new copy
on the same device; copy=False and None never copy (none is ever needed).
dl_device must be None or the tensor's own __dlpack_device__() (BufferError
naming both otherwise). The capsule holds a reference on the storage; a
consumer renames it 'used_dltensor[_versioned]' and calls the deleter when
done. `stream` is accepted and ignored: Backplane's copies and kernels on
the tensor are complete when an operator returns a result to Python.)")
      .def_property_readonly(
          "is_read_only", [](const Tensor* t) { return bp_tensor_is_read_only(Get(t)) != 0; },
          "True when the memory came from a read-only DLPack 1.x tensor: operators refuse to write it.")
      .def("__dlpack_device__", &DlpackDevice, "(DLDeviceType, device index) of the tensor's memory.")
      .def("__repr__", [](const Tensor* t) {
        std::string s = "backplane.Tensor(shape=(";
        for (int64_t v : Shape(t)) s += std::to_string(v) + ",";
        return s + "), dtype=" + DTypeName(bp_tensor_dtype(Get(t))) +
               ", device=" + DeviceString(bp_tensor_device(Get(t))) + ")";
      });
  m.def("from_host", &FromHost, py::arg("array"), py::arg("device"));
  m.def("from_capsule", &FromCapsule, py::arg("capsule"), py::arg("writable") = false);
  m.def("empty", [](const std::vector<int64_t>& shape, const std::string& dtype, const std::string& device) {
    bp_tensor_t* t = nullptr;
    Check(bp_tensor_empty(Ctx(), ParseDevice(device), static_cast<int32_t>(shape.size()), shape.data(),
                          DTypeFromName(dtype), &t),
          "empty");
    return std::make_unique<Tensor>(t);
  });
}

}  // namespace bppy
