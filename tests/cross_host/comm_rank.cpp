// One rank of tests/cross_host/comm_cross_host_test.sh: joins a Gloo
// communicator on the CPU device through a file store and the address it is
// given, then all-reduces (sum) 64 Ki floats again and again, checking every
// result, until it has done --iters calls or a call fails.
//
// Prints "ok I" after each correct call (flushed: the test script reads it
// to know the ranks are mid-loop) and, on a failed call, "failed I STATUS:
// message". Exit codes: 0 all calls correct, 2 bad usage or setup, 3 a call
// failed (the status is on the "failed" line), 4 a wrong result.
// Uses only the public C API, as a host application does.
#include <backplane/backplane.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Args {
  std::string plugin, store_dir, prefix = "bp_comm", host;
  int rank = -1, world = 2, iters = 1;
  long long timeout_ms = 3000;
};

bool Parse(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--plugin") a->plugin = v;
    else if (k == "--store") a->store_dir = v;
    else if (k == "--prefix") a->prefix = v;
    else if (k == "--host") a->host = v;
    else if (k == "--rank") a->rank = std::atoi(v.c_str());
    else if (k == "--world") a->world = std::atoi(v.c_str());
    else if (k == "--iters") a->iters = std::atoi(v.c_str());
    else if (k == "--timeout-ms") a->timeout_ms = std::atoll(v.c_str());
    else return false;
  }
  return !a->plugin.empty() && !a->store_dir.empty() && !a->host.empty() && a->rank >= 0 && a->iters > 0;
}

int Setup(const char* what, bp_status_t s) {
  std::printf("setup failed: %s: %s: %s\n", what, bp_status_name(s), bp_last_error_message());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: comm_rank --plugin SO --store DIR --host ADDR --rank R [--world W] [--prefix P] "
                 "[--iters N] [--timeout-ms T]\n");
    return 2;
  }
  bp_context_t* ctx = nullptr;
  bp_status_t s = bp_context_create(nullptr, &ctx);
  if (s != BP_STATUS_OK) return Setup("bp_context_create", s);
  if ((s = bp_plugin_load(ctx, a.plugin.c_str(), nullptr)) != BP_STATUS_OK) return Setup("bp_plugin_load", s);
  bp_device_t dev{};
  if ((s = bp_device_parse(ctx, "cpu:0", &dev)) != BP_STATUS_OK) return Setup("bp_device_parse", s);
  bp_kv_store_t* store = nullptr;
  if ((s = bp_kv_store_file_create(a.store_dir.c_str(), &store)) != BP_STATUS_OK)
    return Setup("bp_kv_store_file_create", s);
  bp_comm_options_t o{};
  o.struct_size = sizeof o;
  o.rank = a.rank;
  o.world_size = a.world;
  o.store = store;
  o.prefix = a.prefix.c_str();
  o.timeout_ms = a.timeout_ms;
  o.engine = BP_COMM_ENGINE_GLOO;
  o.host = a.host.c_str();
  bp_comm_t* comm = nullptr;
  if ((s = bp_comm_create(ctx, dev, &o, &comm)) != BP_STATUS_OK) return Setup("bp_comm_create", s);

  constexpr int64_t n = 1 << 16;
  const DLDataType f32{kDLFloat, 32, 1};
  std::vector<float> in(n), want(n), got(n);
  for (int64_t i = 0; i < n; ++i) {
    in[i] = static_cast<float>(a.rank + 1) * static_cast<float>(i % 97);
    want[i] = static_cast<float>(a.world * (a.world + 1) / 2) * static_cast<float>(i % 97);  // exact in f32
  }
  int rc = 0;
  for (int it = 0; it < a.iters && rc == 0; ++it) {
    bp_tensor_t* t = nullptr;
    if ((s = bp_tensor_from_host(ctx, dev, 1, &n, f32, in.data(), n * sizeof(float), &t)) != BP_STATUS_OK)
      return Setup("bp_tensor_from_host", s);
    s = bp_comm_all_reduce(comm, t, t, BP_REDUCE_SUM, nullptr);
    if (s != BP_STATUS_OK) {
      std::printf("failed %d %s: %s\n", it, bp_status_name(s), bp_last_error_message());
      rc = 3;
    } else if (bp_tensor_to_host(t, got.data(), n * sizeof(float)) != BP_STATUS_OK || got != want) {
      std::printf("wrong %d\n", it);
      rc = 4;
    } else {
      std::printf("ok %d\n", it);
    }
    std::fflush(stdout);
    bp_tensor_release(t);
  }
  bp_comm_destroy(comm);
  bp_kv_store_file_destroy(store);
  bp_context_destroy(ctx);
  return rc;
}
