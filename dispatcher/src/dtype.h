// The dtypes Backplane knows, and their DLPack encodings.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backplane/types.h"

namespace bp::core {

// Dense ids, in PyTorch's promotion-lattice order within each category.
enum class DtypeId : int32_t {
  kBool = 0,
  kUInt8,
  kInt8,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kCount,
  kInvalid = -1,
};

constexpr uint32_t DtypeBit(DtypeId id) { return 1u << static_cast<int32_t>(id); }

DtypeId DtypeFromDL(DLDataType dtype);      // kInvalid for anything we do not take
DLDataType DtypeToDL(DtypeId id);
const char* DtypeName(DtypeId id);          // "float32"; "invalid"
const char* DtypeName(DLDataType dtype);    // "float32", or "dl(code=.., bits=.., lanes=..)" in a static thread-local buffer
DtypeId DtypeFromName(const char* name);    // "float32" -> kFloat32; kInvalid otherwise
size_t DtypeItemSize(DtypeId id);           // bytes
bool DtypeIsFloating(DtypeId id);
bool DtypeIsIntegral(DtypeId id, bool include_bool);
inline bool DtypeEqual(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

}  // namespace bp::core
