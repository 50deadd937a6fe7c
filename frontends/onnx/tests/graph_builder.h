// A small ONNX model built in a test with libonnx's protobuf classes
// (inputs, outputs, nodes, float initializers), saved to a file.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace bptest {

struct Graph {
  onnx::ModelProto m;
  explicit Graph(int64_t opset = 14) {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }
  onnx::GraphProto* g() { return m.mutable_graph(); }
  void value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             std::vector<int64_t> dims, int elem = 1) {
    auto* vi = list->Add();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void input(const std::string& n, std::vector<int64_t> dims, int elem = 1) {
    value(g()->mutable_input(), n, dims, elem);
  }
  void output(const std::string& n, std::vector<int64_t> dims) { value(g()->mutable_output(), n, dims); }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name = "") {
    auto* n = g()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  onnx::TensorProto* init(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    auto* t = g()->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return t;
  }
  // A float32 initializer whose data lives in an external file: entries of
  // external_data in order (key, value), e.g. {{"location", "w.bin"}, {"offset", "4"}}.
  onnx::TensorProto* external_init(const std::string& name, std::vector<int64_t> dims,
                                   std::vector<std::pair<std::string, std::string>> entries) {
    auto* t = g()->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& e : entries) {
      auto* kv = t->add_external_data();
      kv->set_key(e.first);
      kv->set_value(e.second);
    }
    return t;
  }
  std::string save(const std::string& path) const {
    std::ofstream o(path, std::ios::binary);
    m.SerializeToOstream(&o);
    return path;
  }
};

}  // namespace bptest
