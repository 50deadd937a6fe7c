// The bridge's state: the chosen backend, errors, and the per-operator
// counters behind backplane.torch.stats().
#include "bridge.h"

#include <map>
#include <mutex>
#include <vector>

namespace bptorch {
namespace {

Bridge g_bridge;
bool g_init = false;
std::mutex g_init_mu;

std::mutex g_stats_mu;                      // guards insertion into g_stats
std::map<std::string, OpCounters> g_stats;  // nodes never move: kernels keep pointers

}  // namespace

bool Initialized() { return g_init; }

const Bridge& Get() {
  TORCH_CHECK(g_init, "backplane.torch: call backplane.torch.init() before using the privateuseone device");
  return g_bridge;
}

void Check(bp_status_t st, const std::string& what) {
  if (st == BP_STATUS_OK) return;
  const char* msg = bp_last_error_message();
  TORCH_CHECK(false, what, ": Backplane ", bp_status_name(st), ": ", msg != nullptr ? msg : "");
}

namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// The devices of one backend, appended to `slots`.
void AddBackend(bp_context_t* ctx, const std::string& name, std::vector<DeviceSlot>* slots) {
  int32_t backend = -1;
  Check(bp_backend_find(ctx, name.c_str(), &backend), "backplane.torch.init('" + name + "')");
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  Check(bp_backend_info(ctx, backend, &info), "backplane.torch.init");
  TORCH_CHECK(info.loaded, "backplane.torch.init: backend '", name, "' is not loaded");
  TORCH_CHECK(info.device_count > 0, "backplane.torch.init: backend '", name, "' has no device (",
              info.no_device_reason != nullptr ? info.no_device_reason : "no reason given", ")");
  for (int32_t i = 0; i < info.device_count; ++i) {
    bp_device_properties_t p{};
    p.struct_size = sizeof(p);
    Check(bp_device_properties(ctx, bp_device_t{backend, i}, &p), "backplane.torch.init");
    slots->push_back(DeviceSlot{bp_device_t{backend, i}, info.device_type,
                                (p.capabilities & BP_DEVICE_CAP_UNIFIED) != 0, name});
  }
}

}  // namespace

void Init(bp_context_t* ctx, const std::vector<std::string>& backend_names) {
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (g_init) {
    TORCH_CHECK(backend_names == g_bridge.backend_names, "backplane.torch: already initialized with backends '",
                Joined(g_bridge.backend_names), "'; torch keeps one PrivateUse1 device per process, so '",
                Joined(backend_names), "' cannot replace them");
    return;
  }
  TORCH_CHECK(ctx != nullptr, "backplane.torch: no Backplane context");
  TORCH_CHECK(!backend_names.empty(), "backplane.torch.init: no backend given");
  std::vector<DeviceSlot> slots;
  for (size_t i = 0; i < backend_names.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      TORCH_CHECK(backend_names[i] != backend_names[j], "backplane.torch.init: backend '", backend_names[i],
                  "' listed twice");
    }
    AddBackend(ctx, backend_names[i], &slots);
  }
  TORCH_CHECK(slots.size() <= 64, "backplane.torch.init: ", slots.size(), " devices; torch allows at most 64");
  g_bridge.ctx = ctx;
  g_bridge.devices = std::move(slots);
  g_bridge.backend_names = backend_names;
  g_bridge.device_count = static_cast<int32_t>(g_bridge.devices.size());
  c10::SetAllocator(c10::DeviceType::PrivateUse1, DeviceAllocator());
  g_init = true;
}

const DeviceSlot& SlotOf(c10::DeviceIndex index) {
  const Bridge& b = Get();
  TORCH_CHECK(index >= 0 && index < b.device_count, "backplane.torch: device index ", int(index),
              " does not exist: backends '", Joined(b.backend_names), "' have ", b.device_count, " device(s)");
  return b.devices[static_cast<size_t>(index)];
}

int32_t IndexOf(bp_device_t device) {
  const Bridge& b = Get();
  for (size_t i = 0; i < b.devices.size(); ++i) {
    if (b.devices[i].device.backend == device.backend && b.devices[i].device.index == device.index) {
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

bp_device_t DeviceOf(const at::Device& d) {
  TORCH_CHECK(d.type() == c10::DeviceType::PrivateUse1, "backplane.torch: expected a ",
              c10::get_privateuse1_backend(), " device, got ", d.str());
  return SlotOf(d.has_index() ? d.index() : 0).device;
}

namespace {
thread_local std::string* t_fallback_op = nullptr;  // set while a torch CPU fallback runs
}

OpCounters* CountersFor(const std::string& aten_op) {
  std::lock_guard<std::mutex> lock(g_stats_mu);
  return &g_stats[aten_op];
}

void Count(OpCounters* c, Path path, uint64_t bytes_moved) {
  if (path == Path::kPlugin) c->plugin.fetch_add(1, std::memory_order_relaxed);
  if (path == Path::kBackplaneFallback) c->backplane_fallback.fetch_add(1, std::memory_order_relaxed);
  if (path == Path::kTorchFallback) c->torch_fallback.fetch_add(1, std::memory_order_relaxed);
  if (bytes_moved != 0) c->bytes.fetch_add(bytes_moved, std::memory_order_relaxed);
}

void Count(const std::string& aten_op, Path path, uint64_t bytes_moved) {
  Count(CountersFor(aten_op), path, bytes_moved);
}

TorchFallbackScope::TorchFallbackScope(std::string aten_op) : op_(std::move(aten_op)) { t_fallback_op = &op_; }

TorchFallbackScope::~TorchFallbackScope() {
  t_fallback_op = nullptr;
  Count(op_, Path::kTorchFallback, 0);
}

bool WritesAlias(const c10::Argument& a) { return a.alias_info() != nullptr && a.alias_info()->isWrite(); }

int WrittenArgument(const c10::FunctionSchema& schema, const c10::Argument& ret) {
  if (ret.alias_info() == nullptr) return -1;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::Argument& a = schema.arguments()[i];
    if (WritesAlias(a) && a.alias_info()->beforeSets() == ret.alias_info()->beforeSets()) return static_cast<int>(i);
  }
  return -1;
}

std::string TorchFallbackOp() { return t_fallback_op != nullptr ? *t_fallback_op : std::string(); }

void ChargeTransfer(uint64_t bytes) {
  if (t_fallback_op != nullptr) Count(*t_fallback_op, Path::kNone, bytes);
}

void ForEachStat(void (*fn)(const std::string&, const OpStats&, void*), void* user) {
  std::vector<std::pair<std::string, OpStats>> rows;
  {
    std::lock_guard<std::mutex> lock(g_stats_mu);
    for (const auto& kv : g_stats) {
      const OpCounters& c = kv.second;
      OpStats s{c.plugin.load(), c.backplane_fallback.load(), c.torch_fallback.load(), c.bytes.load()};
      if (s.plugin + s.backplane_fallback + s.torch_fallback + s.bytes != 0) rows.emplace_back(kv.first, s);
    }
  }
  for (const auto& r : rows) fn(r.first, r.second, user);
}

void ResetStats() {
  std::lock_guard<std::mutex> lock(g_stats_mu);
  for (auto& kv : g_stats) {
    kv.second.plugin = 0;
    kv.second.backplane_fallback = 0;
    kv.second.torch_fallback = 0;
    kv.second.bytes = 0;
  }
}

}  // namespace bptorch
