// The C++ half of backplane.torch.distributed: communicators over torch's
// c10d Store (a Python object, called back with the GIL) and collectives on
// torch tensors through bp_comm_*, queued on the communicator's worker (a
// _CommWork to wait on). The c10d Backend itself is Python
// (backplane/torch/distributed.py, a subclass of torch 2.x's
// torch._C._distributed_c10d.Backend).
#include <pybind11/pybind11.h>
#include <torch/extension.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "bridge.h"

namespace py = pybind11;

namespace bptorch {
namespace {

// torch's Store (TCPStore, FileStore, PrefixStore) as a bp_kv_store_t.
struct TorchStore {
  bp_kv_store_t table{};
  py::object store;
  std::string error;  // the last callback's Python exception, for the message
};

bp_status_t StoreSet(void* user, const char* key, const void* value, size_t nbytes) {
  py::gil_scoped_acquire gil;
  try {
    static_cast<TorchStore*>(user)->store.attr("set")(key, py::bytes(static_cast<const char*>(value), nbytes));
    return BP_STATUS_OK;
  } catch (const std::exception& e) {
    static_cast<TorchStore*>(user)->error = std::string("store.set: ") + e.what();
    return BP_STATUS_UNAVAILABLE;
  }
}

bp_status_t StoreGet(void* user, const char* key, void* value, size_t capacity, size_t* out_nbytes,
                     int64_t timeout_ms) {
  py::gil_scoped_acquire gil;
  auto* s = static_cast<TorchStore*>(user);
  try {
    py::list keys;
    keys.append(key);
    if (timeout_ms <= 0) {
      // One look (bp_kv_store_t's contract). Not wait(): torch reads a zero
      // timeout as "no timeout" and would wait forever for an absent key.
      if (!s->store.attr("check")(keys).cast<bool>()) {
        s->error = std::string("store.check: no key ") + key;
        return BP_STATUS_DEADLINE_EXCEEDED;
      }
    } else {
      py::object timedelta = py::module_::import("datetime").attr("timedelta");
      s->store.attr("wait")(keys, timedelta(py::arg("milliseconds") = timeout_ms));
    }
  } catch (const std::exception& e) {
    s->error = std::string("store.wait: ") + e.what();
    return BP_STATUS_DEADLINE_EXCEEDED;  // torch raises on its wait's timeout
  }
  try {
    const std::string v = s->store.attr("get")(key).cast<std::string>();
    *out_nbytes = v.size();
    std::memcpy(value, v.data(), std::min(capacity, v.size()));
    return BP_STATUS_OK;
  } catch (const std::exception& e) {
    s->error = std::string("store.get: ") + e.what();
    return BP_STATUS_UNAVAILABLE;
  }
}

// One communicator; Python holds it (destroyed with the process group).
class Comm {
 public:
  // device_index: the PrivateUse1 index the communicator joins on; -1: the
  // host (Backplane's cpu backend), for CPU tensors.
  Comm(py::object store, int rank, int world, int64_t timeout_ms, const std::string& prefix, int device_index) {
    const Bridge& b = Get();
    TorchStore ts;
    ts.table.struct_size = sizeof(bp_kv_store_t);
    ts.table.user_data = &ts;
    ts.table.set = StoreSet;
    ts.table.get = StoreGet;
    ts.store = std::move(store);
    bp_comm_options_t o{};
    o.struct_size = sizeof(o);
    o.rank = rank;
    o.world_size = world;
    o.store = &ts.table;
    o.prefix = prefix.c_str();
    o.timeout_ms = timeout_ms;
    device_ = device_index < 0
                  ? bp_device_t{0, 0}
                  : DeviceOf(at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device_index)));
    bp_status_t st;
    {
      py::gil_scoped_release release;
      st = bp_comm_create(b.ctx, device_, &o, &comm_);
    }
    Check(st, "backplane process group: bp_comm_create" + (ts.error.empty() ? "" : " (torch store: " + ts.error + ")"));
  }
  ~Comm() { bp_comm_destroy(comm_); }
  bp_comm_t* get() const { return comm_; }
  std::string engine() const {
    bp_comm_info_t info{};
    info.struct_size = sizeof(info);
    bp_comm_info(comm_, &info);
    return info.engine;
  }

 private:
  bp_device_t device_{};
  bp_comm_t* comm_ = nullptr;
};

// A queued call: keeps its tensors' Backplane references until waited.
class Work {
 public:
  Work(bp_comm_work_t* w, std::vector<bp_tensor_t*> refs) : work_(w), refs_(std::move(refs)) {}
  ~Work() {
    bp_comm_work_destroy(work_);
    for (bp_tensor_t* t : refs_) bp_tensor_release(t);
  }
  void wait() {
    bp_status_t st;
    {
      py::gil_scoped_release release;
      st = bp_comm_work_wait(work_);
    }
    Check(st, "backplane process group");
  }
  bool is_completed() {
    int32_t done = 0;
    bp_comm_work_query(work_, &done);
    return done != 0;
  }

