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
static_assert(sizeof(kDtypes) / sizeof(kDtypes[0]) == static_cast<size_t>(DType::kCount));
}  // namespace

// DtypeFromDL's table (dtype.h) must agree with kDtypes.
constexpr bool TableAgrees() {
  for (int32_t i = 0; i < static_cast<int32_t>(DType::kCount); ++i) {
    int b = kDtypes[i].bits == 8 ? 0 : kDtypes[i].bits == 16 ? 1 : kDtypes[i].bits == 32 ? 2 : 3;
    if (dtype_detail::kDtypeTable.ids[kDtypes[i].code][b] != static_cast<DType>(i)) return false;
  }
  return true;
}
static_assert(TableAgrees(), "dtype.h's lookup table disagrees with kDtypes");

DLDataType DtypeToDL(DType id) {
  DLDataType dt{};
  if (id == DType::kInvalid || id == DType::kCount) return dt;
  dt.code = kDtypes[static_cast<int32_t>(id)].code;
  dt.bits = kDtypes[static_cast<int32_t>(id)].bits;
  dt.lanes = 1;
  return dt;
}

const char* DtypeName(DType id) {
  if (id == DType::kInvalid || id == DType::kCount) return "invalid";
  return kDtypes[static_cast<int32_t>(id)].name;
}

const char* DtypeName(DLDataType dtype) {
  DType id = DtypeFromDL(dtype);
  if (id != DType::kInvalid) return DtypeName(id);
  static thread_local char buf[64];
  std::snprintf(buf, sizeof(buf), "dl(code=%u, bits=%u, lanes=%u)", dtype.code, dtype.bits, dtype.lanes);
  return buf;
}

DType DtypeFromName(const char* name) {
  if (name == nullptr) return DType::kInvalid;
  for (int32_t i = 0; i < static_cast<int32_t>(DType::kCount); ++i) {
    if (std::strcmp(kDtypes[i].name, name) == 0) return static_cast<DType>(i);
  }
  return DType::kInvalid;
}

size_t DtypeItemSize(DType id) {
  if (id == DType::kInvalid || id == DType::kCount) return 0;
  return kDtypes[static_cast<int32_t>(id)].bits / 8;
}

bool DtypeIsFloating(DType id) { return id >= DType::kFloat16 && id <= DType::kFloat64; }

bool DtypeIsIntegral(DType id, bool include_bool) {
  if (id == DType::kBool) return include_bool;
  return id >= DType::kUInt8 && id <= DType::kInt64;
}

}  // namespace bp::core
