// A session plans once: shape subgraphs fold on the host, later runs with
// the same input sizes replay the first one's calls, and a steady-state run
// copies nothing from the device to the host (the transfer counters say
// so), on every device here that is not the CPU. New input sizes plan
// again; a run whose calls depend on device values keeps running the
// mappings (its results follow the values).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "bponnx/npy.h"
#include "bponnx/observe.h"
#include "expected_backends.h"  // tests/
#include "graph_builder.h"

namespace {

using bponnx::Model;
using bponnx::Session;
using bptest::Graph;

onnx::TensorProto* int64_init(Graph* g, const std::string& name, std::vector<int64_t> dims,
                              const std::vector<int64_t>& v) {
  auto* t = g->g()->add_initializer();
  t->set_name(name);
  t->set_data_type(7);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
  return t;
}

void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

class PlanTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bponnx_plan_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(bp_context_create(nullptr, &ctx_), BP_STATUS_OK);
    int32_t loaded = 0;
    // vendor_sim_unified: vendor_sim with host-addressable memory
    // (BP_DEVICE_CAP_UNIFIED), which the plugin reads when it loads.
    const bool unified = GetParam() == "vendor_sim_unified";
    if (unified) setenv("BP_VENDOR_SIM_UNIFIED", "1", 1);
    bp_plugin_discover(ctx_, &loaded);
    if (unified) unsetenv("BP_VENDOR_SIM_UNIFIED");
    const std::string backend = unified ? "vendor_sim" : GetParam();
    if (bp_device_parse(ctx_, backend.c_str(), &dev_) != BP_STATUS_OK) {
      BP_SKIP_UNLESS_EXPECTED(backend, "no device " + GetParam() + " here (its plugin is not built or finds no device)");
    }
  }
  void TearDown() override {
    for (bp_tensor_t* t : held_) bp_tensor_release(t);
    if (ctx_ != nullptr) bp_context_destroy(ctx_);
    std::system(("rm -rf " + dir_).c_str());
  }
  bp_tensor_t* host(std::vector<int64_t> sizes, DLDataType dl, const void* data, size_t bytes) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, bp_device_t{0, 0}, static_cast<int32_t>(sizes.size()), sizes.data(), dl, data,
                                  bytes, &t),
              BP_STATUS_OK);
    held_.push_back(t);
    return t;
  }
  bp_tensor_t* floats(std::vector<int64_t> sizes) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k) - 3.0f;
    return host(sizes, DLDataType{kDLFloat, 32, 1}, v.data(), v.size() * 4);
  }
  std::vector<float> values(bp_tensor_t* t) {
    std::vector<float> v(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, v.data(), v.size() * 4), BP_STATUS_OK);
    return v;
  }
  // Device-to-host copies made by one run.
  uint64_t run_reads(Session* s, const std::map<std::string, bp_tensor_t*>& in, std::vector<bp_tensor_t*>* outs) {
    bp_transfer_stats_t st{};
    st.struct_size = sizeof st;
    EXPECT_EQ(bp_transfer_stats_reset(ctx_, dev_.backend), BP_STATUS_OK);
    std::string err;
    EXPECT_TRUE(s->run(in, outs, &err)) << err;
    EXPECT_EQ(bp_transfer_stats(ctx_, dev_.backend, &st), BP_STATUS_OK);
    held_.insert(held_.end(), outs->begin(), outs->end());
    return st.device_to_host_count;
  }
  // Calls of any operator (composites' inner calls too) that went through a
  // fallback on the device's backend so far.
  uint64_t fallback_calls() {
    int32_t n = 0;
    EXPECT_EQ(bp_op_count(ctx_, &n), BP_STATUS_OK);
    uint64_t total = 0;
    for (int32_t k = 0; k < n; ++k) {
      bp_op_t* op = nullptr;
      uint64_t c = 0;
      if (bp_op_at(ctx_, k, &op) == BP_STATUS_OK && bp_fallback_count(ctx_, op, dev_.backend, &c) == BP_STATUS_OK)
        total += c;
    }
    return total;
  }
  std::string dir_;
  bp_context_t* ctx_ = nullptr;
  bp_device_t dev_{0, 0};
  std::vector<bp_tensor_t*> held_;
};

std::vector<int64_t> sizes(bp_tensor_t* t) {
  return std::vector<int64_t>(bp_tensor_sizes(t), bp_tensor_sizes(t) + bp_tensor_ndim(t));
}

