// What an ONNX node mapping works with: its inputs on the device (and on
// the host, for shape-like inputs such as Reshape's shape), and a small
// executor that calls Backplane operators through the public C API.
// Host applications normally use graph.h (Model, Session) and need this
// header only to write a mapping of their own or to call operators by name.
//
// Errors: a mapping reports a gap by throwing NotMapped (before it calls
// anything when it can) and a failed call by throwing CallFailed; callers
// of a mapping (Session, bp-conformance's ONNX corpus) catch both, and no
// exception crosses the C ABI. Only the functions documented as throwing
// throw (besides std::bad_alloc).
//
// Thread-safety: an OpCache and an Exec belong to one thread at a time;
// distinct ones may run concurrently on one context (Backplane's operator
// calls are free-threaded). map_table() is safe from any thread;
// set_dtype_claims() is not (set it once, before mappings run).
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "backplane/backplane.h"
#include "bponnx/model.h"

namespace bponnx {

/// Boxed arguments of bp_op_call (backplane.h's bp_value_t). The pointers
/// they carry (tensors, int lists, strings) are borrowed, not retained: the
/// tensor, vector or string must outlive the call they are passed to.
bp_value_t vnone();
/// A tensor argument; NONE when t is nullptr (an optional tensor left out).
bp_value_t vt(bp_tensor_t* t);
bp_value_t vi(int64_t i);
bp_value_t vd(double d);
bp_value_t vb(bool b);
/// An int list borrowing `ints`' storage.
bp_value_t vl(const std::vector<int64_t>& ints);
/// A string borrowing `s` (NUL-terminated).
bp_value_t vs(const char* s);
bp_value_t vdtype(DType d);

/// "<what>: <status name>: <bp_last_error_message()>", read on the calling
/// thread right after the failed call.
std::string api_error(const char* what, bp_status_t st);

/// Thrown by a mapping that cannot express the node: `reason` names the
/// gap as "op Foo", "attribute Conv.auto_pad=SAME_UPPER" or
/// "dtype ReduceMean(int32)".
struct NotMapped {
  std::string reason;
};
/// Thrown when a Backplane call returned a status: "<operator>: <status>:
/// <message>" (api_error's form).
struct CallFailed {
  std::string message;
};

class Exec;

/// One node input: the tensor on the session's device (nullptr when the
/// optional input is left out) and, for small values, its host copy. Both
/// are borrowed from the session for the duration of the mapping call.
struct NodeInput {
  bp_tensor_t* t = nullptr;
  const HostTensor* host = nullptr;  // nullptr when the values are not on the host
  // A small float value computed on the device is read back only when a
  // mapping asks for it (host_of): into *host_cache, with *host_cached set,
  // by host_exec. All three are the session's, or nullptr.
  HostTensor* host_cache = nullptr;
  bool* host_cached = nullptr;
  Exec* host_exec = nullptr;
  bool present() const { return t != nullptr; }
};

/// The host values of a shape-like input (Reshape's shape, Slice's starts):
/// its host copy, or one read back now when the session left that for
/// later. Throws NotMapped naming the need when the input is left out or has
/// no host copy (computed on the device and larger than the 64 elements the
/// session copies back), CallFailed when reading back fails. The reference
/// is borrowed from the session, valid during the mapping call.
const HostTensor& host_of(const NodeInput& in);

/// One operator resolved once (its handle and schema name): the one place
/// the frontend calls bp_op_call, for an Exec's calls and for a session's
/// planned runs alike, so moving to Backplane's call plans changes only run().
struct PreparedCall {
  bp_op_t* op = nullptr;  // nullptr: libbackplane has no such operator
  std::string name;
  /// bp_op_call(ctx, op, args, outs). Throws CallFailed (api_error's text,
  /// naming the operator) on a status.
  void run(bp_context_t* ctx, const bp_value_t* args, int32_t num_args, bp_tensor_t** outs, int32_t num_outs) const;
};

/// Operator handles by schema name ("add.Tensor"), resolved once per
/// context with bp_op_find and kept. `ctx` must outlive the cache. Not
/// thread-safe: one cache per thread.
class OpCache {
 public:
  explicit OpCache(bp_context_t* ctx) : ctx_(ctx) {}
  /// The handle, or nullptr when libbackplane has no such operator (the
  /// miss is cached too). Handles live as long as the context.
  bp_op_t* find(const std::string& name) { return prepared(name).op; }
  /// The resolved call (op nullptr on a miss); the reference stays valid
  /// as long as the cache.
  const PreparedCall& prepared(const std::string& name);

