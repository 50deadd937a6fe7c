// torch's PrivateUse1 hooks (at::PrivateUse1HooksInterface): availability,
// the default generator per device, pinned memory, device from pointer,
// primary context. torch.accelerator and torch.manual_seed go through them.
//
// Random operators have no Backplane schema: they run in torch's CPU
// fallback, whose kernels accept only CPU generators. A device generator
// therefore wraps a CPU generator (its state: seed, offset, Mersenne state),
// and the fallback hands that one to the kernel (CpuGeneratorOf), so
// torch.manual_seed(s) makes device random numbers reproducible run to run.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include <atomic>
#include <deque>
#include <mutex>

#include "bridge.h"

namespace bptorch {
namespace {

class DeviceGenerator final : public c10::GeneratorImpl {
 public:
  explicit DeviceGenerator(c10::DeviceIndex index, at::Generator cpu = at::make_generator<at::CPUGeneratorImpl>())
      : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, index),
                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
        cpu_(std::move(cpu)) {}
  void set_current_seed(uint64_t seed) override { cpu_.set_current_seed(seed); }
  void set_offset(uint64_t offset) override { cpu_.set_offset(offset); }
  uint64_t get_offset() const override { return cpu_.get_offset(); }
  uint64_t current_seed() const override { return cpu_.current_seed(); }
  uint64_t seed() override { return cpu_.seed(); }
  void set_state(const c10::TensorImpl& state) override { cpu_.unsafeGetGeneratorImpl()->set_state(state); }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override { return cpu_.unsafeGetGeneratorImpl()->get_state(); }
  const at::Generator& cpu() const { return cpu_; }

 private:
  DeviceGenerator* clone_impl() const override { return new DeviceGenerator(device().index(), cpu_.clone()); }
  at::Generator cpu_;
};

struct Generators {
  std::once_flag once;
  std::deque<at::Generator> by_device;
};
Generators& All() {
  static auto* g = new Generators();  // never destroyed: generators live for the process
  return *g;
}

class Hooks final : public at::PrivateUse1HooksInterface {
 public:
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return Initialized() && Get().device_count > 0; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override {
    return Initialized() && index >= 0 && index < Get().device_count;
  }
  c10::DeviceIndex deviceCount() const override {
    return Initialized() ? static_cast<c10::DeviceIndex>(Get().device_count) : 0;
  }
  c10::DeviceIndex getCurrentDevice() const override { return CurrentDevice(); }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    return DefaultGenerator(index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    const c10::DeviceIndex i = index < 0 ? CurrentDevice() : index;
    SlotOf(i);
    return at::make_generator<DeviceGenerator>(i);
  }
  // Device memory is named by the allocator's DataPtr, not by the pointer
  // alone: the pointer maps to the thread's current device.
  at::Device getDeviceFromPtr(void* /*data*/) const override {
    return {c10::DeviceType::PrivateUse1, CurrentDevice()};
  }
  bool isPinnedPtr(const void* data) const override { return Initialized() && IsPinned(data); }
  at::Allocator* getPinnedMemoryAllocator() const override {
    TORCH_CHECK(Initialized(), "pin_memory: call backplane.torch.init() first");
    return PinnedAllocator();
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override;
};

}  // namespace

void ResizeStorageBytes(const c10::Storage& storage, size_t nbytes);  // aten_native.cpp

void Hooks::resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const {
  ResizeStorageBytes(storage, newsize);
}

const at::Generator& DefaultGenerator(c10::DeviceIndex index) {
  const c10::DeviceIndex i = index < 0 ? CurrentDevice() : index;
  Generators& g = All();
  std::call_once(g.once, [&] {
    for (int32_t d = 0; d < Get().device_count; ++d) {
      g.by_device.push_back(at::make_generator<DeviceGenerator>(static_cast<c10::DeviceIndex>(d)));
      g.by_device.back().set_current_seed(c10::default_rng_seed_val);  // as torch's CPU and CUDA
    }
  });
  SlotOf(i);
  return g.by_device[static_cast<size_t>(i)];
}

at::Generator CpuGeneratorOf(const c10::optional<at::Generator>& gen, c10::DeviceIndex device) {
  const at::Generator& g = gen.has_value() && gen->defined() ? *gen : DefaultGenerator(device);
  if (g.device().type() != c10::DeviceType::PrivateUse1) return g;
  return static_cast<const DeviceGenerator*>(g.unsafeGetGeneratorImpl())->cpu();
}

namespace {
Hooks g_hooks;
std::atomic<bool> g_registered{false};
}  // namespace

void RegisterHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    TORCH_CHECK(!at::isPrivateUse1HooksRegistered(), "backplane.torch.init: another package registered torch's "
                "PrivateUse1 hooks first (device '", c10::get_privateuse1_backend(), "')");
    at::RegisterPrivateUse1HooksInterface(&g_hooks);
    g_registered = true;
  });
}

bool HooksAreOurs() { return g_registered; }

}  // namespace bptorch
