// Running one loaded ONNX node test on a device, and the output comparison.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_corpus.h"
#include "onnx/onnx_model.h"

namespace bpc {
namespace onnx_corpus {

// Compares an actual output with the expected one as onnx.backend.test does:
// dtype and sizes equal; floats |a - e| <= atol + rtol * |e|, NaN where NaN,
// infinities exactly; integers and bool exact. Returns "" when they match,
// else "expected vs actual at the worst index, max abs/rel error".
std::string compare_output(const HostTensor& expected, DType actual_dtype, const std::vector<int64_t>& actual_sizes,
                           const std::vector<double>& actual, double rtol, double atol);

// Runs a loaded test (every data set) on `dev`.
OnnxTestResult run_loaded_test(bp_context_t* ctx, bp_device_t dev, const OnnxTest& test);

}  // namespace onnx_corpus
}  // namespace bpc
