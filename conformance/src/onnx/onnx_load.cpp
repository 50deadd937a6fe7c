// Loading an ONNX node test with libonnx's generated protobuf classes
// (ModelProto, TensorProto). Built only when libonnx-dev and protobuf are found.
#include <dirent.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "bponnx/graph.h"
#include "bponnx/proto.h"
#include "onnx/onnx_model.h"

namespace bpc {
namespace onnx_corpus {

bool onnx_support_built() { return true; }

namespace {

bool read_file(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream os;
  os << in.rdbuf();
  *bytes = os.str();
  return true;
}

// Element `k` of a typed repeated field as raw little-endian bytes of dtype `d`.
void append_bits(DType d, uint64_t bits, std::vector<uint8_t>* out) {
  const size_t n = dtype_itemsize(d);
  for (size_t b = 0; b < n; ++b) out->push_back(static_cast<uint8_t>(bits >> (8 * b)));
}

// `declared` is the graph's element type for the value (0: unknown). ONNX's
// test generator stores bfloat16 data as uint16 bit patterns; the declared
// type says how to read them.
bool tensor_from_proto(const onnx::TensorProto& p, OnnxTensor* out, std::string* err, int declared = 0) {
  out->present = true;
  DType d;
  std::string name;
  const int type = p.data_type() == 4 && declared == 16 ? 16 : p.data_type();
  if (!dtype_from_onnx(type, &d, &name)) {
    out->unsupported = name;
    return true;
  }
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    *err = "tensor " + p.name() + " has external data (not supported)";
    return false;
  }
  HostTensor& t = out->t;
  t.dtype = d;
  t.sizes.assign(p.dims().begin(), p.dims().end());
  const size_t n = static_cast<size_t>(t.numel());
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    if (raw.size() != n * dtype_itemsize(d)) {
      *err = "tensor " + p.name() + ": raw_data has " + std::to_string(raw.size()) + " bytes, expected " +
             std::to_string(n * dtype_itemsize(d));
      return false;
    }
    t.values = dtype_decode(d, raw.data(), n);
    return true;
  }
  // Typed fields (onnx.proto): which one holds which element type.
  std::vector<uint8_t> bytes;
  size_t got = 0;
  switch (d) {
    case DType::kFloat32:
      got = static_cast<size_t>(p.float_data_size());
      for (float v : p.float_data()) t.values.push_back(v);
      break;
    case DType::kFloat64:
      got = static_cast<size_t>(p.double_data_size());
      for (double v : p.double_data()) t.values.push_back(v);
      break;
    case DType::kInt64:
      got = static_cast<size_t>(p.int64_data_size());
      for (int64_t v : p.int64_data()) t.values.push_back(static_cast<double>(v));
      break;
    case DType::kFloat16:
    case DType::kBFloat16:  // bit patterns in int32_data
      got = static_cast<size_t>(p.int32_data_size());
      for (int32_t v : p.int32_data()) append_bits(d, static_cast<uint32_t>(v), &bytes);
      t.values = dtype_decode(d, bytes.data(), got);
      break;
    default:  // int32, int8, uint8, bool: values in int32_data
      got = static_cast<size_t>(p.int32_data_size());
      for (int32_t v : p.int32_data()) t.values.push_back(d == DType::kBool ? (v != 0) : v);
      break;
  }
  if (got != n) {
    *err = "tensor " + p.name() + " holds " + std::to_string(got) + " values, its dims say " + std::to_string(n);
    return false;
  }
  return true;
}

const char* value_kind(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "tensor";
    case onnx::TypeProto::kSequenceType:
      return "sequence";
    case onnx::TypeProto::kMapType:
      return "map";
    case onnx::TypeProto::kOptionalType:
      return "optional";
    case onnx::TypeProto::kSparseTensorType:
      return "sparse tensor";
    default:
      return "untyped";
  }
}

std::vector<std::string> data_set_dirs(const std::string& dir) {
  std::vector<std::string> r;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::strncmp(e->d_name, "test_data_set_", 14) == 0) r.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(r.begin(), r.end());
  return r;
}

