#include "bponnx/dtype.h"

#include <cstring>

namespace bponnx {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
  }
  return "?";
}

DLDataType dtype_to_dl(DType d) {
  switch (d) {
    case DType::kFloat32: return DLDataType{kDLFloat, 32, 1};
    case DType::kFloat64: return DLDataType{kDLFloat, 64, 1};
    case DType::kFloat16: return DLDataType{kDLFloat, 16, 1};
    case DType::kBFloat16: return DLDataType{kDLBfloat, 16, 1};
    case DType::kInt8: return DLDataType{kDLInt, 8, 1};
    case DType::kUInt8: return DLDataType{kDLUInt, 8, 1};
    case DType::kInt32: return DLDataType{kDLInt, 32, 1};
    case DType::kInt64: return DLDataType{kDLInt, 64, 1};
    case DType::kBool: return DLDataType{BP_DTYPE_CODE_BOOL, 8, 1};
  }
  return DLDataType{kDLFloat, 32, 1};
}

bool dtype_from_dl(DLDataType dl, DType* out) {
  for (int k = 0; k <= static_cast<int>(DType::kBool); ++k) {
    const DLDataType c = dtype_to_dl(static_cast<DType>(k));
    if (c.code == dl.code && c.bits == dl.bits && dl.lanes == 1) {
      *out = static_cast<DType>(k);
      return true;
    }
  }
  return false;
}

size_t dtype_itemsize(DType d) { return d == DType::kBool ? 1 : dtype_to_dl(d).bits / 8; }

bool dtype_is_float(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBFloat16;
}

static int64_t product(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t HostTensor::numel() const { return product(sizes); }
int64_t RawTensor::numel() const { return product(sizes); }

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + "]";
}

std::string sizes_str(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : "") + std::to_string(sizes[k]);
  return s + "]";
}

namespace {
template <typename T>
void widen(const std::string& bytes, std::vector<double>* out) {
  for (size_t k = 0; k < out->size(); ++k) {
    T v;
    std::memcpy(&v, &bytes[k * sizeof(T)], sizeof(T));
    (*out)[k] = static_cast<double>(v);
  }
}
}  // namespace

bool host_from_raw(const RawTensor& r, HostTensor* out) {
  const size_t n = static_cast<size_t>(r.numel());
  if (!r.unsupported.empty() || r.bytes.size() < n * dtype_itemsize(r.dtype)) return false;
  std::vector<double> v(n);
  switch (r.dtype) {
    case DType::kFloat32:
      widen<float>(r.bytes, &v);
      break;
    case DType::kFloat64:
      widen<double>(r.bytes, &v);
      break;
    case DType::kInt8:
      widen<int8_t>(r.bytes, &v);
      break;
    case DType::kUInt8:
      widen<uint8_t>(r.bytes, &v);
      break;
    case DType::kInt32:
      widen<int32_t>(r.bytes, &v);
      break;
    case DType::kInt64:
      widen<int64_t>(r.bytes, &v);
      break;
    case DType::kBool:
      widen<uint8_t>(r.bytes, &v);
      for (double& x : v) x = x != 0.0 ? 1.0 : 0.0;
      break;
    default:
      return false;
  }
  out->dtype = r.dtype;
  out->sizes = r.sizes;
  out->values = std::move(v);
  return true;
}

}  // namespace bponnx
