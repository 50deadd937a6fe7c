// The ONNX graph executor on small graphs built here with libonnx's
// protobuf classes: results, intermediates freed at last use, external
// data, every bad input named in one error, bp-run's exit codes, and the
// shadow check naming a node whose device kernel is deliberately wrong.
#include "bponnx/graph.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph_builder.h"
#include "run_report.h"

namespace {

using bponnx::Model;
using bponnx::Session;
using bptest::Graph;

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bponnx_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(bp_context_create(nullptr, &ctx_), BP_STATUS_OK);
    ASSERT_EQ(bp_plugin_load(ctx_, BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so", nullptr), BP_STATUS_OK)
        << bp_last_error_message();
  }
  void TearDown() override {
    for (bp_tensor_t* t : held_) bp_tensor_release(t);
    bp_context_destroy(ctx_);
    std::system(("rm -rf " + dir_).c_str());
  }
  bp_tensor_t* host(std::vector<int64_t> sizes, const std::vector<float>& v) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, bp_device_t{0, 0}, static_cast<int32_t>(sizes.size()), sizes.data(),
                                  DLDataType{kDLFloat, 32, 1}, v.data(), v.size() * 4, &t),
              BP_STATUS_OK);
    held_.push_back(t);
    return t;
  }
  std::vector<float> values(bp_tensor_t* t) {
    std::vector<float> v(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, v.data(), v.size() * 4), BP_STATUS_OK);
    return v;
  }
  std::string load_error(const Graph& g) {
    Model m;
    std::string err;
    EXPECT_FALSE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err));
    return err;
  }
  std::string dir_;
  bp_context_t* ctx_ = nullptr;
  std::vector<bp_tensor_t*> held_;
};

TEST_F(GraphTest, RunsNodesInTopologicalOrderWithInitializers) {
  Graph g;
  g.input("x", {2, 2});
  g.output("z", {2, 2});
  g.init("w", {2, 2}, {1, -2, 3, -4});
  g.node("Relu", {"y"}, {"z"}, "second");  // listed before its producer
  g.node("Add", {"x", "w"}, {"y"}, "first");
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  ASSERT_EQ(m.nodes().size(), 2u);
  EXPECT_EQ(m.nodes()[0].name, "first");
  Session s(ctx_, bp_device_t{0, 0}, &m);
  std::vector<bp_tensor_t*> outs;
  ASSERT_TRUE(s.run({{"x", host({2, 2}, {1, 1, 1, 1})}}, &outs, &err)) << err;
  ASSERT_EQ(outs.size(), 1u);
  held_.push_back(outs[0]);
  EXPECT_EQ(values(outs[0]), (std::vector<float>{2, 0, 4, 0}));
}

TEST_F(GraphTest, FreesIntermediatesAtLastUse) {
  // x -> 40 x (Neg) -> y over 1M floats: only the input, the value being
  // read and the one being written are ever alive.
  const int64_t n = 1 << 20;
  Graph g;
  g.input("x", {n});
  g.output("v40", {n});
  std::string prev = "x";
  for (int k = 1; k <= 40; ++k) {
    g.node("Neg", {prev}, {"v" + std::to_string(k)});
    prev = "v" + std::to_string(k);
  }
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, bp_device_t{0, 0}, &m);
  std::vector<float> xv(static_cast<size_t>(n), 1.5f);
  bp_tensor_t* x = host({n}, xv);
  bp_allocator_stats_t before{};
  before.struct_size = sizeof before;
  ASSERT_EQ(bp_allocator_stats(ctx_, bp_device_t{0, 0}, &before), BP_STATUS_OK);
  std::vector<bp_tensor_t*> outs;
  ASSERT_TRUE(s.run({{"x", x}}, &outs, &err)) << err;
  held_.push_back(outs[0]);
  EXPECT_EQ(values(outs[0])[7], 1.5f);  // an even number of negations
  EXPECT_LE(s.peak_live_values(), 3u);
  bp_allocator_stats_t after{};
  after.struct_size = sizeof after;
  ASSERT_EQ(bp_allocator_stats(ctx_, bp_device_t{0, 0}, &after), BP_STATUS_OK);
  // Peak bytes: the input plus at most two 4 MiB activations, not 40.
  EXPECT_LE(after.peak_allocated_bytes, before.allocated_bytes + 3 * static_cast<uint64_t>(n) * 4 + (1 << 20));
}

