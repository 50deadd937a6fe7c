// The native engine: the device plugin's own collectives (ABI 1.6,
// bp_backend_t.collectives), for interconnects the host cannot see. Rank 0's
// plugin makes the rendezvous blob; the store carries it to the others.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "copy.h"
#include "dispatch.h"
#include "tensor.h"

namespace bp::core {
namespace {

class NativeEngine : public CommEngine {
 public:
  NativeEngine(bp_comm_t* comm, const bp_collectives_t& table, bp_device_comm_t handle)
      : comm_(comm), table_(table), handle_(handle) {}
  ~NativeEngine() override {
    const bp_backend_t& t = comm_->dev->slot->table;
    table_.comm_destroy(t.backend_data, handle_);
  }
  const char* name() const override { return comm_->dev->slot->name.c_str(); }

  Status Run(const CollectiveCall& call) override {
    const std::string what = std::string(CollectiveName(call.kind)) + " on backend '" + comm_->dev->slot->name + "'";
    // The plugin takes contiguous tensors: others go through a contiguous copy.
    bp_tensor_t* in = nullptr;
    bp_tensor_t* out = nullptr;
    BP_RETURN_IF_ERROR(Contiguous(call.input, true, &in));
    Status st = call.output == call.input ? (out = in, Status::Ok()) : Contiguous(call.output, false, &out);
    if (st.ok()) st = Call(call, in, out, what);
    if (st.ok() && out != nullptr && out != call.output) st = CopyInto(comm_->ctx, call.output, out);
    if (in != nullptr && in != call.input) TensorRelease(in);
    if (out != nullptr && out != call.output && out != in) TensorRelease(out);
    return st;
  }

 private:
  Status Contiguous(bp_tensor_t* t, bool read, bp_tensor_t** out) {
    *out = t;
    if (t == nullptr || t->geo.is_contiguous()) return Status::Ok();
    BP_RETURN_IF_ERROR(EmptyTensorLike(comm_->ctx, comm_->dev, t->geo, t->geo.dtype, "bp_comm", out));
    if (!read) return Status::Ok();
    return CopyInto(comm_->ctx, *out, t);
  }

  Status Call(const CollectiveCall& call, bp_tensor_t* in, bp_tensor_t* out, const std::string& what) {
    const bp_backend_t& t = comm_->dev->slot->table;
    DLTensor din{}, dout{};
    if (in != nullptr) FillDLTensor(in->storage, in->geo, &din);
    if (out != nullptr) FillDLTensor(out->storage, out->geo, &dout);
    char message[BP_COMM_MAX_MESSAGE] = {0};
    bp_collective_args_t args{};
    args.struct_size = sizeof(args);
    args.kind = call.kind;
    args.reduce_op = call.op;
    args.peer = call.peer;
    args.input = in != nullptr ? &din : nullptr;
    args.output = out != nullptr ? &dout : nullptr;
    args.stream = comm_->dev->stream;
    args.timeout_ms = comm_->timeout_ms;
    args.message = message;
    bp_status_t rc = PluginStatus(table_.collective(t.backend_data, handle_, &args));
    if (rc == BP_STATUS_OK && t.stream_synchronize != nullptr) {
      const uint64_t serial = g_last_error_serial;
      rc = t.stream_synchronize(t.backend_data, comm_->dev->index, comm_->dev->stream);
      if (rc != BP_STATUS_OK) return PluginFailure(what + ": stream_synchronize", rc, serial);
    }
    if (rc == BP_STATUS_OK && table_.comm_async_error != nullptr) {
      rc = PluginStatus(table_.comm_async_error(t.backend_data, handle_, message));
    }
    if (rc == BP_STATUS_OK) return Status::Ok();
    message[BP_COMM_MAX_MESSAGE - 1] = '\0';
    return Error(rc, what + " (rank " + std::to_string(comm_->rank) + ") failed with " + bp_status_name(rc) + ": " +
                         (message[0] != '\0' ? message : "(the plugin gave no message)"));
  }

  bp_comm_t* comm_;
  const bp_collectives_t table_;  // the plugin's, copied as far as its struct_size goes
  bp_device_comm_t handle_;
};

}  // namespace

Status MakeNativeEngine(const CommSetup& setup, std::unique_ptr<CommEngine>* out) {
  bp_comm_t* comm = setup.comm;
  BackendSlot* slot = comm->dev->slot;
  const bp_backend_t& t = slot->table;
  // A plugin built against a later minor may have a larger table; one
  // without comm_async_error a smaller one: copy what both know.
  bp_collectives_t copy{};
  if (t.collectives != nullptr && t.collectives->struct_size >= offsetof(bp_collectives_t, comm_async_error)) {
    std::memcpy(&copy, t.collectives, std::min(t.collectives->struct_size, sizeof(copy)));
  }
  const bp_collectives_t* table = &copy;
  if (table->comm_bootstrap == nullptr || table->comm_create == nullptr || table->comm_destroy == nullptr ||
      table->collective == nullptr) {
    return Error(BP_STATUS_UNIMPLEMENTED, "bp_comm_create: backend '" + slot->name +
                                              "' has no collectives of its own (its plugin leaves "
                                              "bp_backend_t.collectives NULL); use engine AUTO or GLOO");
  }
  const std::string fn = "bp_comm_create on backend '" + slot->name + "'";
  std::string blob;
  if (comm->rank == 0) {
    char buf[BP_COMM_BOOTSTRAP_MAX_BYTES];
    size_t n = sizeof(buf);
    const uint64_t serial = g_last_error_serial;
    const bp_status_t rc = table->comm_bootstrap(t.backend_data, comm->dev->index, comm->world_size, buf, &n);
    if (rc != BP_STATUS_OK) return PluginFailure(fn + ": comm_bootstrap", rc, serial);
    if (n > sizeof(buf)) {
      return Error(BP_STATUS_INTERNAL, fn + ": comm_bootstrap wrote " + std::to_string(n) + " bytes, more than " +
                                           std::to_string(sizeof(buf)));
    }
    blob.assign(buf, n);
    BP_RETURN_IF_ERROR(StoreSet(setup, "native/blob", blob.data(), blob.size()));
  } else {
    BP_RETURN_IF_ERROR(StoreGet(setup, "native/blob", &blob));
  }
  bp_device_comm_t handle = nullptr;
  const uint64_t serial = g_last_error_serial;
  const bp_status_t rc = table->comm_create(t.backend_data, comm->dev->index, comm->rank, comm->world_size, blob.data(),
                                            blob.size(), comm->timeout_ms, &handle);
  if (rc != BP_STATUS_OK) return PluginFailure(fn + ": comm_create", rc, serial);
  *out = std::make_unique<NativeEngine>(comm, copy, handle);
  return Status::Ok();
}

}  // namespace bp::core
