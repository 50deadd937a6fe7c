#include "dtype.h"

#include <cstdio>
#include <cstring>

namespace bp::core {
namespace {
struct DtypeDesc {
  const char* name;
  uint8_t code;
  uint8_t bits;
};
constexpr DtypeDesc kDtypes[] = {
    {"bool", BP_DTYPE_CODE_BOOL, 8}, {"uint8", kDLUInt, 8},     {"int8", kDLInt, 8},
    {"int32", kDLInt, 32},           {"int64", kDLInt, 64},     {"float16", kDLFloat, 16},
    {"bfloat16", kDLBfloat, 16},     {"float32", kDLFloat, 32}, {"float64", kDLFloat, 64},
};
static_assert(sizeof(kDtypes) / sizeof(kDtypes[0]) == static_cast<size_t>(DtypeId::kCount));
}  // namespace

// DtypeFromDL's table (dtype.h) must agree with kDtypes.
constexpr bool TableAgrees() {
  for (int32_t i = 0; i < static_cast<int32_t>(DtypeId::kCount); ++i) {
    int b = kDtypes[i].bits == 8 ? 0 : kDtypes[i].bits == 16 ? 1 : kDtypes[i].bits == 32 ? 2 : 3;
    if (dtype_detail::kDtypeTable.ids[kDtypes[i].code][b] != static_cast<DtypeId>(i)) return false;
  }
  return true;
}
static_assert(TableAgrees(), "dtype.h's lookup table disagrees with kDtypes");

DLDataType DtypeToDL(DtypeId id) {
  DLDataType dt{};
  if (id == DtypeId::kInvalid || id == DtypeId::kCount) return dt;
  dt.code = kDtypes[static_cast<int32_t>(id)].code;
  dt.bits = kDtypes[static_cast<int32_t>(id)].bits;
  dt.lanes = 1;
  return dt;
}

const char* DtypeName(DtypeId id) {
  if (id == DtypeId::kInvalid || id == DtypeId::kCount) return "invalid";
  return kDtypes[static_cast<int32_t>(id)].name;
}

const char* DtypeName(DLDataType dtype) {
  DtypeId id = DtypeFromDL(dtype);
  if (id != DtypeId::kInvalid) return DtypeName(id);
  static thread_local char buf[64];
  std::snprintf(buf, sizeof(buf), "dl(code=%u, bits=%u, lanes=%u)", dtype.code, dtype.bits, dtype.lanes);
  return buf;
}

DtypeId DtypeFromName(const char* name) {
  if (name == nullptr) return DtypeId::kInvalid;
  for (int32_t i = 0; i < static_cast<int32_t>(DtypeId::kCount); ++i) {
    if (std::strcmp(kDtypes[i].name, name) == 0) return static_cast<DtypeId>(i);
  }
  return DtypeId::kInvalid;
}

size_t DtypeItemSize(DtypeId id) {
  if (id == DtypeId::kInvalid || id == DtypeId::kCount) return 0;
  return kDtypes[static_cast<int32_t>(id)].bits / 8;
}

bool DtypeIsFloating(DtypeId id) { return id >= DtypeId::kFloat16 && id <= DtypeId::kFloat64; }

bool DtypeIsIntegral(DtypeId id, bool include_bool) {
  if (id == DtypeId::kBool) return include_bool;
  return id >= DtypeId::kUInt8 && id <= DtypeId::kInt64;
}

}  // namespace bp::core
