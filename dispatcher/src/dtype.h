// The dtypes Backplane knows, and their DLPack encodings.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backplane/types.h"

namespace bp::core {

// Dense ids, in PyTorch's promotion-lattice order within each category.
enum class DType : int32_t {
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

constexpr uint32_t DtypeBit(DType id) { return 1u << static_cast<int32_t>(id); }
// Every dtype's bit. The ABI's BP_DTYPE_MASK_* bits are these (ABI 1.3).
constexpr uint32_t kAllDtypeBits = (1u << static_cast<int32_t>(DType::kCount)) - 1;
static_assert(BP_DTYPE_MASK_ALL == kAllDtypeBits && BP_DTYPE_MASK_BOOL == DtypeBit(DType::kBool) &&
                  BP_DTYPE_MASK_UINT8 == DtypeBit(DType::kUInt8) && BP_DTYPE_MASK_INT8 == DtypeBit(DType::kInt8) &&
                  BP_DTYPE_MASK_INT32 == DtypeBit(DType::kInt32) && BP_DTYPE_MASK_INT64 == DtypeBit(DType::kInt64) &&
                  BP_DTYPE_MASK_FLOAT16 == DtypeBit(DType::kFloat16) &&
                  BP_DTYPE_MASK_BFLOAT16 == DtypeBit(DType::kBFloat16) &&
                  BP_DTYPE_MASK_FLOAT32 == DtypeBit(DType::kFloat32) &&
                  BP_DTYPE_MASK_FLOAT64 == DtypeBit(DType::kFloat64),
              "BP_DTYPE_MASK_* (types.h) must match the dtype ids");

namespace dtype_detail {
// (DLPack code, log2(bits / 8)) -> id. Inline because DtypeFromDL runs several
// times on every operator call.
struct DtypeTable {
  DType ids[8][4];
};
constexpr DtypeTable MakeDtypeTable() {
  DtypeTable t{};
  for (auto& row : t.ids)
    for (auto& id : row) id = DType::kInvalid;
  t.ids[BP_DTYPE_CODE_BOOL][0] = DType::kBool;
  t.ids[kDLUInt][0] = DType::kUInt8;
  t.ids[kDLInt][0] = DType::kInt8;
  t.ids[kDLInt][2] = DType::kInt32;
  t.ids[kDLInt][3] = DType::kInt64;
  t.ids[kDLFloat][1] = DType::kFloat16;
  t.ids[kDLBfloat][1] = DType::kBFloat16;
  t.ids[kDLFloat][2] = DType::kFloat32;
  t.ids[kDLFloat][3] = DType::kFloat64;
  return t;
}
inline constexpr DtypeTable kDtypeTable = MakeDtypeTable();
}  // namespace dtype_detail

// kInvalid for anything we do not take.
inline DType DtypeFromDL(DLDataType dtype) {
  if (dtype.lanes != 1 || dtype.code >= 8) return DType::kInvalid;
  switch (dtype.bits) {
    case 8: return dtype_detail::kDtypeTable.ids[dtype.code][0];
    case 16: return dtype_detail::kDtypeTable.ids[dtype.code][1];
    case 32: return dtype_detail::kDtypeTable.ids[dtype.code][2];
    case 64: return dtype_detail::kDtypeTable.ids[dtype.code][3];
    default: return DType::kInvalid;
  }
}
DLDataType DtypeToDL(DType id);
const char* DtypeName(DType id);          // "float32"; "invalid"
const char* DtypeName(DLDataType dtype);    // "float32", or "dl(code=.., bits=.., lanes=..)" in a static thread-local buffer
DType DtypeFromName(const char* name);    // "float32" -> kFloat32; kInvalid otherwise
size_t DtypeItemSize(DType id);           // bytes
bool DtypeIsFloating(DType id);
bool DtypeIsIntegral(DType id, bool include_bool);
inline bool DtypeEqual(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

}  // namespace bp::core
