#include "shape_fold.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Fold = std::function<bool(const OnnxNode&, const std::vector<FoldInput>&, HostTensor*)>;

bool is_int(DType d) { return !dtype_is_float(d) && d != DType::kBool; }

// Axis `a` of a rank-`rank` tensor counted from 0; false when out of range.
bool norm(int64_t a, int64_t rank, int64_t* out) {
  const int64_t r = a < 0 ? a + rank : a;
  if (r < 0 || r >= std::max<int64_t>(rank, 1)) return false;
  *out = r;
  return true;
}

int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A value converted to `d` as a cast does (ints truncate and wrap, floats
// round to float32); false for float16/bfloat16 (rounded by the device).
bool convert(double v, DType d, double* out) {
  switch (d) {
    case DType::kFloat32:
      *out = static_cast<double>(static_cast<float>(v));
      return true;
    case DType::kFloat64:
      *out = v;
      return true;
    case DType::kBool:
      *out = v != 0.0 ? 1.0 : 0.0;
      return true;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt32:
    case DType::kInt64: {
      if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) return false;
      const int64_t i = static_cast<int64_t>(v);
      *out = d == DType::kInt8    ? static_cast<double>(static_cast<int8_t>(i))
             : d == DType::kUInt8 ? static_cast<double>(static_cast<uint8_t>(i))
             : d == DType::kInt32 ? static_cast<double>(static_cast<int32_t>(i))
                                  : static_cast<double>(i);
      return true;
    }
    default:
      return false;
  }
}

// Elementwise over numpy-broadcast inputs: out[i] = f(values at i).
bool broadcast(const std::vector<const HostTensor*>& xs, DType d, const std::function<double(const double*)>& f,
               HostTensor* out) {
  size_t rank = 0;
  for (const HostTensor* x : xs) rank = std::max(rank, x->sizes.size());
  std::vector<int64_t> sizes(rank, 1);
  for (const HostTensor* x : xs) {
    for (size_t k = 0; k < x->sizes.size(); ++k) {
      int64_t& s = sizes[rank - x->sizes.size() + k];
      const int64_t v = x->sizes[k];
      if (s == 1)
        s = v;
      else if (v != 1 && v != s)
        return false;
    }
  }
  out->dtype = d;
  out->sizes = sizes;
  const int64_t n = product(sizes);
  if (n > kHostValueLimit) return false;
  std::vector<double> args(xs.size());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i;
    for (size_t k = rank; k-- > 0;) {
      idx[k] = rem % sizes[k];
      rem /= sizes[k];
    }
    for (size_t a = 0; a < xs.size(); ++a) {
      const HostTensor& x = *xs[a];
      int64_t flat = 0;
      for (size_t k = 0; k < x.sizes.size(); ++k) {
        const int64_t dim = x.sizes[k];
        flat = flat * dim + (dim == 1 ? 0 : idx[rank - x.sizes.size() + k]);
      }
      args[a] = x.values[static_cast<size_t>(flat)];
    }
    double v = f(args.data());
    if (!convert(v, d, &v)) return false;
    out->values.push_back(v);
  }
  return true;
}

// Integer arithmetic only: float results would round differently from the device's.
Fold arith(const std::function<double(double, double)>& f) {
  return [f](const OnnxNode&, const std::vector<FoldInput>& in, HostTensor* out) {
    const DType d = in[0].host->dtype;
    if (!is_int(d) || in[1].host->dtype != d) return false;
    return broadcast(
        {in[0].host, in[1].host}, d, [&](const double* a) { return f(a[0], a[1]); }, out);
  };
}

Fold compare(const std::function<bool(double, double)>& f) {
  return [f](const OnnxNode&, const std::vector<FoldInput>& in, HostTensor* out) {
    return broadcast(
        {in[0].host, in[1].host}, DType::kBool, [&](const double* a) { return f(a[0], a[1]) ? 1.0 : 0.0; }, out);
  };
}

