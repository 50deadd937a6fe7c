#include "host_fallback.h"

#include <vector>

namespace bp::fallback {
namespace {

bool SameDevice(bp_device_t a, bp_device_t b) { return a.backend == b.backend && a.index == b.index; }

// Tensors made for one call; released when it ends (results handed to the
// caller are retained separately).
struct Made {
  std::vector<bp_tensor_t*> items;
  ~Made() {
    for (bp_tensor_t* t : items) bp_tensor_release(t);
  }
};

// The step's status, its message prefixed by the operator and the step.
bp_status_t Fail(const HostFallbackPlan& plan, bp_status_t rc, const char* what, std::string* message) {
  *message = std::string(plan.sig.op_name) + ": CPU fallback: " + what + ": " + *message;
  return rc;
}

// One call's arguments as the host call sees them: `args` with every tensor
// on the device replaced (lists keep their replaced elements in `lists`).
struct HostArgs {
  std::vector<bp_value_t> args;
  std::vector<std::vector<bp_tensor_t*>> lists;
};

// Replaces each device tensor of `args` by to_host(tensor, write_only).
template <typename F>
bp_status_t ForEachDeviceTensor(const HostSignature& sig, const bp_value_t* args, HostArgs* host, F to_host) {
  host->args.assign(args, args + sig.num_args);
  for (int32_t i = 0; i < sig.num_args; ++i) {
    bp_value_t& v = host->args[i];
    if (((sig.device_args >> i) & 1u) != 0) {
      bp_status_t rc = to_host(v.u.tensor, ((sig.write_only_args >> i) & 1u) != 0, &v.u.tensor);
      if (rc != BP_STATUS_OK) return rc;
    } else if (v.kind == BP_VALUE_TENSOR_LIST && v.u.tensor_list.size > 0) {
      if (host->lists.empty()) host->lists.resize(sig.num_args);
      std::vector<bp_tensor_t*>& l = host->lists[i];
      l.assign(v.u.tensor_list.data, v.u.tensor_list.data + v.u.tensor_list.size);
      for (bp_tensor_t*& t : l) {
        if (t == nullptr || !SameDevice(bp_tensor_device(t), sig.device)) continue;
        bp_status_t rc = to_host(t, false, &t);
        if (rc != BP_STATUS_OK) return rc;
      }
      v.u.tensor_list.data = l.data();
    }
  }
  return BP_STATUS_OK;
}

// The unified route: host views over the device's memory, the host call,
// results as they are (fresh ones were allocated on the device).
bp_status_t RunUnified(const HostFallbackPlan& plan, const bp_value_t* args, bp_tensor_t** out_results,
                       int32_t num_results, std::string* message) {
  const HostSignature& sig = plan.sig;
  // Gather the device tensors, wrap them in one batch (one stream
  // synchronization; views of one storage share a host storage), put the
  // views in their places.
  std::vector<bp_tensor_t*> device_tensors;
  HostArgs host;
  ForEachDeviceTensor(sig, args, &host, [&](bp_tensor_t* t, bool, bp_tensor_t**) {
    device_tensors.push_back(t);
    return BP_STATUS_OK;
  });
  std::vector<bp_tensor_t*> views(device_tensors.size(), nullptr);
  bp_status_t rc = sig.hooks->host_views(sig.context, sig.device, device_tensors.data(),
                                         static_cast<int32_t>(device_tensors.size()), views.data(), message);
  if (rc != BP_STATUS_OK) return Fail(plan, rc, "wrapping the device's memory", message);
  Made made;
  made.items = views;
  size_t next = 0;
  ForEachDeviceTensor(sig, args, &host, [&](bp_tensor_t*, bool, bp_tensor_t** out) {
    *out = views[next++];
    return BP_STATUS_OK;
  });

  bp_tensor_t* results[kMaxFallbackResults] = {};
  rc = sig.hooks->run(sig.context, sig.op, host.args.data(), sig.num_args, results, sig.num_returns, sig.device,
                      message);
  if (rc != BP_STATUS_OK) return rc;  // the host call's message names the operator and the argument
  // A result written into an argument is that argument's view: the caller
  // gets the device argument. Fresh results are device tensors already.
  for (int32_t k = 0; k < sig.num_returns; ++k) {
    const int32_t i = sig.written_arg[k];
    if (i >= 0 && results[k] != nullptr && results[k] == host.args[i].u.tensor) {
      bp_tensor_release(results[k]);
      results[k] = args[i].u.tensor;
      bp_tensor_retain(results[k]);
    }
    if (k < num_results) {
      out_results[k] = results[k];
    } else if (results[k] != nullptr) {
      bp_tensor_release(results[k]);
    }
  }
  return BP_STATUS_OK;
}

// The copying route: one copy of each device tensor to the host, the host
// call, one copy of each result back.
bp_status_t RunCopying(const HostFallbackPlan& plan, const bp_value_t* args, bp_tensor_t** out_results,
                       int32_t num_results, std::string* message) {
  const HostSignature& sig = plan.sig;
  Made made;
  HostArgs host;
  bp_status_t rc = ForEachDeviceTensor(sig, args, &host, [&](bp_tensor_t* t, bool write_only, bp_tensor_t** out) {
    bp_status_t st = sig.hooks->clone_to(sig.context, t, sig.host, write_only, out, message);
    if (st == BP_STATUS_OK) made.items.push_back(*out);
    return st;
  });
  if (rc != BP_STATUS_OK) return Fail(plan, rc, "copying an argument to the host", message);

  bp_tensor_t* results[kMaxFallbackResults] = {};
  rc = sig.hooks->run(sig.context, sig.op, host.args.data(), sig.num_args, results, sig.num_returns, sig.host, message);
  if (rc != BP_STATUS_OK) return rc;  // the host call's message names the operator and the argument
  for (int32_t k = 0; k < sig.num_returns; ++k) {
    if (results[k] != nullptr) made.items.push_back(results[k]);
  }

  // Back to the device. Every written argument is written back, also when
  // the caller asked for fewer results than the operator returns.
  bp_tensor_t* back[kMaxFallbackResults] = {};
  bool fresh[kMaxFallbackResults] = {};
  for (int32_t k = 0; k < sig.num_returns && rc == BP_STATUS_OK; ++k) {
    const int32_t i = sig.written_arg[k];
    if (i >= 0 && results[k] != nullptr && results[k] == host.args[i].u.tensor && results[k] != args[i].u.tensor) {
      rc = sig.hooks->copy_into(sig.context, args[i].u.tensor, results[k], message);
      if (rc == BP_STATUS_OK) back[k] = args[i].u.tensor;
    } else if (k < num_results && results[k] != nullptr) {
      rc = sig.hooks->clone_to(sig.context, results[k], sig.device, false, &back[k], message);
      fresh[k] = rc == BP_STATUS_OK;
    }
  }
  if (rc != BP_STATUS_OK) {
    for (int32_t k = 0; k < sig.num_returns; ++k) {
      if (fresh[k]) bp_tensor_release(back[k]);
    }
    return Fail(plan, rc, "copying a result to the device", message);
  }
  for (int32_t k = 0; k < num_results; ++k) {
    if (!fresh[k] && back[k] != nullptr) bp_tensor_retain(back[k]);
    out_results[k] = back[k];
  }
  return BP_STATUS_OK;
}

}  // namespace

bp_status_t PrepareHostFallback(const HostSignature& sig, HostFallbackPlan* plan, std::string* message) {
  if (sig.num_args > kMaxFallbackArgs || sig.num_returns > kMaxFallbackResults) {
    *message = std::string(sig.op_name) + ": CPU fallback: " + std::to_string(sig.num_args) + " arguments and " +
               std::to_string(sig.num_returns) + " results; the fallback takes at most " +
               std::to_string(kMaxFallbackArgs) + " and " + std::to_string(kMaxFallbackResults);
    return BP_STATUS_INVALID_ARGUMENT;
  }
  plan->sig = sig;
  return BP_STATUS_OK;
}

bp_status_t RunHostFallbackPlan(const HostFallbackPlan& plan, const bp_value_t* args, bp_tensor_t** out_results,
                                int32_t num_results, std::string* message) {
  return plan.sig.unified ? RunUnified(plan, args, out_results, num_results, message)
                          : RunCopying(plan, args, out_results, num_results, message);
}

}  // namespace bp::fallback
