// The window geometry of ONNX's Conv / MaxPool / AveragePool (and of
// ConvInteger / QLinearConv, which share Conv's attributes), defined in
// map_nn.cpp. Internal to the ONNX mapping.
#pragma once

#include <cstdint>
#include <vector>

#include "bponnx/exec.h"

namespace bponnx {

// The window for 1 or 2 spatial dims, as two-element lists (a 1-D op gets
// height 1 and no pads along it).
struct Window {
  std::vector<int64_t> kernel, stride, dilation, pad_begin, pad_end;
  bool one_d = false;
};

// n's strides, dilations and pads (auto_pad VALID / SAME_* resolved) for an
// input of sizes xs ([N, C, spatial...]); NotMapped beyond 2 spatial dims,
// an unsupported auto_pad throws.
Window window(const OnnxNode& n, const std::vector<int64_t>& xs, const std::vector<int64_t>& kernel);
// Equal pads at both ends of each dim (what conv2d's padding expresses).
bool symmetric(const Window& w);
// x padded explicitly by the window's pads with `value`; the window's pads
// become 0.
bp_tensor_t* pad_explicitly(Exec& ex, bp_tensor_t* x, Window* w, double value);
// A 1-D window's tensors get (to4d) and lose (from4d) the unit height dim 2.
bp_tensor_t* to4d(Exec& ex, bp_tensor_t* x, const Window& w);
bp_tensor_t* from4d(Exec& ex, bp_tensor_t* y, const Window& w);

}  // namespace bponnx