TEST_P(PlanTest, ShapeSubgraphFoldsAndReplaysWithoutReadBack) {
  // z = relu(reshape(x, concat(unsqueeze(shape(x)[0]), [3, 2]))): the
  // exporters' flatten/view pattern, the batch dim symbolic.
  Graph g(14);
  g.input("x", {-1, 6});
  g.output("z", {-1, 3, 2});
  int64_init(&g, "zero", {}, {0});
  int64_init(&g, "axes", {1}, {0});
  int64_init(&g, "tail", {2}, {3, 2});
  g.node("Shape", {"x"}, {"s"});
  attr_int(g.node("Gather", {"s", "zero"}, {"b"}), "axis", 0);
  g.node("Unsqueeze", {"b", "axes"}, {"b1"});
  attr_int(g.node("Concat", {"b1", "tail"}, {"shape"}), "axis", 0);
  g.node("Reshape", {"x", "shape"}, {"y"});
  g.node("Relu", {"y"}, {"z"});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, dev_, &m);
  for (int64_t batch : {2, 4}) {
    bp_tensor_t* x = floats({batch, 6});
    std::vector<bp_tensor_t*> first, second;
    run_reads(&s, {{"x", x}}, &first);  // plans this signature
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(run_reads(&s, {{"x", x}}, &second), 0u) << "a steady-state run read values back from " << GetParam();
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(sizes(second[0]), (std::vector<int64_t>{batch, 3, 2}));
    const std::vector<float> z = values(second[0]);
    for (size_t k = 0; k < z.size(); ++k) EXPECT_EQ(z[k], std::max(0.0f, static_cast<float>(k) - 3.0f)) << k;
    EXPECT_EQ(values(first[0]), z);
  }
}

// A replayed call runs through its own call plan; a route change in the
// context (here the strict-fallback setting, set to what it was) makes every
// plan stale, and the next replay prepares them again instead of failing.
TEST_P(PlanTest, ReplayPreparesStalePlansAgain) {
  Graph g(14);
  g.input("x", {2, 3});
  g.output("z", {2, 3});
  g.node("Relu", {"x"}, {"y"});
  g.node("Add", {"y", "x"}, {"z"});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, dev_, &m);
  bp_tensor_t* x = floats({2, 3});
  std::vector<bp_tensor_t*> first, second, third;
  run_reads(&s, {{"x", x}}, &first);
  run_reads(&s, {{"x", x}}, &second);
  EXPECT_TRUE(s.last_run_replayed());
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 0), BP_STATUS_OK);
  run_reads(&s, {{"x", x}}, &third);
  EXPECT_TRUE(s.last_run_replayed());
  ASSERT_EQ(third.size(), 1u);
  const std::vector<float> v = values(third[0]), x_host = values(x);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(v[i], std::max(x_host[i], 0.0f) + x_host[i]);
}

TEST_P(PlanTest, ValueDependentShapesFollowTheValues) {
  // Reshape's shape is a graph input (computed on the device as far as the
  // session knows): every run reads it, and the result follows its values.
  Graph g(14);
  g.input("x", {6});
  g.input("shape", {2}, 7);
  g.output("y", {-1, -1});
  g.node("Reshape", {"x", "shape"}, {"y"});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, dev_, &m);
  bp_tensor_t* x = floats({6});
  for (const std::vector<int64_t>& want : {std::vector<int64_t>{2, 3}, {3, 2}, {1, 6}, {2, 3}}) {
    bp_tensor_t* shape = host({2}, DLDataType{kDLInt, 64, 1}, want.data(), 16);
    std::vector<bp_tensor_t*> outs;
    run_reads(&s, {{"x", x}, {"shape", shape}}, &outs);
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_EQ(sizes(outs[0]), want);
  }
}