// Unsqueeze/Squeeze axes: an attribute before opset 13, an input from 13.
std::vector<int64_t> axes_of(const OnnxNode& n, const std::vector<FoldInput>& in) {
  if (n.opset >= 13) return in.size() > 1 && in[1].present ? host_ints(*in[1].host) : std::vector<int64_t>{};
  return n.get_ints("axes", {});
}

// out[i0, i1, ...] = x.values[offsets[0][i0] + offsets[1][i1] + ...]: the
// one walk behind Transpose and Slice (offsets[k] holds, for each index of
// output dim k, its offset into x's values).
void gather_values(const HostTensor& x, const std::vector<std::vector<int64_t>>& offsets, HostTensor* out) {
  out->dtype = x.dtype;
  out->sizes.clear();
  for (const auto& o : offsets) out->sizes.push_back(static_cast<int64_t>(o.size()));
  const int64_t numel = product(out->sizes);
  const size_t rank = offsets.size();
  std::vector<size_t> idx(rank, 0);  // the output index, row-major
  for (int64_t i = 0; i < numel; ++i) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k) src += offsets[k][idx[k]];
    out->values.push_back(x.values[static_cast<size_t>(src)]);
    for (size_t k = rank; k-- > 0 && ++idx[k] == offsets[k].size();) idx[k] = 0;
  }
}

// Row-major strides of `sizes`, in elements.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t k = sizes.size(); k-- > 1;) s[k - 1] = s[k] * sizes[k];
  return s;
}

HostTensor with_sizes(const HostTensor& x, std::vector<int64_t> sizes) {
  HostTensor r = x;
  r.sizes = std::move(sizes);
  return r;
}

