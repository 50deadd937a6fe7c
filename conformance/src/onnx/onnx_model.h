// One ONNX backend node test, loaded: the model's single node (op type,
// opset, attributes), its graph inputs and outputs, initializers, and each
// test_data_set_*'s input and output tensors. This header does not need the
// protobuf headers; onnx_load.cpp (built only with ONNX support) fills it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "bponnx/model.h"
#include "sample.h"

namespace bpc {
namespace onnx_corpus {

// A tensor read from a TensorProto. When its ONNX element type has no
// Backplane dtype, `unsupported` names it ("uint16", "string") and `t` is empty.
struct OnnxTensor {
  HostTensor t;
  std::string unsupported;
  bool present = false;  // false: an optional input left out (empty name)
};

// A node and its attributes: the ONNX frontend's types (frontends/onnx),
// shared with its node-to-operator mapping.
using bponnx::OnnxAttribute;
using bponnx::OnnxNode;

// One test_data_set_N: the node's inputs (same order as OnnxNode::inputs;
// initializers and left-out optional inputs filled in) and the expected
// outputs (same order as OnnxNode::outputs; absent ones not present).
struct OnnxDataSet {
  std::string name;  // "test_data_set_0"
  std::vector<OnnxTensor> inputs;
  std::vector<OnnxTensor> outputs;
};

struct OnnxTest {
  std::string name;  // the directory name, "test_add"
  std::string dir;
  OnnxNode node;  // a single-node test's node (a graph test: op_type only, "graph")
  int num_nodes = 0;
  // More than one node: the whole graph runs through the ONNX frontend's
  // executor (run_onnx_graph). Data sets then hold the graph inputs fed by
  // the test (initializers left out) and the graph outputs, in declaration
  // order, named by graph_inputs and graph_outputs.
  bool graph = false;
  std::vector<std::string> graph_inputs, graph_outputs;
  std::string graph_ops;  // its distinct op types in node order, "Shape,Gather,Reshape"

  // The graph outputs' declared ONNX element types, by output position
  // (ONNX TensorProto.DataType codes; 0 when not a tensor or unknown).
  std::vector<int> output_elem_types;
  // Not empty: the test cannot be mapped because of its graph or inputs
  // ("graph has 3 nodes", "input x is a sequence"); the kind prefix is included.
  std::string not_mapped;
  std::vector<OnnxDataSet> data_sets;
  double rtol = 1e-3;  // onnx.backend.test's defaults, or the test's data.json
  double atol = 1e-7;
};

// ONNX TensorProto.DataType code -> the suite's dtype (bponnx::dtype_from_onnx's
// answer); false (and *name set to the ONNX name, "uint16") when Backplane has no such dtype.
bool dtype_from_onnx(int elem_type, DType* out, std::string* name);
const char* onnx_type_name(int elem_type);

// True when this binary was built with ONNX (libonnx-dev + protobuf).
bool onnx_support_built();

// Loads the test in directory `dir`. False with *err only when the files
// cannot be read or parsed; a test that cannot be mapped loads with
// `not_mapped` set.
bool load_onnx_test(const std::string& dir, OnnxTest* out, std::string* err);

// Runs the graph test's model (test.dir/model.onnx) on `dev` with `inputs`
// (graph input name -> tensor, borrowed) through bponnx::Session. True with
// one new reference per graph output in *outputs (the caller releases them).
// False with *err; *not_mapped is set too when the failure is a gap in the
// mappings (an op, attribute or dtype), not a failed call.
bool run_onnx_graph(bp_context_t* ctx, bp_device_t dev, const OnnxTest& test,
                    const std::map<std::string, bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs,
                    std::string* err, std::string* not_mapped);

// Reads one TensorProto file (input_0.pb ...). False with *err on a read or
// parse error; an unsupported element type is not an error (see OnnxTensor).
bool load_onnx_tensor_file(const std::string& path, OnnxTensor* out, std::string* err);

}  // namespace onnx_corpus
}  // namespace bpc
