// DLPack capsules both ways, the Python array API's exchange protocol: the
// legacy 'dltensor' (DLPack 0.6) and the versioned 'dltensor_versioned'
// (DLPack 1.x, with the read-only and copied flags).
#include "dlpack_capsule.h"

#include <string>

namespace bppy {
namespace {

constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";
constexpr const char* kVersionedCapsule = "dltensor_versioned";
constexpr const char* kUsedVersionedCapsule = "used_dltensor_versioned";

void CapsuleDeleter(PyObject* cap) {
  // A consumer that took the tensor renamed the capsule and owns it now.
  if (PyCapsule_IsValid(cap, kCapsule) == 0) return;
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kCapsule));
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
}

void VersionedCapsuleDeleter(PyObject* cap) {
  if (PyCapsule_IsValid(cap, kVersionedCapsule) == 0) return;
  auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedCapsule));
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
}

// A capsule owning `m`; on failure the deleter runs and the Python error is raised.
template <typename Managed>
py::object NewCapsule(Managed* m, const char* name, PyCapsule_Destructor destructor) {
  PyObject* cap = PyCapsule_New(m, name, destructor);
  if (cap == nullptr) {
    m->deleter(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

std::string TupleText(const py::handle& t) { return py::str(py::tuple(py::reinterpret_borrow<py::object>(t))); }

// The array API: a max_version of at least (1, 0) asks for a versioned capsule.
bool WantsVersioned(const py::object& max_version) {
  if (max_version.is_none()) return false;
  py::tuple v = py::reinterpret_borrow<py::object>(max_version);
  if (v.size() < 1) throw py::value_error("__dlpack__: max_version must be a (major, minor) tuple");
  return v[0].cast<int64_t>() >= 1;
}

// A reference released at scope exit (the copy made for copy=True).
struct Released {
  bp_tensor_t* t = nullptr;
  ~Released() {
    if (t != nullptr) bp_tensor_release(t);
  }
};

}  // namespace

py::tuple DlpackDevice(const Tensor* self) {
  bp_device_t d = bp_tensor_device(Get(self));
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  Check(bp_backend_info(Ctx(), d.backend, &info), "__dlpack_device__");
  return py::make_tuple(info.device_type, d.index);
}

py::object ToDlpack(const Tensor* self, const py::object& max_version, const py::object& dl_device,
                    const py::object& copy) {
  bp_tensor_t* t = Get(self);
  const bool versioned = WantsVersioned(max_version);
  if (!dl_device.is_none()) {
    // Compared as ints: torch passes its DLDeviceType enum.
    py::tuple want = py::reinterpret_borrow<py::object>(dl_device);
    py::tuple have = DlpackDevice(self);
    if (want.size() != 2 || py::int_(want[0]).cast<int64_t>() != have[0].cast<int64_t>() ||
        py::int_(want[1]).cast<int64_t>() != have[1].cast<int64_t>()) {
      throw py::buffer_error("__dlpack__: dl_device " + TupleText(dl_device) + " is not the tensor's device " +
                             TupleText(have) +
                             "; Backplane exports only on the tensor's own device (move it "
                             "with Tensor.to() first)");
    }
  }
  // copy=True: a private copy on the same device; copy=False and None: the
  // tensor itself (an export never needs a copy here).
  const bool do_copy = !copy.is_none() && copy.cast<bool>();
  Released copied;
  bp_tensor_t* src = t;
  if (do_copy) {
    Check(bp_tensor_to_device(t, bp_tensor_device(t), &copied.t), "__dlpack__(copy=True)");
    src = copied.t;
  }
  if (versioned) {
    DLManagedTensorVersioned* m = nullptr;
    Check(bp_tensor_to_dlpack_versioned(src, do_copy ? DLPACK_FLAG_BITMASK_IS_COPIED : 0, &m), "__dlpack__");
    return NewCapsule(m, kVersionedCapsule, VersionedCapsuleDeleter);
  }
  // A legacy capsule cannot say "read-only", and its consumer may write it.
  if (bp_tensor_is_read_only(src) != 0) {
    throw py::buffer_error(
        "__dlpack__: the tensor is read-only (imported from a read-only DLPack 1.x tensor) and a legacy "
        "'dltensor' capsule cannot say so; ask for max_version=(1, 0) or copy=True");
  }
  DLManagedTensor* m = nullptr;
  Check(bp_tensor_to_dlpack(src, &m), "__dlpack__");
  return NewCapsule(m, kCapsule, CapsuleDeleter);
}

std::unique_ptr<Tensor> FromCapsule(const py::object& cap, bool writable) {
  bp_tensor_t* t = nullptr;
  // On error the capsule is not renamed: it keeps ownership and its own
  // destructor frees the producer's tensor.
  if (PyCapsule_IsValid(cap.ptr(), kVersionedCapsule) != 0) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), kVersionedCapsule));
    if (writable && m->version.major == BP_DLPACK_VERSION_MAJOR && (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0) {
      Raise(BP_STATUS_INVALID_ARGUMENT,
            "from_dlpack(writable=True): the DLPack tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY, e.g. a "
            "numpy array with flags.writeable False); pass a writable one or copy it");
    }
    Check(bp_tensor_from_dlpack_versioned(Ctx(), m, &t), "from_dlpack");
    PyCapsule_SetName(cap.ptr(), kUsedVersionedCapsule);
    return std::make_unique<Tensor>(t);
  }
  if (PyCapsule_IsValid(cap.ptr(), kCapsule) != 0) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), kCapsule));
    Check(bp_tensor_from_dlpack(Ctx(), m, &t), "from_dlpack");
    PyCapsule_SetName(cap.ptr(), kUsedCapsule);
    return std::make_unique<Tensor>(t);
  }
  Raise(BP_STATUS_INVALID_ARGUMENT,
        "from_dlpack needs an unused DLPack capsule named 'dltensor' or 'dltensor_versioned' (a capsule "
        "is consumed once)");
}

}  // namespace bppy
