// Helpers shared by the meta function tests: tensor geometries, boxed
// arguments, and running a meta/view function by its ops.yaml name.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meta/meta.h"

namespace bp::core::metatest {

using D = DType;

inline Geometry T(std::vector<int64_t> sizes, D dtype = D::kFloat32) {
  Geometry g;
  g.dtype = DtypeToDL(dtype);
  g.ndim = static_cast<int32_t>(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) g.sizes[i] = sizes[i];
  g.set_contiguous_strides();
  return g;
}

inline MetaArg A(const Geometry& g) {
  MetaArg a;
  a.kind = BP_VALUE_TENSOR;
  a.tensor = &g;
  return a;
}
inline MetaArg I(int64_t v) {
  MetaArg a;
  a.kind = BP_VALUE_INT;
  a.i = v;
  return a;
}
inline MetaArg F(double v) {
  MetaArg a;
  a.kind = BP_VALUE_DOUBLE;
  a.d = v;
  return a;
}
inline MetaArg B(bool v) {
  MetaArg a;
  a.kind = BP_VALUE_BOOL;
  a.b = v;
  return a;
}
inline MetaArg L(const std::vector<int64_t>& v) {
  MetaArg a;
  a.kind = BP_VALUE_INT_LIST;
  a.ints = v.data();
  a.num_ints = static_cast<int64_t>(v.size());
  return a;
}
inline MetaArg S(const char* s) {
  MetaArg a;
  a.kind = BP_VALUE_STRING;
  a.str = s;
  return a;
}
inline MetaArg Dt(D d) {
  MetaArg a;
  a.kind = BP_VALUE_DTYPE;
  a.dtype = DtypeToDL(d);
  return a;
}
inline MetaArg None() { return MetaArg(); }

inline std::vector<int64_t> Sizes(const Geometry& g) { return std::vector<int64_t>(g.sizes, g.sizes + g.ndim); }
inline std::vector<int64_t> Strides(const Geometry& g) { return std::vector<int64_t>(g.strides, g.strides + g.ndim); }
inline D Dtype(const Geometry& g) { return DtypeFromDL(g.dtype); }

// A plan's rewritten int lists point into its own int_storage, so a copy
// must re-point them at the copy's storage.
struct Result {
  MetaPlan plan;
  Status status;
  Result() = default;
  Result(const Result& other) { *this = other; }
  Result& operator=(const Result& other) {
    plan = other.plan;
    status = other.status;
    const int64_t* begin = other.plan.int_storage;
    const int64_t* end = begin + sizeof(other.plan.int_storage) / sizeof(int64_t);
    for (MetaArg& a : plan.rewritten) {
      if (a.ints >= begin && a.ints < end) a.ints = plan.int_storage + (a.ints - begin);
    }
    return *this;
  }
};

inline Result Infer(const char* meta, const char* op, std::vector<const char*> names, std::vector<MetaArg> args) {
  const MetaFunctions* m = FindMetaFunctions(meta);
  Result r;
  EXPECT_NE(m, nullptr) << meta;
  if (m == nullptr) return r;
  // The core always passes every schema argument (defaults filled in).
  if (args.size() < names.size()) args.resize(names.size());
  MetaCallInfo info{op, names.data(), static_cast<int32_t>(names.size())};
  r.status = m->infer(info, args.data(), &r.plan);
  return r;
}

inline void ExpectError(const Status& st, bp_status_t code, std::vector<std::string> parts) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), code) << st.message();
  for (const std::string& p : parts) EXPECT_NE(st.message().find(p), std::string::npos) << st.message() << " | want: " << p;
}

inline const std::vector<const char*> kBinaryNames = {"self", "other", "alpha"};

inline Status View(const char* name, std::vector<const char*> names, std::vector<MetaArg> args, Geometry* out) {
  const ViewFunctions* v = FindViewFunctions(name);
  EXPECT_NE(v, nullptr) << name;
  if (args.size() < names.size()) args.resize(names.size());
  MetaCallInfo info{name, names.data(), static_cast<int32_t>(names.size())};
  return v->view(info, args.data(), out);
}

inline Geometry Transposed(std::vector<int64_t> sizes) {  // a [b, a] tensor seen as [a, b]
  Geometry g = T({sizes[1], sizes[0]});
  std::swap(g.sizes[0], g.sizes[1]);
  std::swap(g.strides[0], g.strides[1]);
  return g;
}

}  // namespace bp::core::metatest
