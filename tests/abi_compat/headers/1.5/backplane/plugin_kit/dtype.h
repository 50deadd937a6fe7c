/*
 * Backplane plugin kit, dtypes: the dense ids of the dtypes Backplane
 * computes in, read from a DLPack dtype, with their names, sizes and kinds.
 * Pure C99, header-only (static inline); included by backplane/plugin_kit.h.
 *
 * The ids are the core's own dtype ids (bool, uint8, int8, int32, int64,
 * float16, bfloat16, float32, float64: PyTorch's promotion order within each
 * kind), so a kernel can index a table of 9 entries with them. A C++ plugin
 * may use the scoped twin bp_kit::DType, whose enumerators have the same
 * values.
 *
 * Thread-safety: every function here is reentrant; none keeps state.
 */
#ifndef BACKPLANE_PLUGIN_KIT_DTYPE_H_
#define BACKPLANE_PLUGIN_KIT_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

#include "backplane/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The dtype ids. BP_KIT_DTYPE_INVALID is anything else (another DLPack code
 * or width, lanes != 1). */
enum bp_kit_dtype {
  BP_KIT_DTYPE_INVALID = -1,
  BP_KIT_DTYPE_BOOL = 0,  /* {BP_DTYPE_CODE_BOOL, 8, 1}: one byte, 0 or 1 */
  BP_KIT_DTYPE_UINT8 = 1, /* {kDLUInt, 8, 1} */
  BP_KIT_DTYPE_INT8 = 2,  /* {kDLInt, 8, 1} */
  BP_KIT_DTYPE_INT32 = 3, /* {kDLInt, 32, 1} */
  BP_KIT_DTYPE_INT64 = 4, /* {kDLInt, 64, 1} */
  BP_KIT_DTYPE_FLOAT16 = 5,
  BP_KIT_DTYPE_BFLOAT16 = 6, /* {kDLBfloat, 16, 1} */
  BP_KIT_DTYPE_FLOAT32 = 7,
  BP_KIT_DTYPE_FLOAT64 = 8,
  BP_KIT_DTYPE_COUNT = 9 /* number of valid ids */
};

/* The id of DLPack dtype `t`; BP_KIT_DTYPE_INVALID when Backplane has no such
 * dtype. */
static inline int32_t bp_kit_dtype_of(DLDataType t) {
  if (t.lanes != 1) return BP_KIT_DTYPE_INVALID;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 16   ? BP_KIT_DTYPE_FLOAT16
             : t.bits == 32 ? BP_KIT_DTYPE_FLOAT32
             : t.bits == 64 ? BP_KIT_DTYPE_FLOAT64
                            : BP_KIT_DTYPE_INVALID;
    case kDLBfloat:
      return t.bits == 16 ? BP_KIT_DTYPE_BFLOAT16 : BP_KIT_DTYPE_INVALID;
    case kDLInt:
      return t.bits == 8    ? BP_KIT_DTYPE_INT8
             : t.bits == 32 ? BP_KIT_DTYPE_INT32
             : t.bits == 64 ? BP_KIT_DTYPE_INT64
                            : BP_KIT_DTYPE_INVALID;
    case kDLUInt:
      return t.bits == 8 ? BP_KIT_DTYPE_UINT8 : BP_KIT_DTYPE_INVALID;
    case BP_DTYPE_CODE_BOOL:
      return t.bits == 8 ? BP_KIT_DTYPE_BOOL : BP_KIT_DTYPE_INVALID;
    default:
      return BP_KIT_DTYPE_INVALID;
  }
}

/* The name of dtype id `id` ("float32", as in ops.yaml and bp_dtype_parse);
 * "invalid" for an id outside [0, BP_KIT_DTYPE_COUNT). Static storage. */
static inline const char* bp_kit_dtype_name(int32_t id) {
  static const char* const names[BP_KIT_DTYPE_COUNT] = {"bool",    "uint8",    "int8",    "int32",  "int64",
                                                        "float16", "bfloat16", "float32", "float64"};
  return id >= 0 && id < BP_KIT_DTYPE_COUNT ? names[id] : "invalid";
}

/* Bytes per element of dtype id `id`; 0 for an invalid id. */
static inline size_t bp_kit_dtype_size(int32_t id) {
  static const unsigned char sizes[BP_KIT_DTYPE_COUNT] = {1, 1, 1, 4, 8, 2, 2, 4, 8};
  return id >= 0 && id < BP_KIT_DTYPE_COUNT ? sizes[id] : 0;
}

/* Nonzero for float16, bfloat16, float32 and float64. */
static inline int bp_kit_dtype_is_floating(int32_t id) {
  return id >= BP_KIT_DTYPE_FLOAT16 && id <= BP_KIT_DTYPE_FLOAT64;
}

/* Nonzero for uint8, int8, int32 and int64 (not bool). */
static inline int bp_kit_dtype_is_integral(int32_t id) { return id >= BP_KIT_DTYPE_UINT8 && id <= BP_KIT_DTYPE_INT64; }

#ifdef __cplusplus
} /* extern "C" */

namespace bp_kit {
/* The same ids as a scoped C++ enum, for switch statements in C++ kernels:
 * static_cast<bp_kit::DType>(bp_kit_dtype_of(t)), or DtypeOf(t). */
enum class DType : int32_t {
  kInvalid = BP_KIT_DTYPE_INVALID,
  kBool = BP_KIT_DTYPE_BOOL,
  kUInt8 = BP_KIT_DTYPE_UINT8,
  kInt8 = BP_KIT_DTYPE_INT8,
  kInt32 = BP_KIT_DTYPE_INT32,
  kInt64 = BP_KIT_DTYPE_INT64,
  kFloat16 = BP_KIT_DTYPE_FLOAT16,
  kBFloat16 = BP_KIT_DTYPE_BFLOAT16,
  kFloat32 = BP_KIT_DTYPE_FLOAT32,
  kFloat64 = BP_KIT_DTYPE_FLOAT64,
};
/* The DType of DLPack dtype `t` (kInvalid when Backplane has none). */
inline DType DtypeOf(DLDataType t) { return static_cast<DType>(bp_kit_dtype_of(t)); }
/* "float32"; "invalid" for kInvalid. */
inline const char* DtypeName(DType d) { return bp_kit_dtype_name(static_cast<int32_t>(d)); }
/* True for the four floating dtypes. */
inline bool IsFloating(DType d) { return bp_kit_dtype_is_floating(static_cast<int32_t>(d)) != 0; }
/* Bytes per element; 0 for kInvalid. */
inline size_t DtypeSize(DType d) { return bp_kit_dtype_size(static_cast<int32_t>(d)); }
}  // namespace bp_kit
#endif

#endif /* BACKPLANE_PLUGIN_KIT_DTYPE_H_ */
