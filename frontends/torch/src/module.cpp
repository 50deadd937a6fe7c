// backplane._torch: init (joins backplane._C's context and registers the
// PrivateUse1 device over the devices of the backends it names), the hooks,
// the default generators, and the per-operator counters.
// Loaded by backplane/torch/__init__.py after `import torch`.
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <pybind11/pybind11.h>
#include <chrono>
#include <thread>
#include <pybind11/stl.h>
#include <torch/csrc/Generator.h>

#include "bridge.h"

namespace py = pybind11;

namespace bptorch {
// For the compile backend's lowering (backplane/torch/lowering.py): the ATen
// operators routed to Backplane operators at init (aten_routed.cpp) and the
// ones the bridge implements itself (aten_native.cpp), as torch names them.
const std::vector<std::string>& RoutedOps();
}  // namespace bptorch

namespace {

// Routed registrations are made once per process (torch keeps them).
py::dict Init(uintptr_t ctx_address, const std::vector<std::string>& backends) {
  static bool routed = false;
  static int registered = 0;
  static std::vector<std::pair<std::string, std::string>> skipped;
  bptorch::Init(reinterpret_cast<bp_context_t*>(ctx_address), backends);
  bptorch::RegisterHooks();
  if (!routed) {
    registered = bptorch::RegisterRoutedOps(&skipped);
    routed = true;
  }
  py::dict d;
  d["backends"] = bptorch::Get().backend_names;
  d["device_count"] = bptorch::Get().device_count;
  py::list devices;
  for (const bptorch::DeviceSlot& s : bptorch::Get().devices) {
    devices.append(py::make_tuple(s.backend_name, s.device.index));
  }
  d["devices"] = devices;
  d["routed"] = registered;
  d["routed_ops"] = bptorch::RoutedOps();
  d["native_ops"] = bptorch::NativeOps();
  py::dict why;
  for (const auto& kv : skipped) why[py::str(kv.first)] = kv.second;
  d["not_routed"] = why;
  return d;
}

void AddStat(const std::string& op, const bptorch::OpStats& s, void* user) {
  py::dict row;
  row["plugin"] = s.plugin;
  row["backplane_fallback"] = s.backplane_fallback;
  row["torch_fallback"] = s.torch_fallback;
  row["bytes_moved"] = s.bytes;
  (*static_cast<py::dict*>(user))[py::str(op)] = row;
}

// torch's own C++ stream and event API on privateuseone:<device_index>
// (c10::StreamGuard, c10::Event, the guard's stream pool), which C++
// extensions use; torch 1.13 has no Python stream API for PrivateUse1. A
// chain on the default stream, a pool stream that waits for it through an
// event and adds 1 under a StreamGuard; what each step observed.
py::dict C10StreamsCheck(int device_index) {
  const c10::Device dev(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device_index));
  c10::impl::VirtualGuardImpl impl(c10::DeviceType::PrivateUse1);
  py::dict d;
  const c10::Stream def = impl.getStream(dev);
  d["default_id"] = def.id();
  const c10::Stream side = impl.getStreamFromGlobalPool(dev, false);
  d["pool_id"] = side.id();
  const auto options = at::TensorOptions().dtype(at::kFloat).device(dev);
  at::Tensor x = at::full({1 << 20}, 1.0f, options);
  for (int i = 0; i < 8; ++i) x.mul_(2.0);  // 256 everywhere, on the default stream
  c10::Event produced(c10::DeviceType::PrivateUse1);
  produced.record(def);
  at::Tensor y;
  {
    c10::StreamGuard guard(side);
    d["guard_current_id"] = impl.getStream(dev).id();
    produced.block(side);  // the pool stream waits for the default stream's chain
    y = x.add(1.0);
    impl.recordDataPtrOnStream(x.storage().data_ptr(), side);
    c10::Event consumed(c10::DeviceType::PrivateUse1);
    consumed.record(side);
    impl.synchronizeStream(side);
    d["consumed_done"] = consumed.query();
    // queryStream records a marker and queries it: on OpenCL that marker is
    // itself a command, completed asynchronously even on an idle queue, so
    // an idle stream answers true within moments rather than at once.
    bool idle = impl.queryStream(side);
    for (int i = 0; i < 2000 && !idle; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      idle = impl.queryStream(side);
    }
    d["side_idle"] = idle;
  }
  d["restored_id"] = impl.getStream(dev).id();
  d["y_min"] = y.min().item<double>();
  d["y_max"] = y.max().item<double>();
  return d;
}

}  // namespace

namespace bptorch {
void RegisterProcessGroup(py::module_& m);  // process_group.cpp
}

PYBIND11_MODULE(_torch, m) {
  m.doc() = "Backplane as torch's PrivateUse1 device (use backplane.torch)";
  m.def("init", &Init, py::arg("context_address"), py::arg("backends"));
  m.def("hooks_claimed_elsewhere", [] { return at::isPrivateUse1HooksRegistered() && !bptorch::HooksAreOurs(); });
  m.def("default_generator", [](int index) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(bptorch::DefaultGenerator(static_cast<c10::DeviceIndex>(index))));
  });
  m.def("initialized", &bptorch::Initialized);
  m.def("backends", [] { return bptorch::Get().backend_names; });
  m.def("device_count", [] { return bptorch::Initialized() ? bptorch::Get().device_count : 0; });
  m.def("stats", [] {
    py::dict d;
    bptorch::ForEachStat(&AddStat, &d);
    return d;
  });
  m.def("reset_stats", &bptorch::ResetStats);
  m.def("_c10_streams_check", &C10StreamsCheck, py::arg("device_index"));
  bptorch::RegisterProcessGroup(m);
}