 private:
  bp_comm_work_t* work_;
  std::vector<bp_tensor_t*> refs_;
};

using Launch = bp_status_t (*)(bp_comm_t*, bp_tensor_t*, bp_tensor_t*, int32_t, bp_comm_work_t**);

std::unique_ptr<Work> Run(const char* what, const Comm& c, const at::Tensor* in, const at::Tensor* out, int32_t arg,
                          Launch launch) {
  std::vector<bp_tensor_t*> refs;
  bp_tensor_t* bin = in != nullptr ? ToBackplane(*in, what, "input") : nullptr;
  if (bin != nullptr) refs.push_back(bin);
  bp_tensor_t* bout = bin;
  if (out != nullptr && (in == nullptr || !out->is_same(*in))) {
    bout = ToBackplane(*out, what, "output");
    refs.push_back(bout);
  }
  bp_comm_work_t* w = nullptr;
  const bp_status_t st = launch(c.get(), bin, bout, arg, &w);
  if (st != BP_STATUS_OK) {
    for (bp_tensor_t* t : refs) bp_tensor_release(t);
    Check(st, what);
  }
  return std::make_unique<Work>(w, std::move(refs));
}

}  // namespace

void RegisterProcessGroup(py::module_& m) {
  py::class_<Comm>(m, "_Comm")
      .def(py::init<py::object, int, int, int64_t, const std::string&, int>(), py::arg("store"), py::arg("rank"),
           py::arg("world_size"), py::arg("timeout_ms"), py::arg("prefix"), py::arg("device_index"))
      .def("engine", &Comm::engine);
  py::class_<Work>(m, "_CommWork").def("wait", &Work::wait).def("is_completed", &Work::is_completed);
  m.def("_all_reduce", [](const Comm& c, const at::Tensor& t, int op) {
    return Run("all_reduce", c, &t, &t, op,
               [](bp_comm_t* k, bp_tensor_t* i, bp_tensor_t* o, int32_t a, bp_comm_work_t** w) {
                 return bp_comm_all_reduce(k, i, o, static_cast<bp_reduce_op_t>(a), w);
               });
  });
  m.def("_broadcast", [](const Comm& c, const at::Tensor& t, int root) {
    return Run("broadcast", c, &t, &t, root,
               [](bp_comm_t* k, bp_tensor_t* i, bp_tensor_t*, int32_t a, bp_comm_work_t** w) {
                 return bp_comm_broadcast(k, i, a, w);
               });
  });
  m.def("_all_gather", [](const Comm& c, const at::Tensor& in, const at::Tensor& out) {
    return Run("all_gather", c, &in, &out, 0,
               [](bp_comm_t* k, bp_tensor_t* i, bp_tensor_t* o, int32_t, bp_comm_work_t** w) {
                 return bp_comm_all_gather(k, i, o, w);
               });
  });
  m.def("_reduce_scatter", [](const Comm& c, const at::Tensor& in, const at::Tensor& out, int op) {
    return Run("reduce_scatter", c, &in, &out, op,
               [](bp_comm_t* k, bp_tensor_t* i, bp_tensor_t* o, int32_t a, bp_comm_work_t** w) {
                 return bp_comm_reduce_scatter(k, i, o, static_cast<bp_reduce_op_t>(a), w);
               });
  });
  m.def("_all_to_all", [](const Comm& c, const at::Tensor& in, const at::Tensor& out) {
    return Run("all_to_all", c, &in, &out, 0,
               [](bp_comm_t* k, bp_tensor_t* i, bp_tensor_t* o, int32_t, bp_comm_work_t** w) {
                 return bp_comm_all_to_all(k, i, o, w);
               });
  });
  m.def("_send", [](const Comm& c, const at::Tensor& t, int peer) {
    return Run("send", c, &t, nullptr, peer,
               [](bp_comm_t* k, bp_tensor_t* i, bp_tensor_t*, int32_t a, bp_comm_work_t** w) {
                 return bp_comm_send(k, i, a, w);
               });
  });
  m.def("_recv", [](const Comm& c, const at::Tensor& t, int peer) {
    return Run("recv", c, nullptr, &t, peer,
               [](bp_comm_t* k, bp_tensor_t*, bp_tensor_t* o, int32_t a, bp_comm_work_t** w) {
                 return bp_comm_recv(k, o, a, w);
               });
  });
  m.def("_barrier", [](const Comm& c) {
    return Run(
        "barrier", c, nullptr, nullptr, 0,
        [](bp_comm_t* k, bp_tensor_t*, bp_tensor_t*, int32_t, bp_comm_work_t** w) { return bp_comm_barrier(k, w); });
  });
}

}  // namespace bptorch
