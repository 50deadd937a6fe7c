// backplane._C: the context, errors, devices and counters. Tensors are in
// tensor.cpp, the boxed operator call in ops.cpp. Public C API only.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common.h"
#include "device_inventory.h"  // bp-info's names for device types and capabilities

namespace bppy {
namespace {

bp_context_t* g_ctx = nullptr;
PyObject* g_error = nullptr;  // backplane.Error, created at import
std::mutex g_log_mu;
std::vector<std::string> g_load_errors;  // discovery's warnings, as bp-info lists them

void Log(void*, int32_t level, const char* message) {
  if (level < BP_LOG_WARNING) return;
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_load_errors.push_back(message);
}

bp_backend_info_t Backend(int32_t b) {
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  Check(bp_backend_info(Ctx(), b, &info), "backend info");
  return info;
}

py::list Backends() {
  int32_t nb = 0;
  Check(bp_backend_count(Ctx(), &nb), "backend count");
  py::list out;
  for (int32_t b = 0; b < nb; ++b) {
    bp_backend_info_t info = Backend(b);
    if (!info.loaded) continue;
    py::dict d;
    d["name"] = info.name;
    d["id"] = b;
    d["version"] = info.version;
    d["plugin_path"] = info.plugin_path;
    d["abi_version"] =
        py::make_tuple(BP_ABI_VERSION_GET_MAJOR(info.abi_version), BP_ABI_VERSION_GET_MINOR(info.abi_version));
    d["device_type"] = device_type_name(info.device_type);
    d["device_count"] = info.device_count;
    d["no_device_reason"] = info.no_device_reason != nullptr ? py::object(py::str(info.no_device_reason)) : py::none();
    out.append(d);
  }
  return out;
}

py::dict Properties(bp_device_t dev) {
  bp_device_properties_t p{};
  p.struct_size = sizeof(p);
  Check(bp_device_properties(Ctx(), dev, &p), "device properties");
  // bp-info's names for the capability bits, as a list.
  py::list caps;
  const std::string names = capability_names(p.capabilities);
  for (size_t at = 0; names != "-" && at <= names.size();) {
    const size_t comma = std::min(names.find(',', at), names.size());
    caps.append(names.substr(at, comma - at));
    at = comma + 1;
  }
  bp_backend_info_t info = Backend(dev.backend);
  py::dict d;
  d["backend"] = info.name;
  d["index"] = dev.index;
  d["name"] = p.name;
  d["vendor"] = p.vendor;
  d["driver_version"] = p.driver_version;
  d["device_type"] = device_type_name(info.device_type);
  d["total_memory_bytes"] = p.total_memory_bytes;
  d["capabilities"] = caps;
  d["compute_units"] = p.compute_units;
  d["alignment_bytes"] = p.alignment_bytes;
  return d;
}

py::list Devices() {
  py::list out;
  for (py::handle h : Backends()) {
    py::dict b = py::reinterpret_borrow<py::dict>(h);
    int32_t n = b["device_count"].cast<int32_t>();
    for (int32_t i = 0; i < n; ++i) out.append(Properties(bp_device_t{b["id"].cast<int32_t>(), i}));
  }
  return out;
}

// Per backend: calls by route summed over every operator, per-operator
// counts where non-zero, and the transfer counters.
py::dict Stats() {
  int32_t nb = 0, nops = 0;
  Check(bp_backend_count(Ctx(), &nb), "backend count");
  Check(bp_op_count(Ctx(), &nops), "op count");
  py::dict out;
  for (int32_t b = 0; b < nb; ++b) {
    bp_backend_info_t info = Backend(b);
    if (!info.loaded) continue;
    uint64_t native = 0, fallback = 0, cast = 0;
    py::dict ops;
    for (int32_t i = 0; i < nops; ++i) {
      bp_op_t* op = nullptr;
      bp_op_info_t oi{};
      oi.struct_size = sizeof(oi);
      if (bp_op_at(Ctx(), i, &op) != BP_STATUS_OK || bp_op_info(op, &oi) != BP_STATUS_OK) continue;
      uint64_t n = 0, f = 0, c = 0;
      bp_native_count(Ctx(), op, b, &n);
      bp_fallback_count(Ctx(), op, b, &f);
      bp_cast_count(Ctx(), op, b, &c, nullptr);
      native += n;
      fallback += f;
      cast += c;
      if (n + f + c != 0) {
        py::dict d;
        d["native"] = n;
        d["fallback"] = f;
        d["cast"] = c;
        ops[oi.name] = d;
      }
    }
    bp_transfer_stats_t t{};
    t.struct_size = sizeof(t);
    Check(bp_transfer_stats(Ctx(), b, &t), "transfer stats");
    py::dict d;
    d["native"] = native;
    d["fallback"] = fallback;
    d["cast"] = cast;
    d["ops"] = ops;
    d["host_to_device_count"] = t.host_to_device_count;
    d["host_to_device_bytes"] = t.host_to_device_bytes;
    d["device_to_host_count"] = t.device_to_host_count;
    d["device_to_host_bytes"] = t.device_to_host_bytes;
    d["device_to_device_count"] = t.device_to_device_count;
    d["device_to_device_bytes"] = t.device_to_device_bytes;
    d["cast_bytes"] = t.cast_bytes;
    out[info.name] = d;
  }
  return out;
}

}  // namespace

bp_context_t* Ctx() {
  if (g_ctx == nullptr) Raise(BP_STATUS_FAILED_PRECONDITION, "the Backplane context failed to initialize");
  return g_ctx;
}

void Raise(bp_status_t status, const std::string& message) {
  py::object cls = py::reinterpret_borrow<py::object>(g_error);
  py::object e = cls(message);
  e.attr("status") = bp_status_name(status);
  e.attr("message") = message;
  PyErr_SetObject(g_error, e.ptr());
  throw py::error_already_set();
}

void Check(bp_status_t st, const char* what) {
  if (st == BP_STATUS_OK) return;
  Raise(st, std::string(what) + ": " + bp_last_error_message());
}

namespace {
struct DTypeEntry {
  const char* name;
  DLDataType d;
};
const DTypeEntry kDTypes[] = {
    {"bool", {BP_DTYPE_CODE_BOOL, 8, 1}}, {"uint8", {kDLUInt, 8, 1}},     {"int8", {kDLInt, 8, 1}},
    {"int32", {kDLInt, 32, 1}},           {"int64", {kDLInt, 64, 1}},     {"float16", {kDLFloat, 16, 1}},
    {"bfloat16", {kDLBfloat, 16, 1}},     {"float32", {kDLFloat, 32, 1}}, {"float64", {kDLFloat, 64, 1}},
};
}  // namespace

std::string DTypeName(DLDataType d) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.d.code == d.code && e.d.bits == d.bits && d.lanes == 1) return e.name;
  }
  return "unknown(code " + std::to_string(d.code) + ", bits " + std::to_string(d.bits) + ")";
}