const std::map<std::string, Fold>& folds() {
  static const std::map<std::string, Fold> table = [] {
    std::map<std::string, Fold> m;
    m["Identity"] = [](const OnnxNode&, const std::vector<FoldInput>& in, HostTensor* out) {
      *out = *in[0].host;
      return true;
    };
    m["Cast"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      DType d;
      if (!dtype_from_onnx(static_cast<int>(n.get_int("to", 0)), &d, nullptr)) return false;
      return broadcast(
          {in[0].host}, d, [](const double* a) { return a[0]; }, out);
    };
    m["Add"] = arith([](double a, double b) { return a + b; });
    m["Sub"] = arith([](double a, double b) { return a - b; });
    m["Mul"] = arith([](double a, double b) { return a * b; });
    m["Div"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      for (double v : in[1].host->values) {
        if (v == 0.0) return false;  // the device's answer, whatever it is
      }
      return arith([](double a, double b) { return std::trunc(a / b); })(n, in, out);
    };
    // Mod: the divisor's sign (fmod = 0, as Python's %), or the dividend's (fmod = 1).
    m["Mod"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      for (double v : in[1].host->values) {
        if (v == 0.0) return false;  // the device's answer, whatever it is
      }
      const bool c_fmod = n.get_int("fmod", 0) != 0;
      return arith([c_fmod](double a, double b) {
        const double r = std::fmod(a, b);
        return !c_fmod && r != 0 && (r < 0) != (b < 0) ? r + b : r;
      })(n, in, out);
    };
    m["Neg"] = [](const OnnxNode&, const std::vector<FoldInput>& in, HostTensor* out) {
      const DType d = in[0].host->dtype;
      return is_int(d) && broadcast(
                              {in[0].host}, d, [](const double* a) { return -a[0]; }, out);
    };
    m["Equal"] = compare([](double a, double b) { return a == b; });
    m["Less"] = compare([](double a, double b) { return a < b; });
    m["Greater"] = compare([](double a, double b) { return a > b; });
    m["Not"] = [](const OnnxNode&, const std::vector<FoldInput>& in, HostTensor* out) {
      return broadcast(
          {in[0].host}, DType::kBool, [](const double* a) { return a[0] != 0.0 ? 0.0 : 1.0; }, out);
    };
    m["Where"] = [](const OnnxNode&, const std::vector<FoldInput>& in, HostTensor* out) {
      const DType d = in[1].host->dtype;
      if (in[2].host->dtype != d) return false;
      return broadcast(
          {in[0].host, in[1].host, in[2].host}, d, [](const double* a) { return a[0] != 0.0 ? a[1] : a[2]; }, out);
    };
    m["Unsqueeze"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      std::vector<int64_t> axes = axes_of(n, in);
      std::vector<int64_t> s = in[0].host->sizes;
      const int64_t r = static_cast<int64_t>(s.size() + axes.size());
      for (int64_t& a : axes) {
        if (!norm(a, r, &a)) return false;
      }
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) s.insert(s.begin() + std::min<int64_t>(a, static_cast<int64_t>(s.size())), 1);
      *out = with_sizes(*in[0].host, s);
      return true;
    };
    m["Squeeze"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      const std::vector<int64_t>& xs = in[0].host->sizes;
      std::vector<int64_t> axes = axes_of(n, in);
      std::set<int64_t> drop;
      for (int64_t a : axes) {
        if (!norm(a, static_cast<int64_t>(xs.size()), &a) || xs[static_cast<size_t>(a)] != 1) return false;
        drop.insert(a);
      }
      std::vector<int64_t> s;
      for (size_t k = 0; k < xs.size(); ++k) {
        if (axes.empty() ? xs[k] != 1 : !drop.count(static_cast<int64_t>(k))) s.push_back(xs[k]);
      }
      *out = with_sizes(*in[0].host, s);
      return true;
    };
    // Transpose: torch's Pad export reverses its [dims, 2] pads through one.
    m["Transpose"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      const HostTensor& x = *in[0].host;
      const int64_t rank = x.ndim();
      std::vector<int64_t> perm = n.get_ints("perm", {});
      if (perm.empty()) {
        for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
      }
      if (static_cast<int64_t>(perm.size()) != rank) return false;
      const std::vector<int64_t> strides = row_major_strides(x.sizes);
      std::vector<int64_t> seen(perm.size(), 0);
      std::vector<std::vector<int64_t>> offsets(perm.size());  // output dim k walks input dim perm[k]
      for (size_t k = 0; k < perm.size(); ++k) {
        const int64_t p = perm[k];
        if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]++) return false;
        for (int64_t i = 0; i < x.sizes[static_cast<size_t>(p)]; ++i) {
          offsets[k].push_back(i * strides[static_cast<size_t>(p)]);
        }
      }
      gather_values(x, offsets, out);
      return true;
    };
    m["Reshape"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      if (n.opset < 5) return false;
      std::vector<int64_t> shape = host_ints(*in[1].host);
      const std::vector<int64_t>& xs = in[0].host->sizes;
      int64_t known = 1, infer = -1;
      for (size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] == 0 && n.get_int("allowzero", 0) == 0 && k < xs.size()) shape[k] = xs[k];
        if (shape[k] == -1) {
          if (infer >= 0) return false;
          infer = static_cast<int64_t>(k);
        } else if (shape[k] < 0) {
          return false;
        } else {
          known *= shape[k];
        }
      }
      const int64_t numel = in[0].host->numel();
      if (infer >= 0) {
        if (known == 0 || numel % known != 0) return false;
        shape[static_cast<size_t>(infer)] = numel / known;
      }
      if (product(shape) != numel) return false;
      *out = with_sizes(*in[0].host, shape);
      return true;
    };
    m["Concat"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      const std::vector<int64_t>& s0 = in[0].host->sizes;
      int64_t axis = 0;
      if (!norm(n.get_int("axis", 0), static_cast<int64_t>(s0.size()), &axis) || s0.empty()) return false;
      // Row-major: the blocks before `axis` (outer) each take every input's slice in turn.
      const int64_t outer = product(std::vector<int64_t>(s0.begin(), s0.begin() + axis));
      std::vector<int64_t> sizes = s0;
      sizes[static_cast<size_t>(axis)] = 0;
      for (const FoldInput& x : in) {
        const HostTensor& h = *x.host;
        if (h.sizes.size() != s0.size() || h.dtype != in[0].host->dtype) return false;
        sizes[static_cast<size_t>(axis)] += h.sizes[static_cast<size_t>(axis)];
      }
      out->dtype = in[0].host->dtype;
      out->sizes = sizes;
      for (int64_t o = 0; o < outer; ++o) {
        for (const FoldInput& x : in) {
          const int64_t block = outer == 0 ? 0 : x.host->numel() / outer;
          out->values.insert(out->values.end(), x.host->values.begin() + o * block,
                             x.host->values.begin() + (o + 1) * block);
        }
      }
      return true;
    };
    m["Gather"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      const HostTensor& x = *in[0].host;
      int64_t axis = 0;
      if (!norm(n.get_int("axis", 0), x.ndim(), &axis) || x.sizes.empty()) return false;
      const int64_t len = x.sizes[static_cast<size_t>(axis)];
      const int64_t outer = product(std::vector<int64_t>(x.sizes.begin(), x.sizes.begin() + axis));
      const int64_t inner = product(std::vector<int64_t>(x.sizes.begin() + axis + 1, x.sizes.end()));
      std::vector<int64_t> idx = host_ints(*in[1].host);
      for (int64_t& i : idx) {
        if (i < -len || i >= len) return false;  // the mapping reports it
        if (i < 0) i += len;
      }
      out->dtype = x.dtype;
      out->sizes.assign(x.sizes.begin(), x.sizes.begin() + axis);
      out->sizes.insert(out->sizes.end(), in[1].host->sizes.begin(), in[1].host->sizes.end());
      out->sizes.insert(out->sizes.end(), x.sizes.begin() + axis + 1, x.sizes.end());
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i : idx) {
          const auto at = x.values.begin() + (o * len + i) * inner;
          out->values.insert(out->values.end(), at, at + inner);
        }
      }
      return true;
    };
    // Slice: starts, ends, axes, steps as inputs (opset 10+); a shape, or
    // torch's Pad export reversing its [dims, 2] pads (step -1 on axis 0).
    m["Slice"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      const HostTensor& x = *in[0].host;
      const int64_t rank = x.ndim();
      if (n.opset < 10 || rank < 1) return false;
      const std::vector<int64_t> starts = host_ints(*in[1].host), ends = host_ints(*in[2].host);
      std::vector<int64_t> axes = in.size() > 3 && in[3].present ? host_ints(*in[3].host) : std::vector<int64_t>{};
      std::vector<int64_t> steps = in.size() > 4 && in[4].present ? host_ints(*in[4].host) : std::vector<int64_t>{};
      if (axes.empty()) {
        for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
      }
      if (steps.empty()) steps.assign(starts.size(), 1);
      if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) return false;
      // The source offsets along each dim (all of its indices where no entry slices it).
      const std::vector<int64_t> strides = row_major_strides(x.sizes);
      std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(rank));
      std::vector<bool> sliced(static_cast<size_t>(rank), false);
      for (size_t k = 0; k < starts.size(); ++k) {
        int64_t a = axes[k];
        if (!norm(a, rank, &a) || sliced[static_cast<size_t>(a)] || steps[k] == 0) return false;
        sliced[static_cast<size_t>(a)] = true;
        const int64_t dim = x.sizes[static_cast<size_t>(a)], step = steps[k];
        int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
        int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
        if (step > 0) {
          s = std::max<int64_t>(0, std::min(dim, s));
          e = std::max<int64_t>(0, std::min(dim, e));
        } else {  // ONNX clamps a backward start to [0, dim - 1], its end to [-1, dim - 1]
          s = std::max<int64_t>(0, std::min(dim - 1, s));
          e = std::max<int64_t>(-1, std::min(dim - 1, e));
        }
        for (int64_t i = s; dim > 0 && (step > 0 ? i < e : i > e); i += step) {
          offsets[static_cast<size_t>(a)].push_back(i * strides[static_cast<size_t>(a)]);
        }
      }
      for (int64_t k = 0; k < rank; ++k) {
        if (sliced[static_cast<size_t>(k)]) continue;
        for (int64_t i = 0; i < x.sizes[static_cast<size_t>(k)]; ++i) {
          offsets[static_cast<size_t>(k)].push_back(i * strides[static_cast<size_t>(k)]);
        }
      }
      gather_values(x, offsets, out);
      return true;
    };
    m["ConstantOfShape"] = [](const OnnxNode& n, const std::vector<FoldInput>& in, HostTensor* out) {
      out->sizes = host_ints(*in[0].host);
      for (int64_t s : out->sizes) {
        if (s < 0) return false;
      }
      if (product(out->sizes) > kHostValueLimit) return false;
      double v = 0.0;
      out->dtype = DType::kFloat32;
      if (n.has("value")) {
        const RawTensor& t = n.attrs.at("value").tensor;
        HostTensor h;
        if (!host_from_raw(t, &h)) return false;
        out->dtype = h.dtype;
        if (!h.values.empty()) v = h.values[0];
      }
      out->values.assign(static_cast<size_t>(product(out->sizes)), v);
      return true;
    };
    return m;
  }();
  return table;
}

}  // namespace

