// DLPack capsules both ways (dlpack_capsule.cpp), for Tensor's bindings in tensor.cpp.
#pragma once

#include <memory>

#include "common.h"

namespace bppy {

// (DLDeviceType, device index) of the tensor's memory.
py::tuple DlpackDevice(const Tensor* self);
// Tensor.__dlpack__ as the Python array API defines it: a 'dltensor_versioned'
// capsule when max_version >= (1, 0), else a legacy 'dltensor' one; copy=True
// exports a copy (IS_COPIED), dl_device must be the tensor's own device.
py::object ToDlpack(const Tensor* self, const py::object& max_version, const py::object& dl_device,
                    const py::object& copy);
// Consumes an unused capsule of either name (renaming it 'used_...');
// writable=True refuses a read-only versioned one before consuming it.
std::unique_ptr<Tensor> FromCapsule(const py::object& cap, bool writable);

}  // namespace bppy
