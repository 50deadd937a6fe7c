// One ONNX node as the mappings see it: op type, domain, the opset of its
// domain, input and output value names, and its attributes. Protobuf-free:
// proto.h fills it from a NodeProto. Plain values: no shared state, safe to
// read from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bponnx/dtype.h"

namespace bponnx {

/// One attribute; `kind` says which field holds its value.
struct OnnxAttribute {
  enum Kind { kInt, kFloat, kString, kInts, kFloats, kTensor, kOther } kind = kOther;
  int64_t i = 0;
  double f = 0.0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  RawTensor tensor;       // kTensor
  std::string type_name;  // for kOther: "GRAPH", "STRINGS", ...
  std::vector<std::string> strings;  // kOther with type_name "STRINGS": the values
};

/// The domain of the nodes Backplane's optimizer passes make for its own
/// fused operators (backplane.ConvFused: conv2d_fused); a model may use them too.
constexpr char kBackplaneDomain[] = "backplane";

/// One node of a Model (graph.h), in the model's topological order.
struct OnnxNode {
  std::string name;        // the node's name; may be ""
  std::string op_type;
  std::string domain;      // "" for the default ONNX domain
  int64_t opset = 0;       // the model's opset of the node's domain
  std::vector<std::string> inputs;   // "" = optional input left out
  std::vector<std::string> outputs;  // "" = optional output not asked for
  std::map<std::string, OnnxAttribute> attrs;

  bool has(const std::string& name) const { return attrs.count(name) != 0; }
  // Getters: the attribute's value when present with that kind (get_float
  // also reads an INT), else `dflt`. They never throw.
  int64_t get_int(const std::string& name, int64_t dflt) const;
  double get_float(const std::string& name, double dflt) const;
  std::string get_string(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& dflt) const;
};

/// ONNX TensorProto.DataType code -> dtype; false (and *name set to the
/// ONNX name, "uint16", when name is not NULL) when Backplane has no such dtype.
bool dtype_from_onnx(int elem_type, DType* out, std::string* name);
/// "float", "uint16", ... ("undefined" for an unknown code).
const char* onnx_type_name(int elem_type);

}  // namespace bponnx