bool fold_on_host(const OnnxNode& n, const std::vector<FoldInput>& in, std::vector<HostTensor>* out) {
  if (!n.domain.empty() || n.outputs.size() != 1 || n.outputs[0].empty()) return false;
  HostTensor r;
  if (n.op_type == "Shape" || n.op_type == "Size") {
    if (in.empty() || !in[0].present) return false;
    r = shape_value(n, in[0].sizes);
  } else {
    const auto it = folds().find(n.op_type);
    if (it == folds().end()) return false;
    for (const FoldInput& x : in) {
      if (x.present && x.host == nullptr) return false;
    }
    if (in.empty() || !in[0].present) return false;
    try {
      if (!it->second(n, in, &r)) return false;
    } catch (const std::exception&) {
      return false;  // a short input list: the mapping reports it
    }
  }
  if (r.numel() > kHostValueLimit || static_cast<int64_t>(r.values.size()) != r.numel()) return false;
  out->assign(1, std::move(r));
  return true;
}

HostTensor shape_value(const OnnxNode& n, const std::vector<int64_t>& xs) {
  HostTensor r;
  r.dtype = DType::kInt64;
  if (n.op_type == "Size") {
    r.values = {static_cast<double>(product(xs))};
    return r;
  }
  const int64_t rank = static_cast<int64_t>(xs.size());
  auto clampi = [rank](int64_t v) { return std::max<int64_t>(0, std::min<int64_t>(rank, v < 0 ? v + rank : v)); };
  const int64_t start = clampi(n.get_int("start", 0)), end = clampi(n.get_int("end", rank));
  for (int64_t k = start; k < end; ++k) r.values.push_back(static_cast<double>(xs[static_cast<size_t>(k)]));
  r.sizes = {static_cast<int64_t>(r.values.size())};
  return r;
}

bool host_only_input(const OnnxNode& n, size_t k) {
  if (!n.domain.empty() || k == 0) return n.domain.empty() && k == 0 && n.op_type == "ConstantOfShape";
  const std::string& op = n.op_type;
  if (op == "Reshape") return n.opset >= 5 && k == 1;
  if (op == "Expand" || op == "Tile" || op == "TopK" || op == "CumSum" || op == "Trilu" || op == "OneHot")
    return k == 1 && (op != "TopK" || n.opset >= 10);
  if (op == "Slice") return n.opset >= 10 && k <= 4;
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Split") return n.opset >= 13 && k == 1;
  if (op.compare(0, 6, "Reduce") == 0) return k == 1;
  if (op == "Pad") return n.opset >= 11 && (k == 1 || k == 2);
  if (op == "Dropout") return k == 1 || k == 2;
  if (op == "Resize" || op == "Upsample") return k >= 1;
  return false;
}

}  // namespace bponnx
