// ONNX LSTM and GRU as one lstm_layer / gru_layer call per node, where the
// session's device runs those operators with its own kernel
// (map_recurrent_native.cpp). map_recurrent.cpp's decomposition is the
// fallback for everything else.
#pragma once

#include <vector>

#include "bponnx/exec.h"

namespace bponnx {

/// The node's outputs from the native operator into *outs, or false (and
/// nothing called) when the node needs what the operator lacks
/// (sequence_lens, peepholes, a dtype other than float32) or the device has
/// no native kernel. `lstm` false: a GRU node. The caller has checked the
/// attributes (default activations, no clip, input_forget 0).
bool map_recurrent_native(Exec& ex, const OnnxNode& n, const std::vector<NodeInput>& in, bool lstm,
                          std::vector<bp_tensor_t*>* outs);

}  // namespace bponnx