DLDataType DTypeFromName(const std::string& name) {
  std::string n = name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
  if (n == "float") n = "float32";
  if (n == "double") n = "float64";
  if (n == "half") n = "float16";
  if (n == "long") n = "int64";
  if (n == "int") n = "int32";
  for (const DTypeEntry& e : kDTypes) {
    if (n == e.name) return e.d;
  }
  Raise(BP_STATUS_INVALID_ARGUMENT,
        "unknown dtype '" + name + "'; known: bool, uint8, int8, int32, int64, float16, bfloat16, float32, float64");
}

std::string DeviceString(bp_device_t d) {
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  std::string name =
      bp_backend_info(Ctx(), d.backend, &info) == BP_STATUS_OK ? info.name : "backend" + std::to_string(d.backend);
  return name + ":" + std::to_string(d.index);
}

bp_device_t ParseDevice(const std::string& spec) {
  // Split here rather than by bp_device_parse, which reports an index past
  // the devices as NOT_FOUND without the count a user needs.
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string index = colon == std::string::npos ? "0" : spec.substr(colon + 1);
  if (index.empty() || index.size() > 9 || index.find_first_not_of("0123456789") != std::string::npos) {
    Raise(BP_STATUS_INVALID_ARGUMENT, "device '" + spec + "': expected 'backend' or 'backend:index'");
  }
  bp_device_t d{};
  Check(bp_backend_find(Ctx(), name.c_str(), &d.backend), ("device '" + spec + "'").c_str());
  d.index = std::stoi(index);
  bp_backend_info_t info = Backend(d.backend);
  if (d.index < 0 || d.index >= info.device_count) {
    std::string why = info.no_device_reason != nullptr ? std::string(" (") + info.no_device_reason + ")" : "";
    Raise(BP_STATUS_OUT_OF_RANGE, "device '" + spec + "': index " + std::to_string(d.index) +
                                      " out of range: backend '" + info.name + "' has " +
                                      std::to_string(info.device_count) + " device(s)" + why);
  }
  return d;
}

}  // namespace bppy

PYBIND11_MODULE(_C, m) {
  using namespace bppy;
  m.doc() = "Backplane's native module: use the `backplane` package instead.";
  g_error = PyErr_NewException("backplane.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::reinterpret_borrow<py::object>(g_error);
  bp_context_options_t o{};
  o.struct_size = sizeof(o);
  o.log_callback = Log;
  o.min_log_level = BP_LOG_WARNING;
  if (bp_context_create(&o, &g_ctx) != BP_STATUS_OK) {
    throw std::runtime_error(std::string("backplane: cannot create a context: ") + bp_last_error_message());
  }
  // Discovery as bp-info does it: BACKPLANE_PLUGINS, BACKPLANE_PLUGIN_PATH,
  // then the plugin directory next to libbackplane (install or build tree).
  bp_plugin_discover(g_ctx, nullptr);
  m.def("version", [] { return std::string(bp_version_string()); });
  m.def("backends", &Backends);
  m.def("devices", &Devices);
  m.def("device_properties", [](const std::string& spec) { return Properties(ParseDevice(spec)); });
  m.def("load_errors", [] {
    std::lock_guard<std::mutex> lock(g_log_mu);
    return g_load_errors;
  });
  m.def("load_plugin",
        [](const std::string& path) { Check(bp_plugin_load(Ctx(), path.c_str(), nullptr), "load plugin"); });
  m.def("stats", &Stats);
  // For backplane.torch: its extension joins this context instead of making a
  // second one, so one set of plugins, allocators and counters serves both.
  m.def("_context_address", [] { return reinterpret_cast<uintptr_t>(Ctx()); });
  m.def("reset_transfer_stats", [] {
    int32_t nb = 0;
    Check(bp_backend_count(Ctx(), &nb), "backend count");
    for (int32_t b = 0; b < nb; ++b) bp_transfer_stats_reset(Ctx(), b);
  });
  m.def("set_strict_fallback", [](bool on) { Check(bp_context_set_strict_fallback(Ctx(), on ? 1 : 0), "strict"); });
  BindTensor(m);
  BindOps(m);
#ifdef BP_PY_WITH_ONNX
  BindOnnx(m);
#endif
}
