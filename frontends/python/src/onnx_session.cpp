// backplane._C.OnnxSession: bponnx::Session (the executor behind bp-run) for
// Python. Inputs and outputs are backplane Tensors; backplane/onnx.py turns
// numpy arrays into them and back. Built when the ONNX frontend is.
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "bponnx/observe.h"
#include "common.h"

namespace bppy {
namespace {

// One node of the last run, as bp-run --trace prints it.
struct NodeRecord {
  size_t index;
  std::string name, op_type, path, shapes;
  double seconds;
};

class OnnxSession {
 public:
  OnnxSession(const std::string& path, const std::string& device) : dev_(ParseDevice(device)) {
    std::string err;
    if (!bponnx::Model::load(path, &model_, &err)) Raise(BP_STATUS_INVALID_ARGUMENT, err);
    session_ = std::make_unique<bponnx::Session>(Ctx(), dev_, &model_);
    if (!session_->prepare(&err)) {
      Raise(session_->not_mapped().empty() ? BP_STATUS_INTERNAL : BP_STATUS_UNIMPLEMENTED, err);
    }
  }

  // Runs the graph; with trace, records every node (the device is
  // synchronized after each, so a traced run is slower).
  py::list Run(const py::dict& inputs, bool trace) {
    std::map<std::string, bp_tensor_t*> in;
    for (auto kv : inputs) {
      const std::string name = py::str(kv.first);
      if (!py::isinstance<Tensor>(kv.second)) {
        Raise(BP_STATUS_INVALID_ARGUMENT, "onnx.Session.run: input '" + name + "' must be a backplane.Tensor");
      }
      in[name] = Get(kv.second.cast<const Tensor*>());
    }
    records_.clear();
    if (trace) {
      session_->set_observer([this](const bponnx::NodeRun& nr) {
        records_.push_back({nr.index, bponnx::node_display_name(*nr.node), nr.node->op_type,
                            bponnx::node_path_name(bponnx::node_path(Ctx(), dev_.backend, nr.ops)),
                            bponnx::input_shapes(*nr.inputs), nr.seconds});
      });
    } else {
      session_->set_observer(nullptr);
    }
    std::vector<bp_tensor_t*> out;
    std::string err;
    bool ok = false;
    {
      py::gil_scoped_release release;  // the run may be long; the inputs stay referenced by the dict
      ok = session_->run(in, &out, &err);
    }
    if (!ok) Raise(session_->not_mapped().empty() ? BP_STATUS_INVALID_ARGUMENT : BP_STATUS_UNIMPLEMENTED, err);
    py::list result;
    for (bp_tensor_t* t : out) result.append(py::cast(std::make_unique<Tensor>(t)));
    return result;
  }

  static py::list Values(const std::vector<bponnx::ValueInfo>& values) {
    py::list l;
    for (const bponnx::ValueInfo& v : values) {
      py::dict d;
      d["name"] = v.name;
      d["elem_type"] = v.elem_type != 0 ? py::object(py::str(bponnx::onnx_type_name(v.elem_type))) : py::none();
      py::list dims;
      for (size_t i = 0; i < v.dims.size(); ++i) {
        if (v.dims[i] >= 0) {
          dims.append(v.dims[i]);
        } else {
          dims.append(i < v.dim_names.size() && !v.dim_names[i].empty() ? py::object(py::str(v.dim_names[i]))
                                                                        : py::none());
        }
      }
      d["shape"] = v.has_shape ? py::object(dims) : py::none();
      l.append(d);
    }
    return l;
  }

  py::list Inputs() const { return Values(session_->model().inputs()); }
  py::list Outputs() const { return Values(session_->model().outputs()); }
  bool Replayed() const { return session_->last_run_replayed(); }

  py::list Trace() const {
    py::list l;
    for (const NodeRecord& r : records_) {
      py::dict d;
      d["index"] = r.index;
      d["node"] = r.name;
      d["op_type"] = r.op_type;
      d["path"] = r.path;
      d["input_shapes"] = r.shapes;
      d["seconds"] = r.seconds;
      l.append(d);
    }
    return l;
  }

 private:
  bp_device_t dev_;
  bponnx::Model model_;
  std::unique_ptr<bponnx::Session> session_;
  std::vector<NodeRecord> records_;
};

}  // namespace

void BindOnnx(py::module_& m) {
  py::class_<OnnxSession>(m, "OnnxSession")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"), py::arg("device"))
      .def("run", &OnnxSession::Run, py::arg("inputs"), py::arg("trace") = false)
      .def_property_readonly("inputs", &OnnxSession::Inputs)
      .def_property_readonly("outputs", &OnnxSession::Outputs)
      .def_property_readonly("last_run_replayed", &OnnxSession::Replayed)
      .def_property_readonly("trace", &OnnxSession::Trace);
}

}  // namespace bppy
