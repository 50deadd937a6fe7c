/*
 * Backplane stable C ABI: types shared by the host API (backplane.h) and the
 * plugin API (backend.h).
 *
 * Pure C99. Every struct that crosses the boundary starts with `struct_size`
 * (set by whoever allocates the struct to sizeof() of the definition it was
 * compiled against); fields are only ever appended. The two fixed-layout cells
 * bp_value_t and bp_kernel_arg_t are the exception: they are array elements,
 * frozen for ABI major 1 like DLPack's DLTensor (new kinds add enumerators,
 * never fields).
 *
 * Thread-safety: everything declared here is plain data.
 */
#ifndef BACKPLANE_TYPES_H_
#define BACKPLANE_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ABI version: 16-bit major, 16-bit minor. Major must match; minor only adds. */
#define BP_ABI_VERSION_MAJOR 1
#define BP_ABI_VERSION_MINOR 5
#define BP_MAKE_ABI_VERSION(major, minor) \
  ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor)&0xffffu)))
#define BP_ABI_VERSION BP_MAKE_ABI_VERSION(BP_ABI_VERSION_MAJOR, BP_ABI_VERSION_MINOR)
#define BP_ABI_VERSION_GET_MAJOR(v) ((uint32_t)(v) >> 16)
#define BP_ABI_VERSION_GET_MINOR(v) ((uint32_t)(v)&0xffffu)

/* Largest tensor rank the dispatcher accepts (PyTorch's TensorIterator: 25). */
#define BP_MAX_NDIM 16

/* ---- Symbol visibility. Libraries are built with -fvisibility=hidden. */
#if defined(_WIN32)
#define BP_HELPER_EXPORT __declspec(dllexport)
#define BP_HELPER_IMPORT __declspec(dllimport)
#else
#define BP_HELPER_EXPORT __attribute__((visibility("default")))
#define BP_HELPER_IMPORT
#endif
#if defined(BACKPLANE_BUILDING_LIBRARY)
#define BP_API BP_HELPER_EXPORT
#else
#define BP_API BP_HELPER_IMPORT
#endif
/* Plugins mark their one entry symbol with this. */
#define BP_PLUGIN_EXPORT BP_HELPER_EXPORT

/* ---- Status codes (0 == OK), numbered as absl::StatusCode. ---------------- */
typedef int32_t bp_status_t;
enum bp_status_code {
  BP_STATUS_OK = 0,
  BP_STATUS_CANCELLED = 1,
  BP_STATUS_UNKNOWN = 2,
  BP_STATUS_INVALID_ARGUMENT = 3,   /* bad shape, dtype, NULL pointer, value */
  BP_STATUS_DEADLINE_EXCEEDED = 4,
  BP_STATUS_NOT_FOUND = 5,          /* unknown operator, backend, device, file */
  BP_STATUS_ALREADY_EXISTS = 6,     /* duplicate kernel or operator definition */
  BP_STATUS_PERMISSION_DENIED = 7,
  BP_STATUS_OUT_OF_MEMORY = 8,      /* absl RESOURCE_EXHAUSTED */
  BP_STATUS_FAILED_PRECONDITION = 9,/* strict mode refused a fallback, unloaded backend */
  BP_STATUS_ABORTED = 10,
  BP_STATUS_OUT_OF_RANGE = 11,      /* dim or index out of range, size overflow */
  BP_STATUS_UNIMPLEMENTED = 12,     /* no kernel, no fallback; NULL ABI slot */
  BP_STATUS_INTERNAL = 13,
  BP_STATUS_UNAVAILABLE = 14,       /* no device, driver missing */
  BP_STATUS_DATA_LOSS = 15,
  BP_STATUS_INCOMPATIBLE_VERSION = 16 /* ABI major mismatch in plugin negotiation */
};

/* ---- dtypes: DLPack's DLDataType with lanes == 1. ------------------------- */
/* DLPack 0.6 has no bool code; Backplane uses code 6 (kDLBool in DLPack >= 0.8)
 * with bits 8, one byte per element holding 0 or 1. */
#define BP_DTYPE_CODE_BOOL 6

/* ---- dtype masks (ABI 1.3): one bit per dtype Backplane computes in. -------
 * Bit i stands for Backplane's dtype id i; a kernel registered with
 * bp_host_api_t.register_kernel_dtypes declares with such a mask the compute
 * dtypes it runs. Bits above BP_DTYPE_MASK_ALL name no dtype and are refused. */
#define BP_DTYPE_MASK_BOOL (UINT64_C(1) << 0)     /* {BP_DTYPE_CODE_BOOL, 8} */
#define BP_DTYPE_MASK_UINT8 (UINT64_C(1) << 1)    /* {kDLUInt, 8} */
#define BP_DTYPE_MASK_INT8 (UINT64_C(1) << 2)     /* {kDLInt, 8} */
#define BP_DTYPE_MASK_INT32 (UINT64_C(1) << 3)    /* {kDLInt, 32} */
#define BP_DTYPE_MASK_INT64 (UINT64_C(1) << 4)    /* {kDLInt, 64} */
#define BP_DTYPE_MASK_FLOAT16 (UINT64_C(1) << 5)  /* {kDLFloat, 16} */
#define BP_DTYPE_MASK_BFLOAT16 (UINT64_C(1) << 6) /* {kDLBfloat, 16} */
#define BP_DTYPE_MASK_FLOAT32 (UINT64_C(1) << 7)  /* {kDLFloat, 32} */
#define BP_DTYPE_MASK_FLOAT64 (UINT64_C(1) << 8)  /* {kDLFloat, 64} */
/* Every dtype Backplane knows. */
#define BP_DTYPE_MASK_ALL (UINT64_C(0x1ff))
/* Groups for common kernel tables. */
#define BP_DTYPE_MASK_INTEGRAL (BP_DTYPE_MASK_UINT8 | BP_DTYPE_MASK_INT8 | BP_DTYPE_MASK_INT32 | BP_DTYPE_MASK_INT64)
#define BP_DTYPE_MASK_FLOATING \
  (BP_DTYPE_MASK_FLOAT16 | BP_DTYPE_MASK_BFLOAT16 | BP_DTYPE_MASK_FLOAT32 | BP_DTYPE_MASK_FLOAT64)

/* ---- Boxed values -------------------------------------------------------- */
enum bp_value_kind {
  BP_VALUE_NONE = 0,        /* an absent optional (Tensor?, int?, str?, ...) */
  BP_VALUE_TENSOR = 1,
  BP_VALUE_TENSOR_LIST = 2,
  BP_VALUE_INT = 3,         /* int, or a Scalar holding an integer */
  BP_VALUE_INT_LIST = 4,    /* int[], int[N] */
  BP_VALUE_DOUBLE = 5,      /* float, or a Scalar holding a floating value */
  BP_VALUE_BOOL = 6,        /* bool, or a Scalar holding a bool */
  BP_VALUE_DTYPE = 7,       /* ScalarType */
  BP_VALUE_STRING = 8       /* str */
};

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_TYPES_H_ */