 private:
  bp_context_t* ctx_;
  std::unordered_map<std::string, PreparedCall> ops_;
};

/// What an Exec tells a session that is planning a run (tape.h): every
/// operator call and empty tensor it makes, the tensors it makes from host
/// values (the same every run) and the tensors whose values it reads back.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual void on_call(const PreparedCall& c, const bp_value_t* args, int32_t num_args, bp_tensor_t* const* outs,
                       int32_t num_outs) = 0;
  virtual void on_empty(const std::vector<int64_t>& sizes, DLDataType dtype, bp_tensor_t* out) = 0;
  virtual void on_constant(bp_tensor_t* t) = 0;
  virtual void on_read_back(bp_tensor_t* t) = 0;
};

/// Runs the Backplane calls of mappings on one device. Every tensor it
/// makes (call, upload, scalar, full, cast results) is held by the Exec and
/// released by reset() or the destructor; a caller that keeps a result
/// longer takes its own reference with bp_tensor_retain. `ctx` and `ops`
/// must outlive it. Not thread-safe: one Exec per thread.
class Exec {
 public:
  Exec(bp_context_t* ctx, bp_device_t dev, OpCache* ops);
  ~Exec();
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;

  /// Calls operator `op` (schema name, e.g. "conv2d") with `args` in schema
  /// order; returns its one output, held by the Exec. Shapes, dtypes and
  /// broadcasting are the operator's (abi/ops.yaml). Throws
  /// CallFailed when the operator does not exist or the call returns a
  /// status (the message names operator, status and the dispatcher's text).
  bp_tensor_t* call(const std::string& op, std::initializer_list<bp_value_t> args);
  /// The same for an operator with several results (topk: values, indices):
  /// the first `num_results` of them in schema order, each held by the Exec.
  /// Throws CallFailed as call() does, or when fewer results come back.
  std::vector<bp_tensor_t*> call_multi(const std::string& op, const std::vector<bp_value_t>& args, int32_t num_results);
  /// A host tensor made on the device: h.values cast to h.dtype (float16
  /// and bfloat16 rounded by the CPU's to.dtype; integers saturate, NaN
  /// becomes 0). Throws CallFailed on an allocation or copy error.
  bp_tensor_t* upload(const HostTensor& h);
  /// Stored bytes (r.sizes, r.dtype) made on the device. Throws NotMapped
  /// for an unsupported element type (r.unsupported), CallFailed on an
  /// allocation or copy error.
  bp_tensor_t* upload(const RawTensor& r);
  /// A tensor's values (any device, any layout) on the host, as doubles in
  /// row-major order: read back and widened on the host (float16/bfloat16:
  /// cast to float64 on the CPU first). Throws CallFailed on a copy error.
  HostTensor to_host(bp_tensor_t* t);
  /// A 0-dim CPU tensor of `d` holding v (joins any device as a scalar).
  bp_tensor_t* scalar(double v, DType d);
  /// A new tensor of `sizes` x `d` on the device, every element `v`
  /// (bp_tensor_empty + fill_). Throws CallFailed.
  bp_tensor_t* full(const std::vector<int64_t>& sizes, DType d, double v);
  /// `t` itself when its dtype is `d`, else to.dtype(t, d) (held). Throws CallFailed.
  bp_tensor_t* cast(bp_tensor_t* t, DType d);

  bp_context_t* ctx() const { return ctx_; }
  bp_device_t device() const { return dev_; }
  /// OpCache::find through the Exec's cache.
  bp_op_t* find(const std::string& name) { return ops_->find(name); }
  /// Every operator call() made since construction or reset(), in order.
  const std::vector<bp_op_t*>& called() const { return called_; }
  /// Releases every tensor held and forgets called(), as if newly made.
  void reset();
  /// Reports to `r` (borrowed; nullptr: to nobody) from now on.
  void set_recorder(Recorder* r) { rec_ = r; }

