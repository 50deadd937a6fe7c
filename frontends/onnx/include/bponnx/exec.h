// What an ONNX node mapping works with: its inputs on the device (and on
// the host, for shape-like inputs such as Reshape's shape), and a small
// executor that calls Backplane operators through the public C API.
//
// A mapping reports a gap by throwing NotMapped (before it calls anything
// when it can) and a failed call by throwing CallFailed; callers of a
// mapping (graph.cpp, bp-conformance's ONNX corpus) catch both, and no
// exception crosses the C ABI.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "bponnx/model.h"

namespace bponnx {

// Boxed arguments of bp_op_call; the pointers they carry (tensors, int
// lists, strings) are borrowed and must outlive the call.
bp_value_t vnone();
bp_value_t vt(bp_tensor_t* t);  // NONE when t is nullptr (an optional tensor left out)
bp_value_t vi(int64_t i);
bp_value_t vd(double d);
bp_value_t vb(bool b);
bp_value_t vl(const std::vector<int64_t>& ints);
bp_value_t vs(const char* s);
bp_value_t vdtype(DType d);

// "<function>: <status name>: <last error message>".
std::string api_error(const char* what, bp_status_t st);

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
  const HostTensor* host = nullptr;  // nullptr when the values are not on the host
  bool present() const { return t != nullptr; }
};

// The host values of a shape-like input. Throws NotMapped naming the need
// when the input is left out or has no host copy (computed on the device and
// larger than the executor copies back).
const HostTensor& host_of(const NodeInput& in);

// Boxed argument helpers; an int list borrows `v`, which must outlive the call.

// Operator handles by name, resolved once per context (not thread-safe).
class OpCache {
 public:
  explicit OpCache(bp_context_t* ctx) : ctx_(ctx) {}
  bp_op_t* find(const std::string& name);  // nullptr when libbackplane has no such operator

 private:
  bp_context_t* ctx_;
  std::map<std::string, bp_op_t*> ops_;
};

// Runs the Backplane calls of one mapping on one device. Every tensor it
// makes is held until the Exec is destroyed; keep a result longer with
// bp_tensor_retain.
class Exec {
 public:
  Exec(bp_context_t* ctx, bp_device_t dev, OpCache* ops);
  ~Exec();
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;

  // Calls operator `op` (schema name); the result is held by the pool.
  // Throws CallFailed on a status.
  bp_tensor_t* call(const std::string& op, std::vector<bp_value_t> args);
  // The same for an operator with several results (topk): the first
  // num_results of them, in schema order, each held by the pool.
  std::vector<bp_tensor_t*> call_multi(const std::string& op, const std::vector<bp_value_t>& args, int32_t num_results);
  // A host tensor made on the device (values cast to h.dtype by the CPU's to.dtype).
  bp_tensor_t* upload(const HostTensor& h);
  // Stored bytes made on the device. Throws NotMapped for an unsupported dtype.
  bp_tensor_t* upload(const RawTensor& r);
  // A tensor's values on the host (cast to float64 on the CPU, then read back).
  HostTensor to_host(bp_tensor_t* t);
  // A 0-dim CPU tensor of `d` holding v (joins any device as a scalar).
  bp_tensor_t* scalar(double v, DType d);
  // A new tensor of `sizes` x `d` on the device, every element `v` (empty + fill_).
  bp_tensor_t* full(const std::vector<int64_t>& sizes, DType d, double v);
  // to.dtype when the dtype differs.
  bp_tensor_t* cast(bp_tensor_t* t, DType d);

  bp_context_t* ctx() const { return ctx_; }
  bp_device_t device() const { return dev_; }
  bp_op_t* find(const std::string& name) { return ops_->find(name); }
  // Every operator call() made, in order.
  const std::vector<bp_op_t*>& called() const { return called_; }

 private:
  bp_tensor_t* hold(bp_tensor_t* t);
  // A CPU tensor of `d` holding `values` (representable in d).
  bp_tensor_t* host_tensor(const std::vector<int64_t>& sizes, DType d, const std::vector<double>& values);
  bp_context_t* ctx_;
  bp_device_t dev_;
  OpCache* ops_;
  std::vector<bp_tensor_t*> held_;
  std::vector<bp_op_t*> called_;
};

DType dtype_of(const bp_tensor_t* t);
std::vector<int64_t> sizes_of(const bp_tensor_t* t);
// The values of a host tensor as int64 (clamped to +-2^62 so INT64_MAX
// "to the end" markers stay usable).
std::vector<int64_t> host_ints(const HostTensor& h);

// Throws NotMapped("dtype <onnx_op>(<d>)") when the dtype-claims hook says
// `bp_op` does not claim `d`. Without a hook every dtype is claimed and a
// gap shows as the operator's own error when called.
void need_dtype(const std::string& onnx_op, const std::string& bp_op, DType d);
// Installs the hook need_dtype asks (bp-conformance: ops.yaml's claims).
// Set it once, before mappings run; not synchronized with running mappings.
using DTypeClaims = std::function<bool(const std::string& bp_op, DType d)>;
void set_dtype_claims(DTypeClaims claims);
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
void register_resample(MapTable* t);
void register_losses(MapTable* t);
void register_generators(MapTable* t);
const MapTable& map_table();

}  // namespace bponnx
