// A host application running ONNX models on a Backplane device through the
// installed frontend library (find_package(Backplane COMPONENTS onnx)).
//
//   onnx_host_app WORK_DIR [NODE_TEST_DIR]
//
// 1. Writes a small model with ONNX's own protobuf classes (Y = Relu(X W + B),
//    X of [2, 3]), loads it with bponnx::Model, runs it on the cpu device and
//    checks Y against the same formula computed here in double.
// 2. Given an ONNX backend node test directory (model.onnx and
//    test_data_set_0/{input,output}_<k>.pb, as in Debian's libonnx-testdata),
//    runs it and compares every output with the stored one.
// Exit code 0 when every check passes, 1 otherwise (the reason printed).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "backplane/backplane.h"
#include "bponnx/graph.h"
#include "bponnx/observe.h"
#include "bponnx/proto.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "onnx_host_app: FAIL: %s\n", what.c_str());
  return 1;
}

void add_float_initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                           const std::vector<float>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

void add_value_info(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  onnx::TypeProto_Tensor* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// Runs `model` on `dev` with `inputs` (host tensors); false with *err.
bool run(bp_context_t* ctx, bp_device_t dev, const bponnx::Model& model,
         const std::map<std::string, bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs, std::string* err) {
  bponnx::Session session(ctx, dev, &model);
  return session.prepare(err) && session.run(inputs, outputs, err);
}

int built_model(bp_context_t* ctx, bp_device_t dev, const std::string& work) {
  const std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f, 1.0f, -1.0f};    // [2, 3]
  const std::vector<float> w = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};  // [3, 2]
  const std::vector<float> b = {0.1f, -0.2f};                             // [2]
  onnx::ModelProto m;
  m.set_ir_version(onnx::IR_VERSION);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("relu_linear");
  add_float_initializer(g, "W", {3, 2}, w);
  add_float_initializer(g, "B", {2}, b);
  add_value_info(g->add_input(), "X", {2, 3});
  add_value_info(g->add_output(), "Y", {2, 2});
  const char* nodes[][4] = {{"MatMul", "X", "W", "XW"}, {"Add", "XW", "B", "Z"}, {"Relu", "Z", "", "Y"}};
  for (const auto& n : nodes) {
    onnx::NodeProto* p = g->add_node();
    p->set_op_type(n[0]);
    p->add_input(n[1]);
    if (n[2][0] != '\0') p->add_input(n[2]);
    p->add_output(n[3]);
  }
  const std::string path = work + "/relu_linear.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    if (!m.SerializeToOstream(&out)) return fail("cannot write " + path);
  }
  std::string err;
  bponnx::Model model;
  if (!bponnx::Model::load(path, &model, &err)) return fail(err);
  const int64_t xs[2] = {2, 3};
  bp_tensor_t* xt = nullptr;
  if (bp_tensor_from_host(ctx, bp_device_t{0, 0}, 2, xs, DLDataType{kDLFloat, 32, 1}, x.data(),
                          x.size() * sizeof(float), &xt) != BP_STATUS_OK) {
    return fail(std::string("bp_tensor_from_host: ") + bp_last_error_message());
  }
  std::vector<bp_tensor_t*> outs;
  const bool ok = run(ctx, dev, model, {{"X", xt}}, &outs, &err);
  bp_tensor_release(xt);
  if (!ok) return fail(err);
  float y[4] = {};
  const bp_status_t st = bp_tensor_to_host(outs.at(0), y, sizeof y);
  for (bp_tensor_t* t : outs) bp_tensor_release(t);
  if (st != BP_STATUS_OK) return fail(std::string("bp_tensor_to_host: ") + bp_last_error_message());
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      double want = b[static_cast<size_t>(j)];
      for (int k = 0; k < 3; ++k) want += double(x[static_cast<size_t>(i * 3 + k)]) * w[static_cast<size_t>(k * 2 + j)];
      want = want > 0.0 ? want : 0.0;
      if (std::fabs(y[i * 2 + j] - want) > 1e-5 + 1e-5 * std::fabs(want)) {
        return fail("relu_linear: Y[" + std::to_string(i) + "][" + std::to_string(j) + "] = " +
                    std::to_string(y[i * 2 + j]) + ", expected " + std::to_string(want));
      }
    }
  }
  std::printf("onnx_host_app: relu_linear (MatMul, Add, Relu) on the cpu matches: Y = [[%g, %g], [%g, %g]]\n", y[0],
              y[1], y[2], y[3]);
  return 0;
}

