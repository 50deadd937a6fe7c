// Reading libonnx's protobuf messages into the frontend's protobuf-free
// types. Needs <onnx/onnx_pb.h> (libonnx-dev, compiled with ONNX_ML=1 and
// ONNX_NAMESPACE=onnx: linking Backplane::onnx brings both). Reentrant: no
// shared state; the messages are only read.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "bponnx/model.h"

namespace bponnx {

/// Fills `out` from a TensorProto: raw_data, the typed fields, or external
/// data (a file named in external_data, relative to `base_dir`, with its
/// offset and length). `declared` is the graph's element type for the value
/// (0: unknown): ONNX's test generator stores bfloat16 data as uint16 bit
/// patterns and the declared type says how to read them. An element type
/// Backplane lacks is not an error (out->unsupported names it). False with
/// *err naming the tensor when the data cannot be read or is shorter or
/// longer than its dims say.
bool raw_tensor_from_proto(const onnx::TensorProto& p, const std::string& base_dir, RawTensor* out,
                           std::string* err, int declared = 0);

/// Fills `out` from an AttributeProto (a TENSOR attribute's data read with
/// raw_tensor_from_proto). False with *err when a tensor's data is bad.
bool attribute_from_proto(const onnx::AttributeProto& a, const std::string& base_dir, OnnxAttribute* out,
                          std::string* err);

/// Fills `out` (name, op type, domain, attributes, inputs, outputs) from a
/// NodeProto; `opset` is the model's opset for the node's domain.
bool node_from_proto(const onnx::NodeProto& n, int64_t opset, const std::string& base_dir, OnnxNode* out,
                     std::string* err);

}  // namespace bponnx
