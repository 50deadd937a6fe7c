#include "runner.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "child_process.h"  // self_exe
#include "device_tensor.h"
#include "gen.h"

namespace bpc {

bool glob_match(const std::string& pattern, const std::string& text) {
  size_t start = 0;
  while (start <= pattern.size()) {
    const size_t comma = std::min(pattern.find(',', start), pattern.size());
    if (fnmatch(pattern.substr(start, comma - start).c_str(), text.c_str(), 0) == 0) return true;
    start = comma + 1;
  }
  return false;
}

std::string backend_name(bp_context_t* ctx, int32_t backend) {
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  if (bp_backend_info(ctx, backend, &info) != BP_STATUS_OK || info.name == nullptr) {
    return "backend" + std::to_string(backend);
  }
  return info.name;
}

Runner::Runner(bp_context_t* ctx) : ctx_(ctx) {
  int32_t n = 0;
  if (bp_op_count(ctx, &n) != BP_STATUS_OK) n = 0;
  for (int32_t i = 0; i < n; ++i) {
    OpEntry e;
    if (bp_op_at(ctx, i, &e.op) != BP_STATUS_OK) continue;
    bp_op_info_t info{};
    info.struct_size = sizeof info;
    if (bp_op_info(e.op, &info) != BP_STATUS_OK || info.name == nullptr) continue;
    e.name = info.name;
    e.kind = info.kind ? info.kind : "";
    e.claim = find_claim(e.name);
    op_cache_[e.name] = e.op;
    ops_.push_back(e);
  }
  // Operators ops.yaml declares but the library lacks still get a row (they fail).
  for (const OpClaim& c : op_claims()) {
    if (op_cache_.count(c.name) == 0) {
      OpEntry e;
      e.name = c.name;
      e.kind = c.kind;
      e.claim = &c;
      ops_.push_back(e);
    }
  }
}

const OpEntry* Runner::find_entry(const std::string& name) const {
  for (const OpEntry& e : ops_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

bp_op_t* Runner::find_op(const std::string& name) {
  auto it = op_cache_.find(name);
  if (it != op_cache_.end()) return it->second;
  bp_op_t* op = nullptr;
  if (bp_op_find(ctx_, name.c_str(), &op) != BP_STATUS_OK) op = nullptr;
  op_cache_[name] = op;
  return op;
}

namespace {

struct Counters {
  uint64_t native = 0, fallback = 0, cast = 0;
};

// Kernel counters of every operator on the backend: a case is native only
// if no fallback counter moved while it ran (composites run other operators).
Counters snapshot(bp_context_t* ctx, const std::vector<OpEntry>& ops, int32_t backend) {
  Counters c;
  for (const OpEntry& e : ops) {
    if (e.op == nullptr) continue;
    uint64_t n = 0, f = 0, k = 0;
    if (bp_native_count(ctx, e.op, backend, &n) == BP_STATUS_OK) c.native += n;
    if (bp_fallback_count(ctx, e.op, backend, &f) == BP_STATUS_OK) c.fallback += f;
    if (bp_cast_count(ctx, e.op, backend, &k, nullptr) == BP_STATUS_OK) c.cast += k;
  }
  return c;
}

std::string device_label(bp_context_t* ctx, int32_t backend, int32_t index) {
  return backend_name(ctx, backend) + ":" + std::to_string(index);
}

std::string fmt_double(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

bool base_name_in(const std::string& op, const std::string& message) {
  std::string base = op.substr(0, op.find('.'));
  while (!base.empty() && base.back() == '_') base.pop_back();
  const size_t ns = base.find("::");
  if (ns != std::string::npos) base = base.substr(ns + 2);
  return message.find(base) != std::string::npos;
}

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  }
  return true;
}

// Which dtypes a device can run at all (float64 needs BP_DEVICE_CAP_FP64 ...).
const char* capability_gap(DType d, uint64_t caps) {
  if (d == DType::kFloat64 && !(caps & BP_DEVICE_CAP_FP64)) return "device lacks BP_DEVICE_CAP_FP64";
  if (d == DType::kFloat16 && !(caps & BP_DEVICE_CAP_FP16)) return "device lacks BP_DEVICE_CAP_FP16";
  if (d == DType::kBFloat16 && !(caps & BP_DEVICE_CAP_BF16)) return "device lacks BP_DEVICE_CAP_BF16";
  return nullptr;
}

}  // namespace

namespace {

// One line: every argument of a sample, for reports ("float32[2,3] transposed, 2").
std::string inputs_str(const Sample& s) {
  auto tensor = [](const TensorInput& t) {
    std::string out = std::string(dtype_name(t.t.dtype)) + sizes_str(t.t.sizes);
    if (t.layout != Layout::kContiguous) out += std::string(" ") + layout_name(t.layout);
    if (t.cpu_scalar) out += " (cpu scalar)";
    if (t.alias_of >= 0) out += " (a view of argument " + std::to_string(t.alias_of) + ")";
    return out;
  };
  std::ostringstream os;
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Arg& a = s.args[i];
    if (i > 0) os << ", ";
    switch (a.kind) {
      case Arg::kNone: os << "None"; break;
      case Arg::kTensor: os << tensor(a.tensor); break;
      case Arg::kOut: os << "out=" << tensor(a.tensor); break;
      case Arg::kTensorList:
        os << "[";
        for (size_t k = 0; k < a.list.size(); ++k) os << (k ? ", " : "") << tensor(a.list[k]);
        os << "]";
        break;
      case Arg::kInt: os << a.i; break;
      case Arg::kDouble: os << fmt_double(a.d); break;
      case Arg::kBool: os << (a.b ? "True" : "False"); break;
      case Arg::kIntList: os << sizes_str(a.ints); break;
      case Arg::kString: os << '"' << a.s << '"'; break;
      case Arg::kDType: os << dtype_name(a.dtype); break;
    }
  }
  return os.str();
}

}  // namespace

CaseResult Runner::describe_case(const OpEntry& op, DType d, const Case& c, int32_t backend, const RunOptions& opt,
                                 const std::string& label) {
  CaseResult r;
  r.backend = backend_name(ctx_, backend);
  r.device = label;
  r.op = op.name;
  r.dtype = dtype_name(d);
  r.sample = c.index;
  r.desc = c.sample.desc;
  r.seed = opt.seed;
  r.group = case_group;
  r.test_id = case_test_id;
  {
    std::ostringstream os;
    os << self_exe() << " --backend " << (opt.backend_arg.empty() ? r.backend : opt.backend_arg) << " --op " << op.name
       << " --dtype " << r.dtype << " --sample " << c.index << " --seed " << opt.seed;
    r.repro = os.str();
  }
  for (const Arg& a : c.sample.args) {
    if (a.kind == Arg::kTensor || a.kind == Arg::kOut) r.input_shapes.push_back(a.tensor.t.sizes);
    for (const TensorInput& t : a.list) r.input_shapes.push_back(t.t.sizes);
  }
  r.inputs = inputs_str(c.sample);
  return r;
}

bool Runner::make_args(const Sample& sample, bp_device_t dev, TensorPool* pool, CallArgs* out, std::string* err) {
  const OpLookup lookup = [this](const std::string& n) { return find_op(n); };
  out->values.assign(sample.args.size(), bp_value_t{});
  out->lists.assign(sample.args.size(), {});
  out->tensors.assign(sample.args.size(), nullptr);
  for (size_t i = 0; i < sample.args.size(); ++i) {
    const Arg& a = sample.args[i];
    bp_value_t& v = out->values[i];
    switch (a.kind) {
      case Arg::kNone: v.kind = BP_VALUE_NONE; break;
      case Arg::kTensor:
      case Arg::kOut:
        v.kind = BP_VALUE_TENSOR;
        if (a.tensor.alias_of >= 0 && static_cast<size_t>(a.tensor.alias_of) < i) {
          if (!make_alias_tensor(ctx_, lookup, a.tensor, out->tensors[static_cast<size_t>(a.tensor.alias_of)], pool,
                                 &v.u.tensor, err)) {
            return false;
          }
        } else if (!make_device_tensor(ctx_, lookup, a.tensor, dev, pool, &v.u.tensor, err)) {
          return false;
        }
        out->tensors[i] = v.u.tensor;
        break;
      case Arg::kTensorList:
        for (const TensorInput& t : a.list) {
          bp_tensor_t* dt = nullptr;
          if (!make_device_tensor(ctx_, lookup, t, dev, pool, &dt, err)) return false;
          out->lists[i].push_back(dt);
        }
        v.kind = BP_VALUE_TENSOR_LIST;
        v.u.tensor_list.data = out->lists[i].data();
        v.u.tensor_list.size = static_cast<int64_t>(out->lists[i].size());
        break;
      case Arg::kInt: v.kind = BP_VALUE_INT; v.u.i = a.i; break;
      case Arg::kDouble: v.kind = BP_VALUE_DOUBLE; v.u.d = a.d; break;
      case Arg::kBool: v.kind = BP_VALUE_BOOL; v.u.b = a.b ? 1 : 0; break;
      case Arg::kIntList:
        v.kind = BP_VALUE_INT_LIST;
        v.u.int_list.data = a.ints.data();
        v.u.int_list.size = static_cast<int64_t>(a.ints.size());
        break;
      case Arg::kString: v.kind = BP_VALUE_STRING; v.u.str = a.s.c_str(); break;
      case Arg::kDType: v.kind = BP_VALUE_DTYPE; v.u.dtype = dtype_to_dl(a.dtype); break;
    }
  }
  return true;
}

CaseResult Runner::run_case(const OpEntry& op, DType d, const Case& c, int32_t backend,
                            bp_device_t dev, const RunOptions& opt, const std::string& label) {
  CaseResult r = describe_case(op, d, c, backend, opt, label);
  if (!c.expected.error.empty()) {
    r.outcome = Outcome::kFail;
    r.message = "bp-conformance reference failed (suite bug): " + c.expected.error;
    return r;
  }
  if (op.op == nullptr) {
    r.outcome = Outcome::kFail;
    r.message = "operator not found in libbackplane";
    return r;
  }
  TensorPool pool;
  CallArgs call;
  std::string err;
  if (!make_args(c.sample, dev, &pool, &call, &err)) {
    r.outcome = Outcome::kFail;
    r.message = err;
    return r;
  }
  std::vector<bp_value_t>& values = call.values;
  std::vector<bp_tensor_t*>& arg_tensors = call.tensors;

  const Counters before = snapshot(ctx_, ops_, backend);
  // One result per output the reference gives (topk: values and indices).
  std::vector<bp_tensor_t*> results(std::max<size_t>(1, c.expected.outputs.size()), nullptr);
  const bp_status_t st = bp_op_call(ctx_, op.op, values.data(), static_cast<int32_t>(values.size()), results.data(),
                                    static_cast<int32_t>(results.size()));
  const std::string call_message = st == BP_STATUS_OK ? "" : bp_last_error_message();
  const Counters after = snapshot(ctx_, ops_, backend);
  for (bp_tensor_t* t : results) pool.hold(t);
  bp_tensor_t* const result = results[0];

  if (after.fallback > before.fallback) {
    r.path = "cpu_fallback";
  } else if (after.cast > before.cast) {
    r.path = "cast";
  } else if (after.native > before.native) {
    r.path = "native";
  } else {
    int32_t kind = BP_DISPATCH_NONE;
    bp_op_dispatch_kind(ctx_, op.op, backend, &kind);
    r.path = kind == BP_DISPATCH_CORE ? "core"
             : kind == BP_DISPATCH_BACKEND_FALLBACK ? "backend_fallback"
             : kind == BP_DISPATCH_CPU_FALLBACK ? "cpu_fallback"
                                                : "none";
  }
  const bool fallback = r.path == "cpu_fallback" || r.path == "backend_fallback";
  const Outcome pass = fallback           ? Outcome::kFallbackPass
                       : r.path == "core" ? Outcome::kCorePass
                       : r.path == "cast" ? Outcome::kCastPass
                                          : Outcome::kNativePass;

  if (c.sample.expect_error) {
    if (st == BP_STATUS_OK) {
      r.outcome = Outcome::kFail;
      r.message = "bad input was accepted (expected an error status)";
      return r;
    }
    if (!base_name_in(op.name, call_message)) {
      r.outcome = Outcome::kFail;
      r.message = std::string("error message does not name the operator: ") + bp_status_name(st) +
                  ": \"" + call_message + "\"";
      return r;
    }
    if (c.sample.written_arg >= 0) {
      const Arg& w = c.sample.args[static_cast<size_t>(c.sample.written_arg)];
      DType wd;
      std::vector<int64_t> ws;
      std::vector<double> wv;
      if (!read_tensor(arg_tensors[static_cast<size_t>(c.sample.written_arg)], &wd, &ws, &wv, &err)) {
        r.outcome = Outcome::kFail;
        r.message = err;
        return r;
      }
      if (!same_values(wv, w.tensor.t.values)) {
        r.outcome = Outcome::kFail;
        r.message = "the call failed but wrote its output (partial write on error)";
        return r;
      }
    }
    // Rejected, as it must be; but no kernel computed anything, so this case
    // says nothing about the backend's kernels (a cell of such cases alone
    // is 'r', not 'N').
    const bool kernel_ran =
        after.native > before.native || after.fallback > before.fallback || after.cast > before.cast;
    r.outcome = kernel_ran ? pass : Outcome::kNotReached;
    r.message = std::string("rejected as expected: ") + bp_status_name(st) +
                (kernel_ran ? "" : " (bad input: no kernel ran to completion)");
    return r;
  }
  if (st != BP_STATUS_OK) {
    r.outcome = Outcome::kFail;
    r.message = std::string("bp_op_call failed: ") + bp_status_name(st) + ": " + call_message;
    return r;
  }
  if (result == nullptr) {
    r.outcome = Outcome::kFail;
    r.message = "bp_op_call returned no result tensor";
    return r;
  }
  for (size_t k = 0; k < results.size(); ++k) {
    if (results[k] == nullptr) {
      r.outcome = Outcome::kFail;
      r.message = "bp_op_call returned no result tensor " + std::to_string(k);
      return r;
    }
    // "output 1: ..." in messages when the operator has several results.
    const std::string which = results.size() > 1 ? "output " + std::to_string(k) + ": " : "";
    const HostTensor& expected = c.expected.outputs.at(k);
    bp_tensor_t* read_from =
        k == 0 && c.sample.written_arg >= 0 ? arg_tensors[static_cast<size_t>(c.sample.written_arg)] : results[k];
    DType ad;
    std::vector<double> actual;
    std::vector<int64_t> shape;
    if (!read_tensor(read_from, &ad, &shape, &actual, &err)) {
      r.outcome = Outcome::kFail;
      r.message = err;
      return r;
    }
    if (ad != expected.dtype) {
      r.outcome = Outcome::kFail;
      r.message = which + "result dtype " + dtype_name(ad) + ", expected " + dtype_name(expected.dtype);
      return r;
    }
    if (k == 0) r.output_shape = shape;
    if (shape != expected.sizes) {
      r.outcome = Outcome::kFail;
      r.message = which + "result sizes " + sizes_str(shape) + ", expected " + sizes_str(expected.sizes);
      return r;
    }
    if (c.sample.written_arg >= 0 && bp_tensor_ndim(result) != static_cast<int32_t>(expected.sizes.size())) {
      r.outcome = Outcome::kFail;
      r.message = "the returned tensor is not the written argument (rank differs)";
      return r;
    }
    const std::vector<double> no_mag;
    const CompareResult cmp = compare_values(expected, c.expected.mag.size() <= k ? no_mag : c.expected.mag[k],
                                             actual, c.tol);
    if (k == 0 || !cmp.ok) {  // the report's numbers: output 0's, or the failing output's
      r.has_numbers = true;
      r.worst_index = cmp.worst_index;
      r.expected = cmp.expected;
      r.actual = cmp.actual;
      r.max_abs = cmp.max_abs;
      r.max_rel = cmp.max_rel;
      r.max_ulp = cmp.max_ulp;
    }
    if (!cmp.ok) {
      r.outcome = Outcome::kFail;
      r.message = which + mismatch_message(cmp, expected, c.tol);
      return r;
    }
  }
  r.outcome = pass;
  return r;
}

void Runner::run_cell(const OpEntry& op, DType d, int32_t backend, bp_device_t dev, uint64_t caps,
                      const RunOptions& opt, DeviceReport* report) {
  CellResult& cell = report->cells[op.name][static_cast<size_t>(d)];
  if (op.claim == nullptr || !op.claim->claims(d)) return;
  auto skip = [&](Outcome o, const std::string& why) {
    CaseResult r;
    r.backend = report->backend;
    r.device = report->device;
    r.op = op.name;
    r.dtype = dtype_name(d);
    r.sample = -1;
    r.seed = opt.seed;
    r.outcome = o;
    r.message = why;
    r.group = case_group;
    r.test_id = case_test_id;
    if (on_case_done) on_case_done(r);
    fold_case(&cell, r);
    report->cases.push_back(r);
  };
  if (expectations != nullptr && !opt.verify_expectations) {
    if (const Expectation* e = expectations->find_unsupported(op.name, d)) {
      skip(Outcome::kUnsupported, unsupported_reason(*expectations, *e));
      return;
    }
  }
  if (const char* gap = capability_gap(d, caps)) {
    skip(Outcome::kUnsupported, gap);
    return;
  }
  std::string why;
  const std::vector<Case> cases = make_cases(*op.claim, d, opt.seed, opt.full || opt.sample >= 0, &why);
  if (cases.empty()) {
    skip(Outcome::kUntested, why);
    return;
  }
  // A case the backend's own kernel did not complete is checked for a write
  // before the failure (check_write_on_error).
  int32_t kind = BP_DISPATCH_NONE;
  const bool native_kernel = op.op != nullptr && bp_op_dispatch_kind(ctx_, op.op, backend, &kind) == BP_STATUS_OK &&
                             kind == BP_DISPATCH_NATIVE;
  for (const Case& c : cases) {
    if (opt.sample >= 0 && c.index != opt.sample) continue;
    if (on_case_start) on_case_start(describe_case(op, d, c, backend, opt, report->device));
    CaseResult r = run_case(op, d, c, backend, dev, opt, report->device);
    if (r.outcome != Outcome::kNativePass && r.path != "native" && r.path != "cast" && native_kernel) {
      check_write_on_error(op, c, backend, dev, &r);
    }
    r.group = case_group;
    r.test_id = case_test_id;
    // Exactly this case: its group alone (the other groups would run too).
    if (!r.repro.empty()) r.repro += std::string(" --group ") + (case_group == kGroupClaims ? "claims" : case_group);
    if (on_case_done) on_case_done(r);
    fold_case(&cell, r);
    report->cases.push_back(std::move(r));
  }
}

DeviceReport Runner::empty_report(int32_t backend, int32_t device_index, uint64_t* caps) {
  DeviceReport report;
  report.backend = backend_name(ctx_, backend);
  report.device = device_label(ctx_, backend, device_index);
  bp_device_properties_t props{};
  props.struct_size = sizeof props;
  *caps = 0;
  if (bp_device_properties(ctx_, bp_device_t{backend, device_index}, &props) == BP_STATUS_OK) {
    report.device_name = props.name;
    *caps = props.capabilities;
  }
  return report;
}

DeviceReport Runner::run_device(int32_t backend, int32_t device_index, const RunOptions& opt) {
  uint64_t caps = 0;
  DeviceReport report = empty_report(backend, device_index, &caps);
  const bp_device_t dev{backend, device_index};
  for (const OpEntry& op : ops_) {
    if (!glob_match(opt.op_glob, op.name)) continue;
    report.ops.push_back(op.name);
    report.cells[op.name];
    for (int k = 0; k < kNumDTypes; ++k) {
      const DType d = dtype_at(k);
      if (opt.has_dtype && d != opt.dtype) continue;
      run_cell(op, d, backend, dev, caps, opt, &report);
    }
  }
  return report;
}

DeviceReport Runner::no_device_report(int32_t backend, const RunOptions& opt) {
  DeviceReport report;
  report.backend = backend_name(ctx_, backend);
  report.device = report.backend;
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  std::string reason = "no device";
  if (bp_backend_info(ctx_, backend, &info) == BP_STATUS_OK && info.no_device_reason) {
    reason += std::string(": ") + info.no_device_reason;
  }
  for (const OpEntry& op : ops_) {
    if (!glob_match(opt.op_glob, op.name)) continue;
    report.ops.push_back(op.name);
    auto& cells = report.cells[op.name];
    if (op.claim == nullptr) continue;
    for (int k = 0; k < kNumDTypes; ++k) {
      const DType d = dtype_at(k);
      if ((opt.has_dtype && d != opt.dtype) || !op.claim->claims(d)) continue;
      CaseResult r;
      r.backend = report.backend;
      r.device = report.device;
      r.op = op.name;
      r.dtype = dtype_name(d);
      r.sample = -1;
      r.seed = opt.seed;
      r.outcome = Outcome::kUnsupported;
      r.message = reason;
      fold_case(&cells[static_cast<size_t>(k)], r);
      report.cases.push_back(r);
    }
  }
  return report;
}

}  // namespace bpc