// Host folding computes what the device would: int64 values known on the
// host (initializers) through each folded op, the results read back as outputs.
TEST_P(PlanTest, FoldedShapeArithmeticMatchesOnnx) {
  Graph g(14);
  g.input("x", {1});
  int64_init(&g, "m", {2, 3}, {0, 1, 2, 3, 4, 5});
  int64_init(&g, "idx", {2}, {2, -3});
  int64_init(&g, "col", {2, 1}, {7, 8});
  int64_init(&g, "v", {5}, {10, 11, 12, 13, 14});
  int64_init(&g, "start", {1}, {-1});
  int64_init(&g, "end", {1}, {-100});
  int64_init(&g, "axes", {1}, {0});
  int64_init(&g, "step", {1}, {-2});
  int64_init(&g, "num", {3}, {-7, 7, 9});
  int64_init(&g, "den", {}, {2});
  int64_init(&g, "four", {}, {4});
  int64_init(&g, "back", {1}, {-1});
  attr_int(g.node("Gather", {"m", "idx"}, {"gathered"}), "axis", 1);   // [[2,0],[5,3]]
  attr_int(g.node("Concat", {"col", "m"}, {"joined"}), "axis", 1);     // [[7,0,1,2],[8,3,4,5]]
  g.node("Slice", {"v", "start", "end", "axes", "step"}, {"sliced"});  // [14,12,10]
  g.node("Div", {"num", "den"}, {"quot"});                             // [-3,3,4]
  g.node("Less", {"num", "den"}, {"less"});                            // [1,0,0]
  g.node("Where", {"less", "num", "den"}, {"picked"});                 // [-7,2,2]
  g.node("Shape", {"m"}, {"shape"});                                   // [2,3]
  g.node("Mod", {"num", "four"}, {"mod"});                             // [1,3,1]: the divisor's sign
  attr_int(g.node("Mod", {"num", "four"}, {"fmod"}), "fmod", 1);       // [-3,3,1]: the dividend's
  g.node("Transpose", {"m"}, {"transposed"});                          // [[0,3],[1,4],[2,5]]
  g.node("Slice", {"m", "start", "end", "axes", "back"}, {"rows"});    // [[3,4,5],[0,1,2]]
  const std::vector<std::pair<std::string, std::vector<double>>> want = {
      {"gathered", {2, 0, 5, 3}}, {"joined", {7, 0, 1, 2, 8, 3, 4, 5}},
      {"sliced", {14, 12, 10}},   {"quot", {-3, 3, 4}},
      {"less", {1, 0, 0}},        {"picked", {-7, 2, 2}},
      {"shape", {2, 3}},          {"mod", {1, 3, 1}},
      {"fmod", {-3, 3, 1}},       {"transposed", {0, 3, 1, 4, 2, 5}},
      {"rows", {3, 4, 5, 0, 1, 2}}};
  for (const auto& w : want) g.output(w.first, {});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, dev_, &m);
  s.set_observer([](const bponnx::NodeRun& nr) {
    EXPECT_TRUE(nr.ops.empty()) << nr.node->op_type << " ran on the device, not folded on the host";
  });
  std::vector<bp_tensor_t*> outs;
  run_reads(&s, {{"x", floats({1})}}, &outs);
  ASSERT_EQ(outs.size(), want.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    bponnx::OpCache ops(ctx_);
    bponnx::Exec cpu(ctx_, bp_device_t{0, 0}, &ops);
    EXPECT_EQ(cpu.to_host(outs[k]).values, want[k].second) << want[k].first;
  }
}

TEST_P(PlanTest, FailingConstantNodeFailsEveryRun) {
  // r reads only initializers (computed once, by the first run), and its
  // Reshape cannot work: every run reports it, none finds a half-made r.
  Graph g(14);
  g.input("x", {7});
  g.output("y", {7});
  g.init("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  int64_init(&g, "bad", {1}, {7});
  g.node("Reshape", {"w", "bad"}, {"r"}, "bad_reshape");
  g.node("Add", {"x", "r"}, {"y"});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, dev_, &m);
  bp_tensor_t* x = floats({7});
  for (int run = 0; run < 2; ++run) {
    std::vector<bp_tensor_t*> outs;
    err.clear();
    EXPECT_FALSE(s.run({{"x", x}}, &outs, &err));
    EXPECT_NE(err.find("bad_reshape"), std::string::npos) << err;
    EXPECT_TRUE(outs.empty());
  }
}