bool load_tensor_file(const std::string& path, OnnxTensor* out, std::string* err, int declared) {
  std::string bytes;
  if (!read_file(path, &bytes)) {
    *err = "cannot read " + path;
    return false;
  }
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) {
    *err = "cannot parse " + path + " as a TensorProto";
    return false;
  }
  if (!tensor_from_proto(p, out, err, declared)) {
    *err = path + ": " + *err;
    return false;
  }
  return true;
}

// A graph test's data sets: every fed graph input and every graph output,
// in declaration order.
bool load_graph_data_sets(const std::string& dir, const std::vector<std::string>& fed,
                          const std::vector<std::string>& graph_outputs, std::map<std::string, int>& declared,
                          OnnxTest* out, std::string* err) {
  for (const std::string& ds : data_set_dirs(dir)) {
    OnnxDataSet set;
    set.name = ds;
    for (size_t k = 0; k < fed.size(); ++k) {
      OnnxTensor t;
      if (!load_tensor_file(dir + "/" + ds + "/input_" + std::to_string(k) + ".pb", &t, err, declared[fed[k]])) {
        return false;
      }
      set.inputs.push_back(t);
    }
    for (size_t k = 0; k < graph_outputs.size(); ++k) {
      OnnxTensor t;
      const std::string path = dir + "/" + ds + "/output_" + std::to_string(k) + ".pb";
      if (!load_tensor_file(path, &t, err, declared[graph_outputs[k]])) return false;
      set.outputs.push_back(t);
    }
    out->data_sets.push_back(std::move(set));
  }
  return true;
}

}  // namespace

bool run_onnx_graph(bp_context_t* ctx, bp_device_t dev, const OnnxTest& test,
                    const std::map<std::string, bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs,
                    std::string* err, std::string* not_mapped) {
  bponnx::Model model;
  if (!bponnx::Model::load(test.dir + "/model.onnx", &model, err)) {
    // A model our loader refuses is a gap of the frontend, not of the device.
    *not_mapped = "graph: " + err->substr(err->find(": ") + 2);
    return false;
  }
  bponnx::Session session(ctx, dev, &model);
  if (session.run(inputs, outputs, err)) return true;
  *not_mapped = session.not_mapped();
  return false;
}

bool load_onnx_tensor_file(const std::string& path, OnnxTensor* out, std::string* err) {
  return load_tensor_file(path, out, err, 0);
}

