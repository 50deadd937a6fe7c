// The suite's side of the ONNX element types: the frontend's answer
// (bponnx::dtype_from_onnx) in the suite's own DType.
#include "onnx/onnx_model.h"

namespace bpc {
namespace onnx_corpus {

const char* onnx_type_name(int elem_type) { return bponnx::onnx_type_name(elem_type); }

bool dtype_from_onnx(int elem_type, DType* out, std::string* name) {
  bponnx::DType d;
  if (!bponnx::dtype_from_onnx(elem_type, &d, name)) return false;
  return dtype_from_dl(bponnx::dtype_to_dl(d), out);
}

}  // namespace onnx_corpus
}  // namespace bpc