TEST_F(GraphTest, ReadsExternalData) {
  Graph g;
  g.input("x", {3});
  g.output("y", {3});
  g.external_init("w", {3}, {{"location", "weights.bin"}, {"offset", "4"}});
  const float w[4] = {99, 10, 20, 30};
  std::ofstream(dir_ + "/weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(w), sizeof w);
  g.node("Mul", {"x", "w"}, {"y"});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, bp_device_t{0, 0}, &m);
  std::vector<bp_tensor_t*> outs;
  ASSERT_TRUE(s.run({{"x", host({3}, {1, 2, 3})}}, &outs, &err)) << err;
  held_.push_back(outs[0]);
  EXPECT_EQ(values(outs[0]), (std::vector<float>{10, 40, 90}));
}

TEST_F(GraphTest, BadModelsFailWithOneClearError) {
  {  // not ONNX
    std::ofstream(dir_ + "/text.onnx") << "hello, not a model\n";
    Model m;
    std::string err;
    EXPECT_FALSE(Model::load(dir_ + "/text.onnx", &m, &err));
    EXPECT_NE(err.find("text.onnx"), std::string::npos) << err;
    EXPECT_NE(err.find("not an ONNX model"), std::string::npos) << err;
  }
  {  // truncated
    Graph g;
    g.input("x", {2});
    g.output("y", {2});
    g.init("w", {2}, {1, 2});
    g.node("Add", {"x", "w"}, {"y"});
    std::string bytes;
    g.m.SerializeToString(&bytes);
    std::ofstream(dir_ + "/cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    Model m;
    std::string err;
    EXPECT_FALSE(Model::load(dir_ + "/cut.onnx", &m, &err));
    EXPECT_NE(err.find("cut.onnx"), std::string::npos) << err;
  }
  {  // a cycle
    Graph g;
    g.input("x", {2});
    g.output("b", {2});
    g.node("Add", {"x", "b"}, {"a"}, "na");
    g.node("Relu", {"a"}, {"b"}, "nb");
    const std::string err = load_error(g);
    EXPECT_NE(err.find("cycle"), std::string::npos) << err;
  }
  {  // initializer data shorter than its dims
    Graph g;
    g.input("x", {4});
    g.output("y", {4});
    g.init("w", {4}, {1, 2});
    g.node("Add", {"x", "w"}, {"y"});
    const std::string err = load_error(g);
    EXPECT_NE(err.find("initializer w"), std::string::npos) << err;
  }
  {  // an opset newer than supported
    Graph g(99);
    g.input("x", {2});
    g.output("y", {2});
    g.node("Relu", {"x"}, {"y"});
    const std::string err = load_error(g);
    EXPECT_NE(err.find("opset 99"), std::string::npos) << err;
  }
  {  // an input nobody produces
    Graph g;
    g.input("x", {2});
    g.output("y", {2});
    g.node("Add", {"x", "ghost"}, {"y"}, "adder");
    const std::string err = load_error(g);
    EXPECT_NE(err.find("ghost"), std::string::npos) << err;
    EXPECT_NE(err.find("adder"), std::string::npos) << err;
  }
}

TEST_F(GraphTest, UnmappedNodeNamesOpTypeNodeAndOpset) {
  Graph g(13);
  g.input("x", {2});
  g.output("y", {2});
  g.node("NoSuchOp", {"x"}, {"y"}, "mystery");
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, bp_device_t{0, 0}, &m);
  EXPECT_FALSE(s.prepare(&err));
  EXPECT_NE(err.find("NoSuchOp"), std::string::npos) << err;
  EXPECT_NE(err.find("mystery"), std::string::npos) << err;
  EXPECT_NE(err.find("opset 13"), std::string::npos) << err;
}

TEST_F(GraphTest, GatherWithIndicesOnTheDeviceRunsIndexSelect) {
  // 80 int64 indices (more than the executor copies to the host), some
  // negative (counted from the end, as ONNX allows), into a [10, 3] table.
  Graph g(13);
  g.input("ids", {2, 40}, 7);
  g.output("y", {2, 40, 3});
  std::vector<float> table;
  for (int i = 0; i < 30; ++i) table.push_back(static_cast<float>(i));
  g.init("table", {10, 3}, table);
  g.node("Gather", {"table", "ids"}, {"y"});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  std::vector<int64_t> ids(80), sizes = {2, 40};
  for (int64_t k = 0; k < 80; ++k) ids[static_cast<size_t>(k)] = (k * 7) % 20 - 10;  // -10 .. 9
  bp_tensor_t* t = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, bp_device_t{0, 0}, 2, sizes.data(), DLDataType{kDLInt, 64, 1}, ids.data(),
                                ids.size() * 8, &t),
            BP_STATUS_OK);
  held_.push_back(t);
  Session s(ctx_, bp_device_t{0, 0}, &m);
  std::vector<bp_tensor_t*> outs;
  ASSERT_TRUE(s.run({{"ids", t}}, &outs, &err)) << err;
  ASSERT_EQ(outs.size(), 1u);
  held_.push_back(outs[0]);
  const std::vector<float> y = values(outs[0]);
  ASSERT_EQ(y.size(), 240u);
  for (size_t k = 0; k < 80; ++k) {
    const int64_t row = ids[k] < 0 ? ids[k] + 10 : ids[k];
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(y[k * 3 + static_cast<size_t>(c)], static_cast<float>(row * 3 + c)) << k;
  }
}

