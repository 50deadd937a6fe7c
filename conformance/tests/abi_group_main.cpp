// A stand-alone runner of the ABI and runtime group (src/groups/abi_runtime_*):
// discovers plugins as bp-conformance does, makes every (backend, device) a
// target and runs the group's GoogleTest suite in this process. Used to
// develop and test the group; bp-conformance links the same sources.
//
//   conformance_abi_group_test [--gtest_filter='*/opencl_0']
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backplane/backplane.h"
#include "target.h"

int main(int argc, char** argv) {
  bp_context_t* ctx = nullptr;
  if (bp_context_create(nullptr, &ctx) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_context_create: %s\n", bp_last_error_message());
    return 2;
  }
  int32_t loaded = 0;
  if (bp_plugin_discover(ctx, &loaded) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_plugin_discover: %s\n", bp_last_error_message());
    return 2;
  }
  std::vector<bpc::Target> targets;
  int32_t count = 0;
  bp_backend_count(ctx, &count);
  for (int32_t b = 0; b < count; ++b) {
    bp_backend_info_t info{};
    info.struct_size = sizeof(info);
    if (bp_backend_info(ctx, b, &info) != BP_STATUS_OK || !info.loaded) continue;
    for (int32_t d = 0; d < info.device_count; ++d) {
      bpc::Target t;
      t.backend = b;
      t.device = d;
      t.backend_name = info.name;
      t.device_label = std::string(info.name) + ":" + std::to_string(d);
      t.plugin_path = info.plugin_path != nullptr ? info.plugin_path : "";
      targets.push_back(t);
      std::printf("target %s (%s)\n", t.device_label.c_str(), t.plugin_path.c_str());
    }
  }
  bpc::set_suite_context(ctx);
  bpc::set_suite_targets(targets);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  bp_context_destroy(ctx);
  return rc;
}
