#include "suites.h"

#include <sstream>

#include "child_process.h"  // self_exe
#include "gen.h"

namespace bpc {

SuiteState& suite_state() {
  static SuiteState s;
  return s;
}

std::string CellParam::id() const { return target.id() + "__" + gtest_safe(op) + "__" + dtype_name(dtype); }

void plan_cells(const std::vector<Target>& targets, const Runner& runner, const RunOptions& opt,
                SuiteState* state) {
  for (const Target& t : targets) {
    for (const OpEntry& op : runner.ops()) {
      if (!glob_match(opt.op_glob, op.name) || op.claim == nullptr) continue;
      for (int k = 0; k < kNumDTypes; ++k) {
        const DType d = dtype_at(k);
        if (opt.has_dtype && d != opt.dtype) continue;
        const CellParam p{t, op.name, d};
        if (op.claim->claims(d)) {
          state->op_cells.push_back(p);
          if (t.backend_name != "cpu") state->fallback_cells.push_back(p);
        } else {
          state->claim_probes.push_back(p);
        }
      }
    }
  }
}

namespace {

// The ID GoogleTest gives the running test: "Ops/OpCellTest.Run/cpu_0__...".
std::string current_test_id() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? "" : std::string(info->test_suite_name()) + "." + info->name();
}

// Runs one cell through the Runner, streaming its cases; the cell's
// failures become GoogleTest failures, a cell with nothing run a skip.
void run_cell_test(const CellParam& p, const char* group, bool quick_tier) {
  SuiteState& s = suite_state();
  Runner& runner = *s.runner;
  const OpEntry* op = runner.find_entry(p.op);
  ASSERT_NE(op, nullptr) << "operator " << p.op << " vanished";
  RunOptions o = s.options;
  o.backend_arg = s.backend_args[p.target.backend_name];
  if (quick_tier && o.sample < 0) o.full = false;
  uint64_t caps = 0;
  DeviceReport report = runner.empty_report(p.target.backend, p.target.device, &caps);
  const std::string id = current_test_id();
  runner.expectations = &s.expectations[p.target.backend_name];
  runner.case_group = group;
  runner.case_test_id = id;
  runner.on_case_start = [&](const CaseResult& pending) {
    if (s.on_start) s.on_start(id, pending.dtype + " sample " + std::to_string(pending.sample), &pending);
  };
  runner.on_case_done = [&](const CaseResult& c) {
    if (s.on_case) s.on_case(c);
  };
  runner.run_cell(*op, p.dtype, p.target.backend, bp_device_t{p.target.backend, p.target.device}, caps, o,
                  &report);
  runner.on_case_start = nullptr;
  runner.on_case_done = nullptr;
  runner.expectations = nullptr;
  bool ran = false;
  std::string skip_reason;
  for (const CaseResult& c : report.cases) {
    switch (c.outcome) {
      case Outcome::kFail:
      case Outcome::kWroteOnError:
        ADD_FAILURE() << c.op << " " << c.dtype << " sample " << c.sample << " (" << c.desc << "): " << c.message
                      << "\n  rerun: " << c.repro;
        ran = true;
        break;
      case Outcome::kUnsupported:
      case Outcome::kUntested: skip_reason = c.message; break;
      default: ran = true; break;
    }
  }
  if (!ran) GTEST_SKIP() << skip_reason;
}

// Masks the backend's native kernels of some operators for the scope.
class KernelMask {
 public:
  KernelMask(bp_context_t* ctx, std::vector<bp_op_t*> ops, int32_t backend) : ctx_(ctx), backend_(backend) {
    for (bp_op_t* op : ops) {
      status_ = bp_op_set_kernel_masked(ctx_, op, backend_, 1);
      if (status_ != BP_STATUS_OK) break;
      masked_.push_back(op);
    }
  }
  ~KernelMask() {
    for (bp_op_t* op : masked_) bp_op_set_kernel_masked(ctx_, op, backend_, 0);
  }
  bp_status_t status() const { return status_; }

