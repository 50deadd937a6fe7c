// How errors name a node (internal to the frontend): "node 'conv1' (Conv, opset 14)".
#pragma once

#include <string>

#include "bponnx/model.h"

namespace bponnx {

std::string node_label(const OnnxNode& n);

}  // namespace bponnx
