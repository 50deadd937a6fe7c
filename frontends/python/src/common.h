// Shared by the backplane._C sources: the process-wide context, errors as
// backplane.Error, and the tensor handle Python objects own.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "backplane/backplane.h"

namespace bppy {

namespace py = pybind11;

// The context every Python object uses; created (with plugin discovery) on
// import and never destroyed: tensors may outlive any exit hook we could run.
bp_context_t* Ctx();

// Raises backplane.Error with .status (the bp_status_t name) and .message.
[[noreturn]] void Raise(bp_status_t status, const std::string& message);
// Raises the thread's last error when `st` is not OK, prefixed by `what`.
void Check(bp_status_t st, const char* what);

// One reference on a bp_tensor_t; released when the Python object dies.
class Tensor {
 public:
  explicit Tensor(bp_tensor_t* t) : t_(t) {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() {
    if (t_ != nullptr) bp_tensor_release(t_);
  }
  // Never NULL for a Tensor Python can reach; checked anyway so that a bug
  // raises instead of crashing the interpreter.
  bp_tensor_t* get() const {
    if (t_ == nullptr) Raise(BP_STATUS_FAILED_PRECONDITION, "the tensor was released");
    return t_;
  }

 private:
  bp_tensor_t* t_;
};

// The native tensor of a Tensor argument; a Python object made by
// Tensor.__new__ without __init__ reaches C++ as NULL and raises here.
inline bp_tensor_t* Get(const Tensor* t) {
  if (t == nullptr) Raise(BP_STATUS_INVALID_ARGUMENT, "the Tensor was never initialized");
  return t->get();
}

std::string DTypeName(DLDataType d);
DLDataType DTypeFromName(const std::string& name);  // raises for an unknown name
std::string DeviceString(bp_device_t d);
bp_device_t ParseDevice(const std::string& spec);  // checks the index against the count

void BindTensor(py::module_& m);
void BindOps(py::module_& m);
void BindOnnx(py::module_& m);  // onnx_session.cpp, when the ONNX frontend is built

}  // namespace bppy