bool read_pb(const std::string& path, bponnx::RawTensor* out, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto p;
  if (!in || !p.ParseFromIstream(&in)) {
    *err = path + ": not a TensorProto";
    return false;
  }
  return bponnx::raw_tensor_from_proto(p, ".", out, err);
}

int node_test(bp_context_t* ctx, bp_device_t dev, const std::string& dir) {
  std::string err;
  bponnx::Model model;
  if (!bponnx::Model::load(dir + "/model.onnx", &model, &err)) return fail(err);
  std::map<std::string, bp_tensor_t*> inputs;
  int rc = 0;
  for (size_t k = 0; k < model.inputs().size() && rc == 0; ++k) {
    bponnx::RawTensor r;
    if (!read_pb(dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb", &r, &err)) {
      rc = fail(err);
      break;
    }
    bp_tensor_t* t = nullptr;
    if (bp_tensor_from_host(ctx, bp_device_t{0, 0}, static_cast<int32_t>(r.sizes.size()), r.sizes.data(),
                            bponnx::dtype_to_dl(r.dtype), r.bytes.data(), r.bytes.size(), &t) != BP_STATUS_OK) {
      rc = fail(std::string("bp_tensor_from_host: ") + bp_last_error_message());
      break;
    }
    inputs[model.inputs()[k].name] = t;
  }
  std::vector<bp_tensor_t*> outs;
  if (rc == 0 && !run(ctx, dev, model, inputs, &outs, &err)) rc = fail(err);
  for (size_t k = 0; rc == 0 && k < outs.size(); ++k) {
    bponnx::RawTensor want;
    if (!read_pb(dir + "/test_data_set_0/output_" + std::to_string(k) + ".pb", &want, &err)) {
      rc = fail(err);
      break;
    }
    const bponnx::OutputMatch m = bponnx::compare_output(ctx, outs[k], want, 1e-4, 1e-5);
    std::printf("onnx_host_app: %s output %zu: %s (%s)\n", dir.c_str(), k, m.match ? "match" : "MISMATCH",
                m.message(1e-4, 1e-5).c_str());
    if (!m.match) rc = 1;
  }
  for (auto& kv : inputs) bp_tensor_release(kv.second);
  for (bp_tensor_t* t : outs) bp_tensor_release(t);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: onnx_host_app WORK_DIR [NODE_TEST_DIR]\n");
    return 2;
  }
  bp_context_t* ctx = nullptr;
  if (bp_context_create(nullptr, &ctx) != BP_STATUS_OK) return fail(std::string("bp_context_create: ") + bp_last_error_message());
  int32_t loaded = 0;
  bp_device_t dev{};
  int rc = 0;
  if (bp_plugin_discover(ctx, &loaded) != BP_STATUS_OK || bp_device_parse(ctx, "cpu", &dev) != BP_STATUS_OK) {
    rc = fail(std::string("no cpu device (is the cpu plugin installed?): ") + bp_last_error_message());
  }
  if (rc == 0) rc = built_model(ctx, dev, argv[1]);
  if (rc == 0 && argc > 2) rc = node_test(ctx, dev, argv[2]);
  bp_context_destroy(ctx);
  if (rc == 0) std::printf("onnx_host_app: every check passed\n");
  return rc;
}
