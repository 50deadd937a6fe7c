// The nine dtypes bp-conformance checks, in the matrix's column order, with
// their DLPack encodings and conversions between stored bytes and double.
//
// The float16/bfloat16 conversions are the suite's own (floatfmt.h): the
// suite shares no code with any backend, so the CPU backend is tested too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

namespace bpc {

enum class DType : int {
  kFloat32 = 0,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt8,
  kUInt8,
  kInt32,
  kInt64,
  kBool,
};
constexpr int kNumDTypes = 9;

const char* dtype_name(DType d);                       // "float32"
bool dtype_from_name(const std::string& name, DType* out);
DLDataType dtype_to_dl(DType d);
bool dtype_from_dl(DLDataType dl, DType* out);         // false for anything else
size_t dtype_itemsize(DType d);
bool dtype_is_float(DType d);
bool dtype_is_int(DType d);                            // integers, not bool
inline DType dtype_at(int column) { return static_cast<DType>(column); }

// The value `x` becomes when stored in `d`: floats round to nearest even
// (overflow to inf), integers wrap modulo 2^bits after truncation toward
// zero (as a C cast of an in-range value), bool is x != 0. NaN stays NaN for
// floats; for integers the caller must not pass NaN or inf.
double dtype_round(DType d, double x);
// Encodes row-major values (already representable, see dtype_round) into bytes.
void dtype_encode(DType d, const std::vector<double>& values, std::vector<uint8_t>* out);
// Decodes `n` elements of bytes into doubles (exactly: every value of the
// nine dtypes is a double, int64 beyond 2^53 rounds).
std::vector<double> dtype_decode(DType d, const void* bytes, size_t n);

// Smallest positive normal, largest finite, and machine epsilon of a float dtype.
double dtype_min_normal(DType d);
double dtype_max_finite(DType d);
double dtype_epsilon(DType d);
// Distance between the two representable values around |x| in float dtype
// `d` (the ULP at x; the smallest subnormal near zero).
double dtype_ulp(DType d, double x);

// Integer range of an integer dtype (bool: 0..1).
double dtype_int_min(DType d);
double dtype_int_max(DType d);

// A value of `d` unlike `expected`: for bool the opposite, else 7 (5 where
// `expected` is 7); representable in every dtype. What an output the kernel
// must overwrite is filled with (out= sentinels, poison), so an element the
// kernel skipped can never pass by equalling the expected value.
double dtype_value_unlike(DType d, double expected);

}  // namespace bpc
