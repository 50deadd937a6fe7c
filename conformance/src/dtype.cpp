#include "dtype.h"

#include <cmath>
#include <cstring>

#include "floatfmt.h"

namespace bpc {
namespace {

constexpr uint8_t kBoolCode = 6;  // BP_DTYPE_CODE_BOOL

struct DTypeRow {
  const char* name;
  uint8_t code;
  uint8_t bits;
};
constexpr DTypeRow kRows[kNumDTypes] = {
    {"float32", kDLFloat, 32}, {"float64", kDLFloat, 64}, {"float16", kDLFloat, 16},
    {"bfloat16", kDLBfloat, 16}, {"int8", kDLInt, 8},     {"uint8", kDLUInt, 8},
    {"int32", kDLInt, 32},     {"int64", kDLInt, 64},     {"bool", kBoolCode, 8},
};

const DTypeRow& row(DType d) { return kRows[static_cast<int>(d)]; }

// Wraps an integral double modulo 2^bits into the signed or unsigned range.
double wrap_int(double t, int bits, bool is_signed) {
  const double m = std::ldexp(1.0, bits);
  const double lo = is_signed ? -m / 2 : 0.0, hi = is_signed ? m / 2 : m;
  if (t >= lo && t < hi) return t;  // in range: no arithmetic that could round
  double r = std::fmod(t, m);  // exact
  if (r < 0) r += m;
  if (is_signed && r >= m / 2) r -= m;
  return r;
}

template <typename T>
void store(const std::vector<double>& v, std::vector<uint8_t>* out) {
  out->resize(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i) {
    const T x = static_cast<T>(v[i]);
    std::memcpy(out->data() + i * sizeof(T), &x, sizeof(T));
  }
}

template <typename T>
void load(const void* bytes, size_t n, std::vector<double>* out) {
  const uint8_t* p = static_cast<const uint8_t*>(bytes);
  for (size_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, p + i * sizeof(T), sizeof(T));
    (*out)[i] = static_cast<double>(x);
  }
}

}  // namespace

const char* dtype_name(DType d) { return row(d).name; }

bool dtype_from_name(const std::string& name, DType* out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kRows[i].name) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

DLDataType dtype_to_dl(DType d) {
  DLDataType dl;
  dl.code = row(d).code;
  dl.bits = row(d).bits;
  dl.lanes = 1;
  return dl;
}

bool dtype_from_dl(DLDataType dl, DType* out) {
  if (dl.lanes != 1) return false;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kRows[i].code == dl.code && kRows[i].bits == dl.bits) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

size_t dtype_itemsize(DType d) { return row(d).bits / 8; }

bool dtype_is_float(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 ||
         d == DType::kBFloat16;
}

bool dtype_is_int(DType d) {
  return d == DType::kInt8 || d == DType::kUInt8 || d == DType::kInt32 || d == DType::kInt64;
}

double dtype_round(DType d, double x) {
  switch (d) {
    case DType::kFloat64: return x;
    case DType::kFloat32: return round_to_format(x, kFormatF32);
    case DType::kFloat16: return round_to_format(x, kFormatF16);
    case DType::kBFloat16: return round_to_format(x, kFormatBF16);
    case DType::kBool: return x != 0.0 ? 1.0 : 0.0;
    case DType::kInt8: return wrap_int(std::trunc(x), 8, true);
    case DType::kUInt8: return wrap_int(std::trunc(x), 8, false);
    case DType::kInt32: return wrap_int(std::trunc(x), 32, true);
    case DType::kInt64: return wrap_int(std::trunc(x), 64, true);
  }
  return x;
}

void dtype_encode(DType d, const std::vector<double>& v, std::vector<uint8_t>* out) {
  switch (d) {
    case DType::kFloat32: store<float>(v, out); return;
    case DType::kFloat64: store<double>(v, out); return;
    case DType::kInt8: store<int8_t>(v, out); return;
    case DType::kUInt8: store<uint8_t>(v, out); return;
    case DType::kInt32: store<int32_t>(v, out); return;
    case DType::kInt64: store<int64_t>(v, out); return;
    case DType::kBool: store<uint8_t>(v, out); return;
    case DType::kFloat16:
    case DType::kBFloat16: {
      out->resize(v.size() * 2);
      for (size_t i = 0; i < v.size(); ++i) {
        const uint16_t b = d == DType::kFloat16 ? f16_bits_from_double(v[i])
                                                : bf16_bits_from_double(v[i]);
        std::memcpy(out->data() + 2 * i, &b, 2);
      }
      return;
    }
  }
}

std::vector<double> dtype_decode(DType d, const void* bytes, size_t n) {
  std::vector<double> out(n);
  switch (d) {
    case DType::kFloat32: load<float>(bytes, n, &out); break;
    case DType::kFloat64: load<double>(bytes, n, &out); break;
    case DType::kInt8: load<int8_t>(bytes, n, &out); break;
    case DType::kUInt8: load<uint8_t>(bytes, n, &out); break;
    case DType::kInt32: load<int32_t>(bytes, n, &out); break;
    case DType::kInt64: load<int64_t>(bytes, n, &out); break;
    case DType::kBool: load<uint8_t>(bytes, n, &out); break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      const uint8_t* p = static_cast<const uint8_t*>(bytes);
      for (size_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, p + 2 * i, 2);
        out[i] = d == DType::kFloat16 ? f16_bits_to_double(b) : bf16_bits_to_double(b);
      }
      break;
    }
  }
  return out;
}

static FloatFormat format_of(DType d) {
  switch (d) {
    case DType::kFloat16: return kFormatF16;
    case DType::kBFloat16: return kFormatBF16;
    case DType::kFloat64: return FloatFormat{53, -1022, 1023};
    default: return kFormatF32;
  }
}

double dtype_min_normal(DType d) { return std::ldexp(1.0, format_of(d).emin); }
double dtype_max_finite(DType d) { return format_max(format_of(d)); }
double dtype_epsilon(DType d) { return std::ldexp(1.0, 1 - format_of(d).precision); }

double dtype_ulp(DType d, double x) {
  const FloatFormat f = format_of(d);
  double a = std::fabs(x);
  if (std::isinf(a) || std::isnan(a)) a = format_max(f);
  int e = 0;
  std::frexp(a, &e);
  int lead = a == 0.0 ? f.emin : e - 1;
  if (lead < f.emin) lead = f.emin;
  if (lead > f.emax) lead = f.emax;
  return std::ldexp(1.0, lead - (f.precision - 1));
}

double dtype_int_min(DType d) {
  switch (d) {
    case DType::kInt8: return -128.0;
    case DType::kInt32: return -2147483648.0;
    case DType::kInt64: return -9223372036854775808.0;
    default: return 0.0;
  }
}

double dtype_int_max(DType d) {
  switch (d) {
    case DType::kInt8: return 127.0;
    case DType::kUInt8: return 255.0;
    case DType::kInt32: return 2147483647.0;
    case DType::kInt64: return 9223372036854775807.0;  // rounds to 2^63 as a double
    case DType::kBool: return 1.0;
    default: return 0.0;
  }
}

double dtype_value_unlike(DType d, double expected) {
  if (d == DType::kBool) return expected != 0.0 ? 0.0 : 1.0;
  return expected == 7.0 ? 5.0 : 7.0;
}

}  // namespace bpc