// Every model the models group runs (exported in the build tree): after a
// warm-up run, a run replays the record and gives the warm-up's outputs,
// and the only device-to-host copies are those operators make themselves:
// in an observed run, a node copies only when one of its operator calls
// went through a fallback (which stages its inputs through the host), and
// a plain run copies exactly as much. vendor_sim also has no strided copy
// (the core stages views through the host inside reshape, clone, ...):
// there a node's staged copies must each go back to the device (at least as
// many host-to-device copies as device-to-host ones), and the nodes folded on the
// host are held to zero copies. On
// vendor_sim with host-addressable memory the fallbacks wrap the device's
// memory instead of copying it: a steady-state run copies nothing at all.
TEST_P(PlanTest, ModelsRunWithoutReadBack) {
  if (GetParam() == "cpu") GTEST_SKIP() << "the CPU's memory is the host's: nothing to read back";
  const bool staged_views = GetParam() == "vendor_sim";
  const bool unified = GetParam() == "vendor_sim_unified";
  const std::string dir = BP_MODELS_DIR;
  int ran = 0;
  for (const char* name :
       {"resnet18", "mobilenet_v3_small", "squeezenet1_1", "vit_small", "transformer_encoder", "gpt_small", "lstm_gru",
        "qdq_cnn", "swin_small"}) {
    SCOPED_TRACE(name);
    const std::string d = dir + "/" + name;
    Model m;
    std::string err;
    if (!std::ifstream(d + "/model.onnx")) continue;
    ASSERT_TRUE(Model::load(d + "/model.onnx", &m, &err)) << err;
    std::map<std::string, bp_tensor_t*> in;
    for (size_t k = 0; k < m.inputs().size(); ++k) {
      bponnx::RawTensor raw;
      ASSERT_TRUE(bponnx::npy_read(d + "/input_" + std::to_string(k) + ".npy", &raw, &err)) << err;
      in[m.inputs()[k].name] = host(raw.sizes, bponnx::dtype_to_dl(raw.dtype), raw.bytes.data(), raw.bytes.size());
    }
    Session s(ctx_, dev_, &m);
    std::vector<bp_tensor_t*> warm, observed, steady;
    run_reads(&s, in, &warm);
    EXPECT_FALSE(s.last_run_replayed());
    uint64_t seen = 0, returned_seen = 0, in_fallbacks = 0, in_staged = 0, fallbacks_seen = fallback_calls();
    const bool plant_read = std::getenv("BPTEST_PLANT_READ_BACK") != nullptr;
    s.set_observer([&](const bponnx::NodeRun& nr) {
      bp_transfer_stats_t st{};
      st.struct_size = sizeof st;
      ASSERT_EQ(bp_transfer_stats(ctx_, dev_.backend, &st), BP_STATUS_OK);
      const uint64_t copies = st.device_to_host_count - seen;
      const uint64_t returned = st.host_to_device_count - returned_seen;
      seen = st.device_to_host_count;
      returned_seen = st.host_to_device_count;
      const uint64_t fallbacks = fallback_calls();
      const bool fell_back = fallbacks != fallbacks_seen;
      fallbacks_seen = fallbacks;
      if (fell_back) {
        in_fallbacks += copies;
      } else if (!staged_views || nr.ops.empty()) {
        EXPECT_EQ(copies, 0u) << name << ": node " << bponnx::node_display_name(*nr.node) << " (" << nr.node->op_type
                              << ") read " << copies << " values back on " << GetParam();
      } else {
        // A view staged through the host goes back to the device: a copy in
        // for each copy out (a node may also upload, e.g. a permutation). A
        // value read for a decision on the host would have no copy back.
        EXPECT_LE(copies, returned) << name << ": node " << bponnx::node_display_name(*nr.node) << " ("
                                    << nr.node->op_type << ") copied " << copies << " values to the host and only "
                                    << returned << " back on " << GetParam();
        in_staged += copies;
      }
      // The negative control (ctest onnx_plan_models_read_back_control_fails):
      // a read of this node's first output, as a host decision would make;
      // the next node's check must see it.
      if (plant_read && !nr.outputs.empty() && nr.outputs[0] != nullptr) {
        std::vector<char> bytes(static_cast<size_t>(bp_tensor_numel(nr.outputs[0])) *
                                static_cast<size_t>(bp_tensor_dtype(nr.outputs[0]).bits / 8));
        EXPECT_EQ(bp_tensor_to_host(nr.outputs[0], bytes.data(), bytes.size()), BP_STATUS_OK);
      }
    });
    run_reads(&s, in, &observed);
    EXPECT_TRUE(s.last_run_replayed());
    s.set_observer(nullptr);
    const uint64_t reads = run_reads(&s, in, &steady);
    EXPECT_TRUE(s.last_run_replayed()) << name << " is recorded as depending on device values";
    if (unified) {
      EXPECT_EQ(reads, 0u) << name << ": a steady-state run copied values to the host on " << GetParam();
    } else {  // exactly the copies the observed run explained: fallbacks' inputs and staged views
      EXPECT_EQ(reads, in_fallbacks + in_staged) << name << " on " << GetParam();
    }
    ASSERT_EQ(steady.size(), warm.size());
    for (size_t k = 0; k < steady.size(); ++k) {
      ASSERT_EQ(sizes(steady[k]), sizes(warm[k]));
      if (bp_tensor_dtype(steady[k]).code != kDLFloat || bp_tensor_dtype(steady[k]).bits != 32) continue;
      const std::vector<float> a = values(warm[k]), b = values(steady[k]);
      for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5 + 1e-4 * std::fabs(a[i])) << "output " << k;
    }
    ++ran;
  }
  if (ran == 0) {
    std::ifstream why(dir + "/NOT_EXPORTED.txt");
    std::stringstream ss;
    ss << why.rdbuf();
    GTEST_SKIP() << "no model exported in " << dir << " (ctest -R onnx_models_export makes them)"
                 << (ss.str().empty() ? "" : ": " + ss.str());
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PlanTest, ::testing::Values("cpu", "vendor_sim", "vendor_sim_unified", "opencl"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
