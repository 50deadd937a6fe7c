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

bool run_onnx_graph(bp_context_t*, bp_device_t, const OnnxTest&, const std::map<std::string, bp_tensor_t*>&,
                    std::vector<bp_tensor_t*>*, std::string* err, std::string*) {
  *err = "bp-conformance was built without ONNX support (libonnx-dev and protobuf not found)";
  return false;
}

bool load_onnx_tensor_file(const std::string&, OnnxTensor*, std::string* err) {
  *err = "bp-conformance was built without ONNX support (libonnx-dev and protobuf not found)";
  return false;
}

}  // namespace onnx_corpus
}  // namespace bpc
