// Built instead of onnx_load.cpp when libonnx-dev or protobuf is missing:
// every load fails with a message that says so.
#include "onnx/onnx_model.h"

namespace bpc {
namespace onnx_corpus {

bool onnx_support_built() { return false; }

bool load_onnx_test(const std::string& dir, OnnxTest* out, std::string* err) {
  *out = OnnxTest{};
  out->dir = dir;
  *err = "bp-conformance was built without ONNX support (libonnx-dev and protobuf not found)";
  return false;
}

bool load_onnx_tensor_file(const std::string&, OnnxTensor*, std::string* err) {
  *err = "bp-conformance was built without ONNX support (libonnx-dev and protobuf not found)";
  return false;
}

}  // namespace onnx_corpus
}  // namespace bpc