 private:
  // Silences the recorder while a host value is made or read (its inner
  // calls are not part of a run): nests.
  struct Quiet {
    explicit Quiet(Exec* e) : ex(e) { ++ex->quiet_; }
    ~Quiet() { --ex->quiet_; }
    Exec* ex;
  };
  Recorder* recorder() const { return quiet_ == 0 ? rec_ : nullptr; }
  bp_tensor_t* constant(bp_tensor_t* t);
  bp_tensor_t* hold(bp_tensor_t* t);
  // A CPU tensor of `d` holding `values` (representable in d).
  bp_tensor_t* host_tensor(const std::vector<int64_t>& sizes, DType d, const std::vector<double>& values);
  bp_context_t* ctx_;
  bp_device_t dev_;
  OpCache* ops_;
  std::vector<bp_tensor_t*> held_;
  std::vector<bp_op_t*> called_;
  Recorder* rec_ = nullptr;
  int quiet_ = 0;
};

/// The tensor's dtype (float32 for a dtype outside the nine).
DType dtype_of(const bp_tensor_t* t);
/// The tensor's sizes (empty for 0-dim).
std::vector<int64_t> sizes_of(const bp_tensor_t* t);
/// A 1-D int64 tensor of `v` on the Exec's device (indices for
/// index_select and friends), held by the Exec. Throws as Exec::upload.
bp_tensor_t* upload_ints(Exec& ex, const std::vector<int64_t>& v);
/// The values of a host tensor as int64, each clamped to +-2^62 so
/// INT64_MAX "to the end" markers (Slice) stay usable in arithmetic.
std::vector<int64_t> host_ints(const HostTensor& h);

/// Throws NotMapped("dtype <onnx_op>(<d>)") when the dtype-claims hook says
/// `bp_op` does not claim `d`. Without a hook every dtype is claimed and a
/// gap shows as the operator's own error when called.
void need_dtype(const std::string& onnx_op, const std::string& bp_op, DType d);
/// The hook need_dtype asks (bp-conformance installs ops.yaml's claims).
/// Process-wide; set it once, before mappings run: not synchronized with
/// running mappings.
using DTypeClaims = std::function<bool(const std::string& bp_op, DType d)>;
void set_dtype_claims(DTypeClaims claims);
/// `axis` of a rank-`rank` input counted from 0 (a negative one from the
/// end); throws NotMapped("attribute <op>.axis=<axis>") outside the rank.
int64_t norm_axis(const OnnxNode& n, int64_t axis, int64_t rank);
/// Throws NotMapped("attribute <op>.<name>=<value>").
[[noreturn]] void unsupported_attr(const std::string& op, const std::string& name, const std::string& value);

/// A mapping: runs one node with `Exec` and returns its outputs, one per
/// node output (nullptr only where the output name is ""), held by the Exec.
/// Throws NotMapped or CallFailed.
using MapFn = std::function<std::vector<bp_tensor_t*>(Exec&, const OnnxNode&, const std::vector<NodeInput>&)>;
/// True when `backend` runs operator `op` with its own kernel
/// (bp_op_dispatch_kind is BP_DISPATCH_NATIVE): where the optimizer fuses
/// into a Backplane operator and the mappings call one. False when `ctx` is
/// null or the operator is unknown.
bool runs_natively(bp_context_t* ctx, const char* op, int32_t backend);

/// Map key (map_key) -> mapping.
using MapTable = std::map<std::string, MapFn>;
/// A node's key in the MapTable: its op type in the default domain,
/// "<domain>.<op type>" otherwise (backplane.ConvFused).
inline std::string map_key(const OnnxNode& n) { return n.domain.empty() ? n.op_type : n.domain + "." + n.op_type; }

/// The families that fill the table (map_*.cpp).
void register_elementwise(MapTable* t);
void register_tensor_ops(MapTable* t);
void register_nn(MapTable* t);
void register_attention(MapTable* t);
void register_resample(MapTable* t);
void register_losses(MapTable* t);
void register_generators(MapTable* t);
void register_scatter_gather(MapTable* t);
void register_recurrent(MapTable* t);
void register_einsum(MapTable* t);
void register_quantization(MapTable* t);
void register_detection(MapTable* t);
void register_selection(MapTable* t);
/// Every mapping, built once on first use (thread-safe) and never changed.
const MapTable& map_table();

}  // namespace bponnx
