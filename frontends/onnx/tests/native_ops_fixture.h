// The fixture of the ONNX tests that compare a node's native operator call
// with its decomposition (recurrent_native_test, quantize_native_test): a
// context with the CPU plugin, a scratch directory for the saved graph, and
// one Session run whose observer records, per node, whether it called one of
// the operators under test. Base is ::testing::Test or a TestWithParam<>.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "graph_builder.h"

template <class Base = ::testing::Test>
class NativeOpsTest : public Base {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bponnx_native_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(bp_context_create(nullptr, &ctx_), BP_STATUS_OK);
    ASSERT_EQ(bp_plugin_load(ctx_, BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so", nullptr), BP_STATUS_OK)
        << bp_last_error_message();
  }
  void TearDown() override {
    for (bp_tensor_t* t : held_) bp_tensor_release(t);
    session_.reset();
    bp_context_destroy(ctx_);
    std::system(("rm -rf " + dir_).c_str());
  }
  // A CPU tensor from host bytes, released in TearDown.
  bp_tensor_t* tensor(const std::vector<int64_t>& sizes, DLDataType dt, const void* data, size_t bytes) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, bp_device_t{0, 0}, static_cast<int32_t>(sizes.size()), sizes.data(), dt, data,
                                  bytes, &t),
              BP_STATUS_OK);
    held_.push_back(t);
    return t;
  }
  template <typename T>
  std::vector<T> values(bp_tensor_t* t) {
    std::vector<T> v(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, v.data(), v.size() * sizeof(T)), BP_STATUS_OK);
    return v;
  }
  // Saves g, runs it once on `in` and keeps the outputs (released in
  // TearDown); called_[node name] tells whether that node called one of the
  // operators named in `ops`.
  bool run_graph(const bptest::Graph& g, const std::map<std::string, bp_tensor_t*>& in,
                 const std::vector<std::string>& ops, std::vector<bp_tensor_t*>* outs, std::string* err) {
    EXPECT_TRUE(bponnx::Model::load(g.save(dir_ + "/m.onnx"), &model_, err)) << *err;
    session_ = std::make_unique<bponnx::Session>(ctx_, bp_device_t{0, 0}, &model_);
    std::vector<bp_op_t*> watched;
    for (const std::string& name : ops) {
      bp_op_t* op = nullptr;
      EXPECT_EQ(bp_op_find(ctx_, name.c_str(), &op), BP_STATUS_OK) << name;
      watched.push_back(op);
    }
    called_.clear();
    session_->set_observer([this, watched](const bponnx::NodeRun& r) {
      bool called = false;
      for (bp_op_t* op : r.ops)
        for (bp_op_t* w : watched) called = called || op == w;
      called_[r.node->name] = called_[r.node->name] || called;
    });
    const bool ok = session_->run(in, outs, err);
    for (bp_tensor_t* t : *outs) held_.push_back(t);
    return ok;
  }
  // Whether any node called one of the operators.
  bool any_called() const {
    for (const auto& kv : called_)
      if (kv.second) return true;
    return false;
  }

  std::string dir_;
  bp_context_t* ctx_ = nullptr;
  bponnx::Model model_;
  std::unique_ptr<bponnx::Session> session_;
  std::vector<bp_tensor_t*> held_;
  std::map<std::string, bool> called_;
};
