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

namespace dtype_detail {
// (DLPack code, log2(bits / 8)) -> id. Inline because DtypeFromDL runs several
// times on every operator call.
struct DtypeTable {
  DtypeId ids[8][4];
};
constexpr DtypeTable MakeDtypeTable() {
  DtypeTable t{};
  for (auto& row : t.ids)
    for (auto& id : row) id = DtypeId::kInvalid;
  t.ids[BP_DTYPE_CODE_BOOL][0] = DtypeId::kBool;
  t.ids[kDLUInt][0] = DtypeId::kUInt8;
  t.ids[kDLInt][0] = DtypeId::kInt8;
  t.ids[kDLInt][2] = DtypeId::kInt32;
  t.ids[kDLInt][3] = DtypeId::kInt64;
  t.ids[kDLFloat][1] = DtypeId::kFloat16;
  t.ids[kDLBfloat][1] = DtypeId::kBFloat16;
  t.ids[kDLFloat][2] = DtypeId::kFloat32;
  t.ids[kDLFloat][3] = DtypeId::kFloat64;
  return t;
}
inline constexpr DtypeTable kDtypeTable = MakeDtypeTable();
}  // namespace dtype_detail

// kInvalid for anything we do not take.
inline DtypeId DtypeFromDL(DLDataType dtype) {
  if (dtype.lanes != 1 || dtype.code >= 8) return DtypeId::kInvalid;
  switch (dtype.bits) {
    case 8: return dtype_detail::kDtypeTable.ids[dtype.code][0];
    case 16: return dtype_detail::kDtypeTable.ids[dtype.code][1];
    case 32: return dtype_detail::kDtypeTable.ids[dtype.code][2];
    case 64: return dtype_detail::kDtypeTable.ids[dtype.code][3];
    default: return DtypeId::kInvalid;
  }
}
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
