// The protobuf-free parts of model.h: attribute getters and dtype names.
#include "bponnx/model.h"

namespace bponnx {

int64_t OnnxNode::get_int(const std::string& name, int64_t dflt) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second.kind == OnnxAttribute::kInt ? it->second.i : dflt;
}

double OnnxNode::get_float(const std::string& name, double dflt) const {
  auto it = attrs.find(name);
  if (it == attrs.end()) return dflt;
  if (it->second.kind == OnnxAttribute::kFloat) return it->second.f;
  if (it->second.kind == OnnxAttribute::kInt) return static_cast<double>(it->second.i);
  return dflt;
}

std::string OnnxNode::get_string(const std::string& name, const std::string& dflt) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second.kind == OnnxAttribute::kString ? it->second.s : dflt;
}

std::vector<int64_t> OnnxNode::get_ints(const std::string& name, const std::vector<int64_t>& dflt) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second.kind == OnnxAttribute::kInts ? it->second.ints : dflt;
}

const char* onnx_type_name(int elem_type) {
  // TensorProto.DataType, onnx.proto.
  switch (elem_type) {
    case 1: return "float";
    case 2: return "uint8";
    case 3: return "int8";
    case 4: return "uint16";
    case 5: return "int16";
    case 6: return "int32";
    case 7: return "int64";
    case 8: return "string";
    case 9: return "bool";
    case 10: return "float16";
    case 11: return "double";
    case 12: return "uint32";
    case 13: return "uint64";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    default: return "undefined";
  }
}

bool dtype_from_onnx(int elem_type, DType* out, std::string* name) {
  switch (elem_type) {
    case 1: *out = DType::kFloat32; return true;
    case 2: *out = DType::kUInt8; return true;
    case 3: *out = DType::kInt8; return true;
    case 6: *out = DType::kInt32; return true;
    case 7: *out = DType::kInt64; return true;
    case 9: *out = DType::kBool; return true;
    case 10: *out = DType::kFloat16; return true;
    case 11: *out = DType::kFloat64; return true;
    case 16: *out = DType::kBFloat16; return true;
    default:
      if (name != nullptr) *name = onnx_type_name(elem_type);
      return false;
  }
}

}  // namespace bponnx