bool load_onnx_test(const std::string& dir, OnnxTest* out, std::string* err) {
  *out = OnnxTest{};
  out->dir = dir;
  out->name = dir.substr(dir.find_last_of('/') + 1);
  std::string bytes;
  if (!read_file(dir + "/model.onnx", &bytes)) {
    *err = "cannot read " + dir + "/model.onnx";
    return false;
  }
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    *err = "cannot parse " + dir + "/model.onnx as a ModelProto";
    return false;
  }
  const onnx::GraphProto& g = model.graph();
  out->num_nodes = g.node_size();
  // Tolerances the test asks for (real-model tests carry a data.json).
  std::string json_text;
  if (read_file(dir + "/data.json", &json_text)) {
    const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
    if (j.is_object()) {
      out->rtol = j.value("rtol", out->rtol);
      out->atol = j.value("atol", out->atol);
    }
  }
  if (g.node_size() == 0) {
    out->not_mapped = "graph has no nodes";
    return true;
  }
  OnnxNode& node = out->node;
  if (g.node_size() > 1) {
    // Runs whole through the frontend's executor (run_onnx_graph), which
    // loads and checks the model itself.
    out->graph = true;
    node.op_type = "graph";
    std::set<std::string> seen;
    for (const auto& n : g.node()) {
      const std::string op = (n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + ".") + n.op_type();
      if (seen.insert(op).second) out->graph_ops += (out->graph_ops.empty() ? "" : ",") + op;
    }
  } else {
    const onnx::NodeProto& n = g.node(0);
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    int64_t opset = 0;
    for (const auto& os : model.opset_import()) {
      if ((os.domain() == "ai.onnx" ? "" : os.domain()) == domain) opset = os.version();
    }
    if (!bponnx::node_from_proto(n, opset, dir, &node, err)) {
      *err = dir + "/model.onnx: " + *err;
      return false;
    }
  }

  // Graph inputs fed by the data sets: those that are not initializers.
  std::map<std::string, OnnxTensor> initializers;
  for (const auto& init : g.initializer()) {
    OnnxTensor t;
    if (!tensor_from_proto(init, &t, err)) return false;
    initializers[init.name()] = t;
  }
  std::vector<std::string> fed;
  std::map<std::string, int> declared;  // graph value name -> element type
  for (const auto& vi : g.input()) declared[vi.name()] = vi.type().tensor_type().elem_type();
  for (const auto& vi : g.output()) declared[vi.name()] = vi.type().tensor_type().elem_type();
  for (const auto& vi : g.input()) {
    if (initializers.count(vi.name())) continue;
    if (vi.type().value_case() != onnx::TypeProto::kTensorType && out->not_mapped.empty()) {
      out->not_mapped = std::string("input ") + vi.name() + " has type " + value_kind(vi.type());
    }
    fed.push_back(vi.name());
  }
  std::vector<std::string> graph_outputs;
  for (const auto& vi : g.output()) {
    graph_outputs.push_back(vi.name());
    if (vi.type().value_case() != onnx::TypeProto::kTensorType) {
      if (out->not_mapped.empty()) {
        out->not_mapped = std::string("output ") + vi.name() + " has type " + value_kind(vi.type());
      }
      out->output_elem_types.push_back(0);
    } else {
      out->output_elem_types.push_back(vi.type().tensor_type().elem_type());
    }
  }
  if (!out->not_mapped.empty()) return true;
  if (out->graph) {
    out->graph_inputs = fed;
    out->graph_outputs = graph_outputs;
    return load_graph_data_sets(dir, fed, graph_outputs, declared, out, err);
  }

  for (const std::string& ds : data_set_dirs(dir)) {
    OnnxDataSet set;
    set.name = ds;
    std::map<std::string, OnnxTensor> values = initializers;
    for (size_t k = 0; k < fed.size(); ++k) {
      const std::string path = dir + "/" + ds + "/input_" + std::to_string(k) + ".pb";
      OnnxTensor t;
      if (!load_tensor_file(path, &t, err, declared[fed[k]])) return false;
      values[fed[k]] = t;
    }
    for (const std::string& in : node.inputs) {
      set.inputs.push_back(in.empty() ? OnnxTensor{} : values[in]);
      if (!in.empty() && !set.inputs.back().present) {
        *err = dir + ": node input " + in + " is neither a graph input nor an initializer";
        return false;
      }
    }
    for (const std::string& o : node.outputs) {
      OnnxTensor t;
      const auto it = std::find(graph_outputs.begin(), graph_outputs.end(), o);
      if (!o.empty() && it != graph_outputs.end()) {
        const size_t k = static_cast<size_t>(it - graph_outputs.begin());
        const std::string path = dir + "/" + ds + "/output_" + std::to_string(k) + ".pb";
        if (!load_tensor_file(path, &t, err, declared[o])) return false;
      }
      set.outputs.push_back(t);
    }
    out->data_sets.push_back(std::move(set));
  }
  // output_elem_types by node output position.
  std::vector<int> by_node;
  for (const std::string& o : node.outputs) {
    const auto it = std::find(graph_outputs.begin(), graph_outputs.end(), o);
    by_node.push_back(
        it == graph_outputs.end() ? 0 : out->output_elem_types[static_cast<size_t>(it - graph_outputs.begin())]);
  }
  out->output_elem_types = by_node;
  return true;
}

}  // namespace onnx_corpus
}  // namespace bpc
