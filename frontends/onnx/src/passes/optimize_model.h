// The optimizer between a loaded Model and a Session: the graph of a Model
// through the passes (pass.h) and back.
#pragma once

#include <set>
#include <string>

#include "bponnx/graph.h"

namespace bponnx {

/// `model` after every optimizer pass not named in `disabled`; passes that
/// run nodes use `ctx`'s CPU device; `device` is where the session runs
/// (passes that choose a layout ask it; passes that fuse check it has a
/// native kernel for the fused operator).
Model optimize_model(const Model& model, const std::set<std::string>& disabled, bp_context_t* ctx,
                     bp_device_t device);

}  // namespace bponnx
