#include "host_fallback.h"

#include <vector>

namespace bp::fallback {
namespace {

bool SameDevice(bp_device_t a, bp_device_t b) { return a.backend == b.backend && a.index == b.index; }

// Host tensors made for one call; released when it ends (results are
// retained separately by whoever keeps them).
struct HostTensors {
  std::vector<bp_tensor_t*> items;
  ~HostTensors() {
    for (bp_tensor_t* t : items) bp_tensor_release(t);
  }
};

// The failing public call's status, with its message prefixed by the operator.
bp_status_t Fail(const bp_op_t* op, bp_status_t rc, const char* what, std::string* message) {
  bp_op_info_t info{};
  info.struct_size = sizeof(info);
  const char* name = bp_op_info(op, &info) == BP_STATUS_OK ? info.name : "operator";
  *message = std::string(name) + ": CPU fallback: " + what + ": " + bp_last_error_message();
  return rc;
}

}  // namespace

bp_status_t RunOnHost(const HostCall& call, std::string* message) {
  HostTensors made;
  // A tensor argument as the host call sees it: the same tensor when it is
  // already on the host, else one copy of it (or an empty twin for out=).
  auto to_host = [&](bp_tensor_t* t, bool write_only, bp_tensor_t** out) -> bp_status_t {
    if (!SameDevice(bp_tensor_device(t), call.device)) {
      *out = t;
      return BP_STATUS_OK;
    }
    bp_status_t rc = write_only ? bp_tensor_empty(call.context, call.host, bp_tensor_ndim(t), bp_tensor_sizes(t),
                                                  bp_tensor_dtype(t), out)
                                : bp_tensor_to_device(t, call.host, out);
    if (rc == BP_STATUS_OK) made.items.push_back(*out);
    return rc;
  };

  std::vector<bp_value_t> args(call.args, call.args + call.num_args);
  std::vector<std::vector<bp_tensor_t*>> lists(call.num_args);
  for (int32_t i = 0; i < call.num_args; ++i) {
    bp_value_t& v = args[i];
    if (v.kind == BP_VALUE_TENSOR && v.u.tensor != nullptr) {
      const bool write_only = i < 32 && ((call.write_only_args >> i) & 1u) != 0;
      bp_status_t rc = to_host(v.u.tensor, write_only, &v.u.tensor);
      if (rc != BP_STATUS_OK) return Fail(call.op, rc, "copying an argument to the host", message);
    } else if (v.kind == BP_VALUE_TENSOR_LIST && v.u.tensor_list.size > 0) {
      std::vector<bp_tensor_t*>& l = lists[i];
      l.assign(v.u.tensor_list.data, v.u.tensor_list.data + v.u.tensor_list.size);
      for (bp_tensor_t*& t : l) {
        bp_status_t rc = to_host(t, false, &t);
        if (rc != BP_STATUS_OK) return Fail(call.op, rc, "copying a list argument to the host", message);
      }
      v.u.tensor_list.data = l.data();
    }
  }

  bp_op_info_t info{};
  info.struct_size = sizeof(info);
  bp_status_t rc = bp_op_info(call.op, &info);
  if (rc != BP_STATUS_OK) return Fail(call.op, rc, "reading the operator", message);
  std::vector<bp_tensor_t*> results(info.num_returns, nullptr);
  rc = bp_op_call(call.context, call.op, args.data(), call.num_args, results.data(), info.num_returns);
  if (rc != BP_STATUS_OK) {
    // The host call's own message names the operator and the argument.
    *message = bp_last_error_message();
    return rc;
  }
  for (bp_tensor_t* r : results) {
    if (r != nullptr) made.items.push_back(r);
  }

  // Back to the device: a result that is a host twin of a device argument
  // (in-place self, out=) is copied into that argument, which is returned;
  // any other result becomes a fresh device tensor.
  // Every mutated argument is written back, also when the caller asked for
  // fewer results than the operator returns.
  const int32_t nres = info.num_returns;
  std::vector<bp_tensor_t*> back(nres, nullptr);
  std::vector<bool> fresh(nres, false);
  bp_op_t* copy = nullptr;
  for (int32_t k = 0; k < nres && rc == BP_STATUS_OK; ++k) {
    bp_tensor_t* target = nullptr;
    for (int32_t i = 0; i < call.num_args && target == nullptr; ++i) {
      if (args[i].kind == BP_VALUE_TENSOR && args[i].u.tensor == results[k] && call.args[i].u.tensor != results[k]) {
        target = call.args[i].u.tensor;
      }
    }
    if (target == nullptr) {
      if (k >= call.num_results || results[k] == nullptr) continue;
      rc = bp_tensor_to_device(results[k], call.device, &back[k]);
      fresh[k] = rc == BP_STATUS_OK;
      continue;
    }
    if (copy == nullptr) rc = bp_op_find(call.context, "copy_", &copy);
    if (rc != BP_STATUS_OK) break;
    bp_value_t copy_args[2] = {};
    copy_args[0].kind = BP_VALUE_TENSOR;
    copy_args[0].u.tensor = target;
    copy_args[1].kind = BP_VALUE_TENSOR;
    copy_args[1].u.tensor = results[k];
    rc = bp_op_call(call.context, copy, copy_args, 2, nullptr, 0);
    if (rc == BP_STATUS_OK) back[k] = target;
  }
  if (rc != BP_STATUS_OK) {
    for (int32_t k = 0; k < nres; ++k) {
      if (fresh[k]) bp_tensor_release(back[k]);
    }
    return Fail(call.op, rc, "copying a result to the device", message);
  }
  for (int32_t k = 0; k < call.num_results; ++k) {
    if (!fresh[k] && back[k] != nullptr) bp_tensor_retain(back[k]);
    call.out_results[k] = back[k];
  }
  return BP_STATUS_OK;
}

}  // namespace bp::fallback