TEST_F(GraphTest, InputsAreChecked) {
  Graph g;
  g.input("x", {2, 3});
  g.output("y", {2, 3});
  g.node("Relu", {"x"}, {"y"});
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  Session s(ctx_, bp_device_t{0, 0}, &m);
  std::vector<bp_tensor_t*> outs;
  EXPECT_FALSE(s.run({}, &outs, &err));
  EXPECT_NE(err.find("input x is missing"), std::string::npos) << err;
  EXPECT_FALSE(s.run({{"x", host({3, 2}, std::vector<float>(6, 1.f))}}, &outs, &err));
  EXPECT_NE(err.find("input x has shape [3, 2]"), std::string::npos) << err;
  int64_t sizes[2] = {2, 3};
  const int64_t iv[6] = {0};
  bp_tensor_t* ints = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, bp_device_t{0, 0}, 2, sizes, DLDataType{kDLInt, 64, 1}, iv, sizeof iv, &ints),
            BP_STATUS_OK);
  held_.push_back(ints);
  EXPECT_FALSE(s.run({{"x", ints}}, &outs, &err));
  EXPECT_NE(err.find("dtype int64"), std::string::npos) << err;
}

int run_tool(const std::string& args) {
  const int st = std::system((std::string(BP_RUN_PATH) + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST_F(GraphTest, BpRunExitCodes) {
  Graph g;
  g.input("x", {2, 3});
  g.output("y", {2, 3});
  g.node("Relu", {"x"}, {"y"});
  const std::string ok = g.save(dir_ + "/ok.onnx");
  std::ofstream(dir_ + "/bad.onnx") << "not a model";
  EXPECT_EQ(run_tool(ok + " --device cpu --seed 1"), 0);
  EXPECT_EQ(run_tool(dir_ + "/bad.onnx --device cpu"), 2);
  EXPECT_EQ(run_tool(dir_ + "/missing.onnx --device cpu"), 2);
  EXPECT_EQ(run_tool(ok + " --device nosuchdevice"), 2);
  EXPECT_EQ(run_tool(ok + " --device cpu --input x=" + dir_ + "/nothere.npy"), 2);
  EXPECT_EQ(run_tool(ok + " --device cpu --input nosuchinput=x.npy"), 2);
}

std::string read_text(const std::string& path) {
  std::ifstream t(path);
  return std::string((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
}

TEST_F(GraphTest, BpRunTraceAndReport) {
  Graph g;
  g.input("x", {2, 3});
  g.output("y", {2, 3});
  g.node("Relu", {"x"}, {"r"}, "relu_node");
  g.node("Neg", {"r"}, {"y"}, "neg_node");
  const std::string model = g.save(dir_ + "/m.onnx");
  // --trace: valid trace-event JSON, one complete ("X") event per node.
  ASSERT_EQ(run_tool(model + " --device cpu --seed 1 --trace " + dir_ + "/t.json"), 0);
  const nlohmann::json j = nlohmann::json::parse(read_text(dir_ + "/t.json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["traceEvents"].size(), 2u);
  EXPECT_EQ(j["traceEvents"][0]["name"], "Relu");
  EXPECT_EQ(j["traceEvents"][0]["ph"], "X");
  EXPECT_EQ(j["traceEvents"][1]["args"]["node"], "neg_node");
  EXPECT_EQ(j["traceEvents"][1]["args"]["input_shapes"], "[2, 3]");
  // --report on vendor_sim (relu native there, neg through the CPU fallback)
  // lists Neg as the fallback op.
  const int rc = std::system((std::string(BP_RUN_PATH) + " " + model + " --device vendor_sim --seed 1 --report >" +
                              dir_ + "/report.txt 2>&1").c_str());
  const std::string report = read_text(dir_ + "/report.txt");
  if (report.find("--device vendor_sim") != std::string::npos) GTEST_SKIP() << "no vendor_sim device: " << report;
  ASSERT_EQ(WEXITSTATUS(rc), 0) << report;
  EXPECT_NE(report.find("native        1 nodes"), std::string::npos) << report;
  EXPECT_NE(report.find("fallback      1 nodes"), std::string::npos) << report;
  const size_t todo = report.find("fallback time by ONNX op");
  ASSERT_NE(todo, std::string::npos) << report;
  EXPECT_NE(report.find("Neg", todo), std::string::npos) << report;
  EXPECT_EQ(report.find("Relu", todo), std::string::npos) << report;
  // The Backplane operator beside the ONNX op and node: what the vendor implements.
  EXPECT_NE(report.find("Neg -> neg", todo), std::string::npos) << report;
  EXPECT_NE(report.find("neg_node -> neg", todo), std::string::npos) << report;
  // Times in ms with three decimals, the summary line too.
  EXPECT_NE(report.find(" nodes in "), std::string::npos) << report;
  EXPECT_EQ(report.find(" s\n"), std::string::npos) << report;
  const size_t in = report.find(" nodes in ");
  const size_t ms = report.find(" ms", in);
  ASSERT_NE(ms, std::string::npos) << report;
  const std::string t = report.substr(in + 10, ms - in - 10);
  EXPECT_EQ(t.size() - t.find('.'), 4u) << "not three decimals: " << t;
  // --report with --shadow: the shadow's own copies and time are apart; the
  // model's transfers are those of the run without --shadow.
  const auto transfers = [](const std::string& r) {
    const size_t a = r.find("  transfers: ");
    return a == std::string::npos ? std::string() : r.substr(a, r.find('\n', a) - a);
  };
  ASSERT_EQ(std::system((std::string(BP_RUN_PATH) + " " + model + " --device vendor_sim --seed 1 --report --shadow >" +
                         dir_ + "/shadow.txt 2>&1")
                            .c_str()),
            0);
  const std::string both = read_text(dir_ + "/shadow.txt");
  EXPECT_NE(both.find("--shadow's own cost (not counted above): "), std::string::npos) << both;
  EXPECT_NE(both.find("of it the --shadow check on the cpu"), std::string::npos) << both;
  EXPECT_EQ(transfers(both), transfers(report)) << both << "\n---\n" << report;
}

// --report and --trace show the cast route: vendor_sim's exp takes float32
// only, so Exp on an int32 input runs it after the core cast the input
// through the host (24 bytes down, 24 up).
TEST_F(GraphTest, BpRunReportsTheCastRoute) {
  Graph g;
  g.input("x", {2, 3}, 6);  // int32
  g.output("y", {2, 3});
  g.node("Exp", {"x"}, {"y"}, "exp_node");
  const std::string model = g.save(dir_ + "/cast.onnx");
  const int rc =
      std::system((std::string(BP_RUN_PATH) + " " + model + " --device vendor_sim --seed 1 --report --trace " + dir_ +
                   "/cast.json >" + dir_ + "/cast.txt 2>&1")
                      .c_str());
  const std::string report = read_text(dir_ + "/cast.txt");
  if (report.find("--device vendor_sim") != std::string::npos) GTEST_SKIP() << "no vendor_sim device: " << report;
  ASSERT_EQ(WEXITSTATUS(rc), 0) << report;
  EXPECT_NE(report.find("cast          1 nodes"), std::string::npos) << report;
  EXPECT_NE(report.find("native        0 nodes"), std::string::npos) << report;
  EXPECT_NE(report.find("cast route: 1 calls"), std::string::npos) << report;
  EXPECT_NE(report.find("(48 B of the transfers above"), std::string::npos) << report;
  const nlohmann::json j = nlohmann::json::parse(read_text(dir_ + "/cast.json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["traceEvents"].size(), 1u);
  EXPECT_EQ(j["traceEvents"][0]["cat"], "cast");
  EXPECT_EQ(j["traceEvents"][0]["args"]["cast_calls"], 1);
  EXPECT_EQ(j["traceEvents"][0]["args"]["cast_bytes"], 48);
}

// A "neg" kernel for vendor_sim that computes nothing: the device's result
// is wrong, and the shadow check must name the Neg node.
bp_status_t wrong_neg(const bp_kernel_call_t*) { return BP_STATUS_OK; }

TEST_F(GraphTest, ShadowNamesTheNodeWhoseKernelIsWrong) {
  if (bp_plugin_load(ctx_, BP_BUILD_PLUGIN_DIR "/libbackplane_vendor_sim.so", nullptr) != BP_STATUS_OK) {
    GTEST_SKIP() << "vendor_sim plugin not built: " << bp_last_error_message();
  }
  int32_t sim = -1;
  ASSERT_EQ(bp_backend_find(ctx_, "vendor_sim", &sim), BP_STATUS_OK);
  Graph g;
  g.input("x", {64});
  g.output("z", {64});
  g.node("Relu", {"x"}, {"r"}, "relu_node");
  g.node("Neg", {"r"}, {"n"}, "neg_node");
  g.node("Add", {"n", "x"}, {"z"}, "add_node");
  Model m;
  std::string err;
  ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &m, &err)) << err;
  std::vector<float> xv(64);
  for (size_t k = 0; k < xv.size(); ++k) xv[k] = 1.0f + static_cast<float>(k);
  bp_tensor_t* x = host({64}, xv);
  const bp_device_t dev{sim, 0};
  {
    Session s(ctx_, dev, &m);
    bprun::Recorder rec(ctx_, dev, false, true, 1e-3, 1e-4);
    s.set_observer([&](const bponnx::NodeRun& nr) { rec.on_node(nr); });
    std::vector<bp_tensor_t*> outs;
    ASSERT_TRUE(s.run({{"x", x}}, &outs, &err)) << err;
    for (bp_tensor_t* t : outs) bp_tensor_release(t);
    EXPECT_FALSE(rec.first_divergence().found) << rec.first_divergence().node;
    EXPECT_EQ(rec.shadow_checked(), 3u);
  }
  bp_op_t* neg = nullptr;
  ASSERT_EQ(bp_op_find(ctx_, "neg", &neg), BP_STATUS_OK);
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, neg, sim, wrong_neg, nullptr, BP_REGISTER_OVERRIDE, &reg), BP_STATUS_OK);
  // Other input values: the caching allocator may hand the wrong kernel the
  // block that held the first run's (right) result.
  for (float& v : xv) v *= 3.0f;
  Session s(ctx_, dev, &m);
  bprun::Recorder rec(ctx_, dev, false, true, 1e-3, 1e-4);
  s.set_observer([&](const bponnx::NodeRun& nr) { rec.on_node(nr); });
  std::vector<bp_tensor_t*> outs;
  ASSERT_TRUE(s.run({{"x", host({64}, xv)}}, &outs, &err)) << err;
  for (bp_tensor_t* t : outs) bp_tensor_release(t);
  ASSERT_TRUE(rec.first_divergence().found);
  EXPECT_EQ(rec.first_divergence().node, "neg_node");
  EXPECT_EQ(rec.first_divergence().op, "Neg");
  EXPECT_GT(rec.first_divergence().max_abs, 1.0);
  bp_registration_remove(ctx_, reg);
}

}  // namespace

namespace {

// A short fuzz run of the loader and executor: truncations and byte flips of
// a small model (fixed seed). Every outcome is a model that loads and runs,
// or one error line; never a crash.
TEST_F(GraphTest, LoaderFuzzNeverCrashes) {
  Graph g;
  g.input("x", {2, 4});
  g.output("y", {2, 3});
  g.init("w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  g.init("shape", {2}, {2, 3});
  g.node("MatMul", {"x", "w"}, {"m"}, "mm");
  g.node("Relu", {"m"}, {"r"}, "relu");
  g.node("Softmax", {"r"}, {"y"}, "softmax")->add_attribute()->set_name("axis");
  std::string bytes;
  ASSERT_TRUE(g.m.SerializeToString(&bytes));
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>(state >> 33);
  };
  int loaded = 0, refused = 0;
  bp_tensor_t* x = host({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  for (int iter = 0; iter < 400; ++iter) {
    std::string b = bytes;
    if (iter % 2 == 0) {
      b.resize(next() % b.size());
    } else {
      for (int k = 0; k < 4; ++k) b[next() % b.size()] = static_cast<char>(next() & 0xff);
    }
    const std::string path = dir_ + "/fuzz.onnx";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << b;
    Model m;
    std::string err;
    if (!Model::load(path, &m, &err)) {
      EXPECT_FALSE(err.empty());
      EXPECT_EQ(err.find('\n'), std::string::npos) << err;
      ++refused;
      continue;
    }
    ++loaded;
    Session s(ctx_, bp_device_t{0, 0}, &m);
    std::vector<bp_tensor_t*> outs;
    if (s.run({{"x", x}}, &outs, &err)) {
      for (bp_tensor_t* t : outs) bp_tensor_release(t);
    } else {
      EXPECT_FALSE(err.empty());
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(loaded, 0);
}

}  // namespace
