// Helpers of the ABI and runtime group (abi_runtime_group.cpp): owned tensor
// references, boxed arguments, operator calls, host data in every dtype, and
// buffers with guard bytes. Public C API only.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "boxed_values.h"
#include "dtype.h"

namespace bpc::abirt {

constexpr DType kAllDtypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                                DType::kUInt8,   DType::kInt32,   DType::kInt64,   DType::kBool};
constexpr bp_device_t kCpu{0, 0};

// "INVALID_ARGUMENT: add.Tensor: ..." for the calling thread's last error.
inline std::string LastError() {
  return std::string(bp_status_name(bp_last_error_status())) + ": " + bp_last_error_message();
}

// One owned tensor reference, released when it goes.
class Held {
 public:
  Held() = default;
  explicit Held(bp_tensor_t* t) : t_(t) {}
  ~Held() { bp_tensor_release(t_); }
  Held(Held&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  Held& operator=(Held&& o) noexcept {
    if (this != &o) {
      bp_tensor_release(t_);
      t_ = o.t_;
      o.t_ = nullptr;
    }
    return *this;
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  bp_tensor_t* get() const { return t_; }
  explicit operator bool() const { return t_ != nullptr; }
  // Where a C API call writes a new reference (the old one is released).
  bp_tensor_t** out() {
    bp_tensor_release(t_);
    t_ = nullptr;
    return &t_;
  }

 private:
  bp_tensor_t* t_ = nullptr;
};


// The operator `name`, or nullptr (the caller reports it).
inline bp_op_t* FindOp(bp_context_t* ctx, const char* name) {
  bp_op_t* op = nullptr;
  return bp_op_find(ctx, name, &op) == BP_STATUS_OK ? op : nullptr;
}

// Calls `name` with one result wanted; `out` receives it (or stays empty).
inline bp_status_t CallOp(bp_context_t* ctx, const char* name, std::vector<bp_value_t> args, Held* out) {
  bp_op_t* op = FindOp(ctx, name);
  if (op == nullptr) return BP_STATUS_NOT_FOUND;
  bp_tensor_t* r = nullptr;
  const bp_status_t st = bp_op_call(ctx, op, args.data(), static_cast<int32_t>(args.size()), out ? &r : nullptr,
                                    out ? 1 : 0);
  if (out != nullptr) *out = Held(st == BP_STATUS_OK ? r : nullptr);
  return st;
}

// Host bytes of `values` in dtype `d` (values must be exact in d).
inline std::vector<uint8_t> Encode(DType d, const std::vector<double>& values) {
  std::vector<uint8_t> bytes;
  dtype_encode(d, values, &bytes);
  return bytes;
}

// n distinct values exact in every dtype of the nine: small integers (bool: 0/1)
// and, for floating dtypes, quarters.
inline std::vector<double> Values(DType d, int64_t n, int salt = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = (i * 7 + salt * 13) % 61;  // 0..60: fits int8 and uint8
    if (d == DType::kBool) {
      v[i] = static_cast<double>((i + salt) % 2);
    } else if (dtype_is_float(d)) {
      v[i] = static_cast<double>(k) * 0.25 - 3.0;
    } else {
      v[i] = static_cast<double>(k);
    }
  }
  return v;
}

// A tensor of `sizes` in dtype `d` on `dev` holding `values`; empty Held on error.
inline Held FromHost(bp_context_t* ctx, bp_device_t dev, const std::vector<int64_t>& sizes, DType d,
                     const std::vector<double>& values) {
  const std::vector<uint8_t> bytes = Encode(d, values);
  Held t;
  if (bp_tensor_from_host(ctx, dev, static_cast<int32_t>(sizes.size()), sizes.data(), dtype_to_dl(d),
                          bytes.data(), bytes.size(), t.out()) != BP_STATUS_OK) {
    return Held();
  }
  return t;
}

// The elements of `t`, row-major, decoded; false (with the error in *err) on failure.
inline bool ReadBack(const bp_tensor_t* t, DType d, std::vector<double>* out, std::string* err) {
  const size_t n = static_cast<size_t>(bp_tensor_numel(t));
  std::vector<uint8_t> bytes(n * dtype_itemsize(d));
  if (bp_tensor_to_host(t, bytes.data(), bytes.size()) != BP_STATUS_OK) {
    *err = "bp_tensor_to_host: " + LastError();
    return false;
  }
  *out = dtype_decode(d, bytes.data(), n);
  return true;
}

// The elements a view of sizes/strides/offset over a contiguous base shows, row-major.
inline std::vector<double> Gather(const std::vector<double>& base, const std::vector<int64_t>& sizes,
                                  const std::vector<int64_t>& strides, int64_t offset) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, at = offset;
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
      at += (rest % sizes[d]) * strides[d];
      rest /= sizes[d];
    }
    out.push_back(base[static_cast<size_t>(at)]);
  }
  return out;
}

inline std::vector<int64_t> SizesOf(const bp_tensor_t* t) {
  return std::vector<int64_t>(bp_tensor_sizes(t), bp_tensor_sizes(t) + bp_tensor_ndim(t));
}
inline std::vector<int64_t> StridesOf(const bp_tensor_t* t) {
  return std::vector<int64_t>(bp_tensor_strides(t), bp_tensor_strides(t) + bp_tensor_ndim(t));
}

// A struct of `known` bytes inside a buffer of `known + tail` bytes, with
// struct_size set to `declared` and every other byte set to a guard pattern;
// Untouched(from) says whether the bytes from `from` on still hold it.
class GuardedStruct {
 public:
  static constexpr uint8_t kGuard = 0xA5;
  GuardedStruct(size_t known, size_t tail, size_t declared) : bytes_(known + tail, kGuard) {
    std::memcpy(bytes_.data(), &declared, sizeof(declared));
  }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(bytes_.data());
  }
  bool Untouched(size_t from) const {
    for (size_t i = from; i < bytes_.size(); ++i) {
      if (bytes_[i] != kGuard) return false;
    }
    return true;
  }
  size_t declared() const {
    size_t s = 0;
    std::memcpy(&s, bytes_.data(), sizeof(s));
    return s;
  }

 private:
  std::vector<uint8_t> bytes_;  // vector storage is aligned for any struct here
};

}  // namespace bpc::abirt