 private:
  bp_context_t* ctx_;
  int32_t backend_;
  bp_status_t status_ = BP_STATUS_OK;
  std::vector<bp_op_t*> masked_;
};

class OpCellTest : public ::testing::TestWithParam<CellParam> {};
class FallbackCellTest : public ::testing::TestWithParam<CellParam> {};
class DtypeClaimTest : public ::testing::TestWithParam<CellParam> {};

TEST_P(OpCellTest, Run) { run_cell_test(GetParam(), kGroupOps, false); }

// The same cell with the native kernel masked: it must pass, through a
// fallback (or the core, for views and composites). Quick tier:
// this proves the fallback path on the backend's memory, not the numerics
// of the CPU kernels (the CPU backend's own matrix does that).
TEST_P(FallbackCellTest, Run) {
  const CellParam& p = GetParam();
  const OpEntry* op = suite_state().runner->find_entry(p.op);
  ASSERT_TRUE(op != nullptr && op->op != nullptr) << "operator " << p.op << " not in libbackplane";
  // A composite (or a view that may copy, like reshape) has no kernel of its
  // own: the core runs other operators for it, so every kernel of the
  // backend is masked while it runs.
  std::vector<bp_op_t*> to_mask = {op->op};
  if (op->kind == "composite" || op->kind == "view") {
    for (const OpEntry& e : suite_state().runner->ops()) {
      if (e.op != nullptr && e.op != op->op) to_mask.push_back(e.op);
    }
  }
  KernelMask mask(suite_context(), to_mask, p.target.backend);
  ASSERT_EQ(mask.status(), BP_STATUS_OK) << "bp_op_set_kernel_masked(" << p.op << ", " << p.target.backend_name
                                         << ") failed: " << bp_last_error_message();
  // A native pass while masked is a dispatcher bug: report it as a failure.
  SuiteState& s = suite_state();
  auto forward = s.on_case;
  s.on_case = [&](const CaseResult& c) {
    CaseResult r = c;
    if ((r.outcome == Outcome::kNativePass && r.path == "native") || r.outcome == Outcome::kCastPass) {
      r.outcome = Outcome::kFail;
      r.message = "the native kernel ran while masked";
      ADD_FAILURE() << p.op << " " << r.dtype << " sample " << r.sample << ": " << r.message;
    }
    if (forward) forward(r);
  };
  run_cell_test(p, kGroupFallback, true);
  s.on_case = forward;
}

// One sample of a dtype ops.yaml does not claim. Rejected (an error status):
// the claim holds. Ran natively and right: the backend does more than ops.yaml
// says. Accepted and wrong, on any path: a failure.
TEST_P(DtypeClaimTest, Probe) {
  const CellParam& p = GetParam();
  SuiteState& s = suite_state();
  Runner& runner = *s.runner;
  const OpEntry* op = runner.find_entry(p.op);
  ASSERT_TRUE(op != nullptr && op->claim != nullptr);
  OpClaim claim = *op->claim;
  claim.dtype_mask |= 1u << static_cast<int>(p.dtype);
  std::string why;
  const std::vector<Case> cases = make_cases(claim, p.dtype, s.options.seed, false, &why);
  const Case* probe = nullptr;
  for (const Case& c : cases) {
    if (s.options.sample >= 0 && c.index != s.options.sample) continue;  // a rerun line's --sample
    if (!c.sample.expect_error && c.expected.error.empty()) {
      probe = &c;
      break;
    }
  }
  if (probe == nullptr) GTEST_SKIP() << "no sample for an unclaimed dtype: " << why;
  const std::string id = current_test_id();
  if (s.on_start) s.on_start(id, std::string(dtype_name(p.dtype)) + " probe", nullptr);
  OpEntry entry = *op;
  entry.claim = &claim;
  RunOptions o = s.options;
  o.backend_arg = s.backend_args[p.target.backend_name];
  CaseResult r = runner.run_case(entry, p.dtype, *probe, p.target.backend,
                                 bp_device_t{p.target.backend, p.target.device}, o, p.target.device_label);
  r.group = kGroupClaims;
  r.test_id = id;
  if (!r.repro.empty()) r.repro += " --group claims";
  const bool rejected = r.message.rfind("bp_op_call failed", 0) == 0;
  if (rejected) {
    r.outcome = Outcome::kUnsupported;
  } else if (r.outcome == Outcome::kFail || r.outcome == Outcome::kWroteOnError) {
    // Accepted a dtype nobody claimed and answered wrong (or wrote, then
    // declined), on whatever path: a silent wrong answer for any caller of
    // that dtype, so it fails the run.
    r.message = "accepts an unclaimed dtype and answers wrong (" + r.path + "): " + r.message;
  } else if (r.path != "native") {
    r.outcome = Outcome::kUnsupported;  // ran, but not on the backend's own kernel: no claim to check
    r.message = "not native (" + r.path + ")" + (r.message.empty() ? "" : ": " + r.message);
  } else if (r.outcome == Outcome::kNativePass) {
    r.message = "runs natively and matches the reference";  // ops.yaml under-claims
  } else if (r.outcome == Outcome::kNotReached) {
    r.outcome = Outcome::kUnsupported;
    r.message = "every sample was rejected input";
  }
  if (s.on_case) s.on_case(r);
}

INSTANTIATE_TEST_SUITE_P(Ops, OpCellTest, ::testing::ValuesIn(suite_state().op_cells), CellName());
INSTANTIATE_TEST_SUITE_P(Fallback, FallbackCellTest, ::testing::ValuesIn(suite_state().fallback_cells), CellName());
INSTANTIATE_TEST_SUITE_P(Claims, DtypeClaimTest, ::testing::ValuesIn(suite_state().claim_probes), CellName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OpCellTest);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FallbackCellTest);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DtypeClaimTest);

