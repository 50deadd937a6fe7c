// The models group without the ONNX frontend (libonnx-dev or protobuf
// missing at build time): nothing runs, and the group says why.
#include "models/models_group.h"

namespace bpc {

bool models_support_built() { return false; }

ModelResult run_model(bp_context_t*, bp_device_t, const std::string&, const std::string& name) {
  ModelResult r;
  r.model = name;
  r.outcome = "error";
  r.message = "bp-conformance was built without the ONNX frontend (libonnx-dev and protobuf not found)";
  return r;
}

}  // namespace bpc
