// Plan-time folding of shape subgraphs (internal to the frontend): the
// small integer arithmetic ONNX exporters build around shapes (Shape,
// Gather, Concat, Unsqueeze, Cast, Slice, Add, ... feeding Reshape, Expand,
// Slice, ConstantOfShape) evaluated on the host when every value it reads
// is known there, so a session never computes a shape on the device and
// reads it back. Pure functions: safe from any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "bponnx/model.h"

namespace bponnx {

/// The largest value (in elements) kept on the host: initializers and
/// Constant values this small, and folded results.
constexpr int64_t kHostValueLimit = 64;

/// One input of a node to fold: its host values when known there (nullptr
/// otherwise) and its sizes (known for every value a session has made).
struct FoldInput {
  const HostTensor* host = nullptr;
  std::vector<int64_t> sizes;
  bool present = false;
};

/// Evaluates `n` on the host into *out (one value per node output) when its
/// op type folds, every input it reads has host values, and each result has
/// at most kHostValueLimit elements. False (and *out unspecified) otherwise:
/// the node then runs on the device as usual.
bool fold_on_host(const OnnxNode& n, const std::vector<FoldInput>& in, std::vector<HostTensor>* out);

/// The value of a Shape node (from opset 15, sizes[start:end]) or a Size
/// node for an input of sizes `xs`, as int64: what their mappings upload.
HostTensor shape_value(const OnnxNode& n, const std::vector<int64_t>& xs);

/// True when the mapping of `n` reads input `k` only on the host (Reshape's
/// shape, Slice's starts, a reduction's axes): a host-known value given
/// there needs no copy on the device.
bool host_only_input(const OnnxNode& n, size_t k);

}  // namespace bponnx
