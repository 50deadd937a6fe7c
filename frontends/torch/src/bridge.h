// Shared by the backplane._torch sources: the Backplane context and backend
// that serve torch's PrivateUse1 device, tensors handed across in both
// directions (DLPack, zero-copy), and the per-ATen-operator counters.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backplane/backplane.h"

namespace c10 {
class OperatorHandle;
}

namespace bptorch {

// The context (backplane._C's, passed at init) and the backend whose devices
// are privateuseone:0..N-1. Set once by Init; read-only afterwards.
struct Bridge {
  bp_context_t* ctx = nullptr;
  int32_t backend = -1;
  int32_t dl_device_type = 0;  // the backend's DLPack device type
  int32_t device_count = 0;
  std::string backend_name;
  std::vector<bool> unified;  // per device: BP_DEVICE_CAP_UNIFIED (the host can address its memory)
};
const Bridge& Get();  // raises (TORCH_CHECK) before init
bool Initialized();
// Picks the backend and registers the allocator. A second call with the same
// backend is a no-op; another backend is an error (torch caches the device).
void Init(bp_context_t* ctx, const std::string& backend_name);

// Raises a torch error (RuntimeError in Python) carrying Backplane's status
// and message, prefixed by `what` (the ATen operator).
void Check(bp_status_t st, const std::string& what);

bp_device_t DeviceOf(const at::Device& d);  // privateuseone:N -> {backend, N}; checks N

// A new Backplane reference on the memory of `t` (CPU or privateuseone),
// with t's sizes, strides, offset and dtype; keeps t's storage alive.
// Errors name `op` and, when given, the argument `arg`.
bp_tensor_t* ToBackplane(const at::Tensor& t, const std::string& op, const char* arg = nullptr);
// A torch tensor over a Backplane tensor's memory; takes over the reference.
at::Tensor FromBackplane(bp_tensor_t* t, const std::string& what);
// torch's dtype as DLPack's; raises for dtypes Backplane lacks (complex).
DLDataType DTypeOf(at::ScalarType s, const std::string& what);
bool TryDTypeOf(at::ScalarType s, DLDataType* out);  // false for those dtypes, no message

bool OnDevice(const at::Tensor& t);  // defined and on privateuseone
// True for a CPU tensor, or one on a device whose memory the host can address
// (BP_DEVICE_CAP_UNIFIED).
bool HostAddressable(const at::Tensor& t);
// A CPU tensor over the same memory as a host-addressable privateuseone
// tensor (keeps its storage alive); a CPU tensor is returned as is. The
// caller synchronizes the device first when it may still be writing.
at::Tensor HostAlias(const at::Tensor& t);

// The thread's current privateuseone index (device_guard.cpp).
c10::DeviceIndex CurrentDevice();

// The caching allocator of the chosen backend, as torch's PrivateUse1 allocator.
c10::Allocator* DeviceAllocator();
// The Backplane block behind a DataPtr that allocator made; NULL for any other.
bp_tensor_t* BlockOf(const c10::DataPtr& data);

// Per-ATen-operator counters (the vendor's to-do list for PyTorch).
enum class Path { kNone, kPlugin, kBackplaneFallback, kTorchFallback };
// One operator's counters; the pointer stays valid for the process (a routed
// kernel keeps it, so counting a call takes no lock).
struct OpCounters {
  std::atomic<uint64_t> plugin{0}, backplane_fallback{0}, torch_fallback{0}, bytes{0};
};
OpCounters* CountersFor(const std::string& aten_op);
void Count(OpCounters* counters, Path path, uint64_t bytes_moved);
void Count(const std::string& aten_op, Path path, uint64_t bytes_moved);
// Bytes copied between host and device by _copy_from while a torch CPU
// fallback runs on this thread are charged to that operator.
void ChargeTransfer(uint64_t bytes);

struct OpStats {
  uint64_t plugin = 0, backplane_fallback = 0, torch_fallback = 0, bytes = 0;
};
void ForEachStat(void (*fn)(const std::string&, const OpStats&, void*), void* user);
void ResetStats();

// Registers, for PrivateUse1, every ATen operator with a Backplane schema of
// the same name and arity (run once by Init; returns how many). The skipped
// ones and why are in `skipped` (name -> reason).
int RegisterRoutedOps(std::vector<std::pair<std::string, std::string>>* skipped);

}  // namespace bptorch

namespace bptorch {
// torch's CPU fallback, counted (torch_fallback.cpp); also registered
// explicitly where a composite kernel would hide the boxed fallback.
void TorchCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// While alive, a torch CPU fallback of `aten_op` runs on this thread:
// ChargeTransfer charges that operator, and its torch_fallback count goes up
// by one when the scope ends (also when the fallback throws).
class TorchFallbackScope {
 public:
  explicit TorchFallbackScope(std::string aten_op);
  ~TorchFallbackScope();
  TorchFallbackScope(const TorchFallbackScope&) = delete;
  TorchFallbackScope& operator=(const TorchFallbackScope&) = delete;

 private:
  std::string op_;
};

// Schema helpers shared by the routed kernel and the torch fallback.
bool WritesAlias(const c10::Argument& a);  // a Tensor(a!) argument
// The argument a return aliases (in-place and out= variants), or -1.
int WrittenArgument(const c10::FunctionSchema& schema, const c10::Argument& ret);
// The ATen operator a torch CPU fallback is running on this thread, or "".
std::string TorchFallbackOp();
}  // namespace bptorch
