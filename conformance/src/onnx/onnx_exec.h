// What an ONNX node mapping works with: its inputs on the device (and on
// the host, for shape-like inputs such as Reshape's shape), and a small
// executor that calls Backplane operators through the public C API.
//
// A mapping reports a gap by throwing NotMapped (before it calls anything
// when it can) and a failed call by throwing CallFailed; neither leaves
// this directory (onnx_run.cpp catches them), and no exception crosses the C ABI.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "boxed_values.h"
#include "device_tensor.h"
#include "onnx/onnx_model.h"

namespace bpc {
namespace onnx_corpus {

// "op Foo", "attribute Conv.auto_pad=SAME_UPPER", "dtype ReduceMean(int32)".
struct NotMapped {
  std::string reason;
};
// A Backplane call returned a status: "<operator>: <status>: <message>".
struct CallFailed {
  std::string message;
};

// One node input: on the device (nullptr when left out) and on the host.
struct NodeInput {
  bp_tensor_t* t = nullptr;
  const HostTensor* host = nullptr;
  bool present() const { return t != nullptr; }
};

// Boxed argument helpers; an int list borrows `v`, which must outlive the call.

class Exec {
 public:
  Exec(bp_context_t* ctx, bp_device_t dev, TensorPool* pool);

  // Calls operator `op` (schema name); the result is held by the pool.
  // Throws CallFailed on a status.
  bp_tensor_t* call(const std::string& op, std::vector<bp_value_t> args);
  // A host tensor made on the device.
  bp_tensor_t* upload(const HostTensor& h);
  // A 0-dim CPU tensor of `d` holding v (joins any device as a scalar).
  bp_tensor_t* scalar(double v, DType d);
  // A new tensor of `sizes` x `d` on the device, every element `v` (empty + fill_).
  bp_tensor_t* full(const std::vector<int64_t>& sizes, DType d, double v);
  // to.dtype when the dtype differs.
  bp_tensor_t* cast(bp_tensor_t* t, DType d);

  bp_context_t* ctx() const { return ctx_; }
  bp_device_t device() const { return dev_; }
  bp_op_t* find(const std::string& name);

 private:
  bp_context_t* ctx_;
  bp_device_t dev_;
  TensorPool* pool_;
  std::map<std::string, bp_op_t*> ops_;
};

DType dtype_of(const bp_tensor_t* t);
std::vector<int64_t> sizes_of(const bp_tensor_t* t);
// The values of a host tensor as int64 (clamped to +-2^62 so INT64_MAX
// "to the end" markers stay usable).
std::vector<int64_t> host_ints(const HostTensor& h);

// Throws NotMapped("dtype <onnx_op>(<d>)") unless ops.yaml claims `d` for `bp_op`.
void need_dtype(const std::string& onnx_op, const std::string& bp_op, DType d);
// Throws NotMapped("attribute <op>.<name>=<value>").
[[noreturn]] void unsupported_attr(const std::string& op, const std::string& name, const std::string& value);

// A mapping: the node's outputs (nullptr for outputs not computed: only
// allowed where the output name is "").
using MapFn = std::function<std::vector<bp_tensor_t*>(Exec&, const OnnxNode&, const std::vector<NodeInput>&)>;
using MapTable = std::map<std::string, MapFn>;

// Families (onnx_map_*.cpp).
void register_elementwise(MapTable* t);
void register_tensor_ops(MapTable* t);
void register_nn(MapTable* t);
void register_losses(MapTable* t);
void register_generators(MapTable* t);
const MapTable& map_table();

}  // namespace onnx_corpus
}  // namespace bpc
