// torch's device guard for PrivateUse1: the current device index per thread
// and one default stream per device (Backplane's host API has no streams yet;
// every call is ordered on the device's own queue).
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "bridge.h"

namespace bptorch {
namespace {

thread_local c10::DeviceIndex t_current = 0;

class DeviceGuardImpl final : public c10::impl::DeviceGuardImplInterface {
 public:
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }
  c10::Device exchangeDevice(c10::Device d) const override {
    const c10::Device old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return {c10::DeviceType::PrivateUse1, t_current}; }
  void setDevice(c10::Device d) const override {
    if (Initialized()) DeviceOf(d);  // raises for an index past the count
    t_current = d.has_index() ? d.index() : 0;
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override { t_current = d.has_index() ? d.index() : 0; }
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, s.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return Initialized() ? static_cast<c10::DeviceIndex>(Get().device_count) : 0;
  }
  void synchronizeStream(const c10::Stream& s) const override {
    if (Initialized()) Check(bp_device_synchronize(Get().ctx, DeviceOf(s.device())), "privateuseone synchronize");
  }
};

}  // namespace

c10::DeviceIndex CurrentDevice() { return t_current; }

C10_REGISTER_GUARD_IMPL(PrivateUse1, DeviceGuardImpl);

}  // namespace bptorch