const Target* target_by_id(const std::string& id) {
  for (const Target& t : suite_targets()) {
    if (t.id() == id) return &t;
  }
  return nullptr;
}

// Streams test boundaries, and makes one CaseResult of each test that is not
// a cell (the ABI and streams groups): pass, skip = unsupported with its
// reason, fail with GoogleTest's messages. A passing streams test keeps its
// "note" properties (what the device showed) as its message.
class CaseListener : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& info) override {
    SuiteState& s = suite_state();
    if (s.on_start) s.on_start(std::string(info.test_suite_name()) + "." + info.name(), "", nullptr);
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    SuiteState& s = suite_state();
    const std::string id = std::string(info.test_suite_name()) + "." + info.name();
    TestKey key;
    if (test_key(info.test_suite_name(), info.name(), &key) && (key.group == kGroupAbi || key.group == kGroupStreams) &&
        s.on_case) {
      CaseResult r;
      r.group = key.group;
      r.test_id = id;
      const Target* t = target_by_id(key.target);
      r.backend = t ? t->backend_name : key.target;
      r.device = t ? t->device_label : key.target;
      const std::string name = info.name();
      r.op = key.group + "." + name.substr(0, name.find('/'));
      r.sample = -1;
      r.seed = s.options.seed;
      const ::testing::TestResult* res = info.result();
      std::ostringstream msg;
      for (int i = 0; i < res->total_part_count(); ++i) {
        const ::testing::TestPartResult& part = res->GetTestPartResult(i);
        if (msg.tellp() > 0) msg << "\n";
        // No "file:line: " prefix: the suite's source paths mean nothing to a vendor.
        // ADD_FAILURE's "Failed" line says nothing the message does not.
        std::string m = part.message();
        if (m.rfind("Failed\n", 0) == 0) m.erase(0, 7);
        msg << m;
      }
      r.message = msg.str();
      r.outcome = res->Failed() ? Outcome::kFail : res->Skipped() ? Outcome::kUnsupported : Outcome::kNativePass;
      if (r.outcome == Outcome::kNativePass) {
        r.message.clear();
        for (int i = 0; i < res->test_property_count(); ++i) {
          const ::testing::TestProperty& p = res->GetTestProperty(i);
          if (std::string(p.key()) == "note") r.message += (r.message.empty() ? "" : "; ") + std::string(p.value());
        }
      }
      r.repro = self_exe() + " --backend " + s.backend_args[r.backend] + " --group " + key.group +
                " --gtest_filter='" + id + "' --no-isolate";
      s.on_case(r);
    }
    if (s.on_test_end) s.on_test_end(id);
  }
};

}  // namespace

void install_case_listener() {
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new CaseListener);
}

bool test_key(const std::string& suite_name, const std::string& test_name, TestKey* key) {
  const std::string param = test_name.substr(test_name.rfind('/') + 1);
  if (suite_name.rfind("Abi/", 0) == 0) {
    *key = TestKey{kGroupAbi, param, "", ""};
    return suite_state().abi_group;
  }
  if (suite_name.rfind("Streams/", 0) == 0) {
    *key = TestKey{kGroupStreams, param, "", ""};
    return suite_state().streams_group;
  }
  // Cell IDs, indexed once (the plan asks for every registered test).
  static const std::map<std::string, TestKey> index = [] {
    std::map<std::string, TestKey> m;
    const SuiteState& s = suite_state();
    auto add = [&](const std::vector<CellParam>& cells, const char* suite, const char* group) {
      for (const CellParam& p : cells) {
        m[std::string(suite) + "|" + p.id()] = TestKey{group, p.target.id(), p.op, dtype_name(p.dtype)};
      }
    };
    add(s.op_cells, "Ops/OpCellTest", kGroupOps);
    add(s.fallback_cells, "Fallback/FallbackCellTest", kGroupFallback);
    add(s.claim_probes, "Claims/DtypeClaimTest", kGroupClaims);
    return m;
  }();
  const auto it = index.find(suite_name + "|" + param);
  if (it == index.end()) return false;
  *key = it->second;
  return true;
}

}  // namespace bpc
