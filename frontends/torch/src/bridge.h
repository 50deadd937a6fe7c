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

// One torch device index: a (backend, device) pair of the context.
struct DeviceSlot {
  bp_device_t device{};
  int32_t dl_device_type = 0;  // the backend's DLPack device type
  bool unified = false;        // BP_DEVICE_CAP_UNIFIED: the host can address its memory
  std::string backend_name;
};

// The context (backplane._C's, passed at init) and the devices behind torch's
// PrivateUse1 device: index i is devices[i], the devices of each backend
// given to init, in that order. Set once by Init; read-only afterwards.
struct Bridge {
  bp_context_t* ctx = nullptr;
  std::vector<DeviceSlot> devices;
  std::vector<std::string> backend_names;  // as given to init
  int32_t device_count = 0;
};
const Bridge& Get();  // raises (TORCH_CHECK) before init
bool Initialized();
// Maps the devices of `backend_names` (in order) to PrivateUse1 indices and
// registers the allocator. A second call with the same list is a no-op;
// another list is an error (torch caches the device count).
void Init(bp_context_t* ctx, const std::vector<std::string>& backend_names);
const DeviceSlot& SlotOf(c10::DeviceIndex index);  // checks the index
// The PrivateUse1 index of a Backplane device, or -1 when it is not one of them.
int32_t IndexOf(bp_device_t device);

// Raises a torch error (RuntimeError in Python) carrying Backplane's status
// and message, prefixed by `what` (the ATen operator).
void Check(bp_status_t st, const std::string& what);

bp_device_t DeviceOf(const at::Device& d);  // PrivateUse1:N -> its (backend, device); checks N

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

// The thread's current PrivateUse1 index (device_guard.cpp).
c10::DeviceIndex CurrentDevice();
// The Backplane stream behind a PrivateUse1 c10::Stream (raises for an id the
// bridge did not make).
bp_stream_handle_t* StreamHandle(const c10::Stream& s);

// Backplane's caching allocator as torch's PrivateUse1 allocator (a
// c10::DeviceAllocator: torch.accelerator's memory API reads its statistics).
c10::Allocator* DeviceAllocator();
// Backplane's pinned host memory (bp_host_alloc of device 0) as torch's
// pin_memory() allocator; IsPinned says whether a pointer came from it.
c10::Allocator* PinnedAllocator();
bool IsPinned(const void* ptr);
// The default generator of PrivateUse1:index (hooks.cpp). Random operators
// run in torch's CPU fallback, which draws from the CPU generator this one
// wraps (CpuGeneratorOf).
const at::Generator& DefaultGenerator(c10::DeviceIndex index);
// A generator argument for torch's CPU kernels: a PrivateUse1 generator's
// CPU state; an absent one becomes the default generator of `device`.
at::Generator CpuGeneratorOf(const c10::optional<at::Generator>& gen, c10::DeviceIndex device);
// Registers the bridge's PrivateUse1HooksInterface once; raises when another
// package registered one first (HooksAreOurs then stays false).
void RegisterHooks();
bool HooksAreOurs();
// PrivateUse1 memory (device_buffer.cpp). A DataPtr over `base` whose
// context owns `owner` (takes over one reference): an allocator block
// (is_block) or an operator's result.
c10::DataPtr DeviceDataPtr(void* base, bp_tensor_t* owner, bool is_block, const c10::Device& device);
// The allocator's Backplane block behind a DataPtr; NULL for any other.
bp_tensor_t* BlockOf(const c10::DataPtr& data);
// The Backplane tensor owning a DeviceDataPtr's memory (borrowed); NULL for any other DataPtr.
bp_tensor_t* OwnerOf(const c10::DataPtr& data);
// A new reference on a Backplane tensor over t's memory with exactly t's
// dtype and geometry, when the owner or the view last remembered for t's
// storage has it; else NULL. Thread-safe.
bp_tensor_t* CachedView(const at::Tensor& t, DLDataType dtype);
// Remembers `view` (a tensor over t's storage, holding no reference on the
// torch storage) for CachedView; replaces the one remembered before.
void RememberView(const at::Tensor& t, bp_tensor_t* view);

// The ATen operators the bridge implements itself on PrivateUse1
// (aten_native.cpp), as torch names them; filled when the module loads.
const std::vector<std::string>& NativeOps();

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
