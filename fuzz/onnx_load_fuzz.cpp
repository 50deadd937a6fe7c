// libFuzzer target: the ONNX model loader (frontends/onnx, bponnx::Model::load).
// Property: any bytes load cleanly or give one error line; never a crash,
// a hang or undefined behaviour. The input is written to a private file
// because the loader reads a path (external data is resolved beside it).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bponnx/graph.h"

namespace {
std::string ScratchPath() {
  static const std::string path = [] {
    char dir[] = "/tmp/bp_onnx_fuzz_XXXXXX";
    const char* d = mkdtemp(dir);
    if (d == nullptr) std::abort();
    return std::string(d) + "/model.onnx";
  }();
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ScratchPath();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  bponnx::Model model;
  std::string err;
  if (!bponnx::Model::load(path, &model, &err) && err.empty()) {
    std::fprintf(stderr, "Model::load failed without a message\n");
    std::abort();
  }
  return 0;
}
