// All-reduce bus bandwidth on loopback, ranks as processes of this program:
//   cpu:        bp_comm_all_reduce on the cpu backend (Gloo underneath) beside
//               Gloo's allreduce called directly on the same buffers (goal:
//               Backplane >= 0.9x Gloo's bandwidth);
//   vendor_sim: its native shared-memory collectives beside the host's Gloo
//               engine staged through host memory, both through bp_comm.
// Bus bandwidth = bytes x 2(W-1)/W / time (NCCL's convention); the row's
// last column compares it with this machine's memcpy bandwidth, the ceiling
// of any loopback transport.
//   bp_bench_comm [--ranks 2,4] [--rounds 7] [--max-mb 64]
// BACKPLANE_PLUGIN_PATH must name the plugin directory.
#include <gloo/allreduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "interleaved.h"

namespace {

struct Options {
  std::vector<int> ranks = {2, 4};
  int rounds = 7;
  int max_mb = 64;
};

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "bp_bench_comm: %s: %s\n", what, bp_last_error_message());
  std::exit(2);
}

// One all-reduce path over a float32 buffer of n elements.
struct Side {
  bp_comm_t* comm = nullptr;
  bp_tensor_t* tensor = nullptr;
  std::shared_ptr<gloo::Context> gloo;
  float* host = nullptr;
  size_t n = 0;
};

void RunBackplane(void* s, int64_t iters) {
  auto* side = static_cast<Side*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    if (bp_comm_all_reduce(side->comm, side->tensor, side->tensor, BP_REDUCE_SUM, nullptr) != BP_STATUS_OK) {
      Die("bp_comm_all_reduce");
    }
  }
}

void RunGloo(void* s, int64_t iters) {
  auto* side = static_cast<Side*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    gloo::AllreduceOptions o(side->gloo);
    o.setOutput(side->host, side->n);
    o.setReduceFunction([](void* c, const void* a, const void* b, size_t k) {
      auto* out = static_cast<float*>(c);
      const auto* x = static_cast<const float*>(a);
      const auto* y = static_cast<const float*>(b);
      for (size_t j = 0; j < k; ++j) out[j] = x[j] + y[j];
    });
    gloo::allreduce(o);
  }
}

bp_comm_t* MakeComm(bp_context_t* ctx, bp_device_t dev, bp_kv_store_t* store, int rank, int world, const char* prefix,
                    int32_t engine) {
  bp_comm_options_t o{};
  o.struct_size = sizeof(o);
  o.rank = rank;
  o.world_size = world;
  o.store = store;
  o.prefix = prefix;
  o.engine = engine;
  o.timeout_ms = 120000;
  bp_comm_t* c = nullptr;
  if (bp_comm_create(ctx, dev, &o, &c) != BP_STATUS_OK) Die("bp_comm_create");
  return c;
}

double MemcpyGBs() {
  std::vector<char> a(64 << 20, 1), b(64 << 20);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const double t0 = bp_bench::NowNs();
    std::memcpy(b.data(), a.data(), a.size());
    best = std::min(best, bp_bench::NowNs() - t0);
  }
  return static_cast<double>(a.size()) / best;  // bytes per ns = GB/s
}

int Rank(const Options& opt, int rank, int world, const std::string& dir) {
  bp_context_t* ctx = nullptr;
  bp_context_options_t co{};
  co.struct_size = sizeof(co);
  co.min_log_level = BP_LOG_ERROR;
  if (bp_context_create(&co, &ctx) != BP_STATUS_OK) Die("bp_context_create");
  int32_t loaded = 0;
  bp_plugin_discover(ctx, &loaded);
  bp_kv_store_t* store = nullptr;
  if (bp_kv_store_file_create((dir + "/bp").c_str(), &store) != BP_STATUS_OK) Die("bp_kv_store_file_create");
  // Gloo called directly, its own rendezvous on the same directory.
  gloo::rendezvous::FileStore gstore(dir + "/gloo");
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto gdev = gloo::transport::tcp::CreateDevice(attr);
  auto gctx = std::make_shared<gloo::rendezvous::Context>(rank, world);
  gctx->connectFullMesh(gstore, gdev);

  const double memcpy_gbs = MemcpyGBs();
  if (rank == 0) {
    std::printf("\nW=%d ranks, %d interleaved rounds, load average %s, memcpy %.1f GB/s\n", world, opt.rounds,
                bp_bench::LoadAverage().c_str(), memcpy_gbs);
    std::printf("%-10s %9s %12s %12s %8s %10s\n", "backend", "bytes", "ours GB/s", "anchor GB/s", "ratio",
                "ours/memcpy");
  }
  int32_t cpu_backend = 0, vs_backend = -1;
  bp_backend_find(ctx, "vendor_sim", &vs_backend);
  const bp_device_t cpu{cpu_backend, 0};
  bp_comm_t* cpu_comm = MakeComm(ctx, cpu, store, rank, world, "cpu", BP_COMM_ENGINE_GLOO);
  bp_comm_t *vs_native = nullptr, *vs_staged = nullptr;
  if (vs_backend >= 0) {
    const bp_device_t vs{vs_backend, 0};
    vs_native = MakeComm(ctx, vs, store, rank, world, "vs_native", BP_COMM_ENGINE_AUTO);
    vs_staged = MakeComm(ctx, vs, store, rank, world, "vs_staged", BP_COMM_ENGINE_GLOO);
  }
  const double factor = 2.0 * (world - 1) / world;
  for (size_t bytes = 4096; bytes <= static_cast<size_t>(opt.max_mb) << 20; bytes *= 4) {
    const size_t n = bytes / 4;
    const int64_t sizes[1] = {static_cast<int64_t>(n)};
    const DLDataType f32{kDLFloat, 32, 1};
    const int64_t iters = std::max<int64_t>(1, static_cast<int64_t>((64 << 20) / bytes / 4));
    // cpu: ours on a cpu tensor, the anchor on a plain host buffer.
    Side ours, anchor;
    ours.comm = cpu_comm;
    if (bp_tensor_empty(ctx, cpu, 1, sizes, f32, &ours.tensor) != BP_STATUS_OK) Die("bp_tensor_empty");
    std::vector<float> buf(n, 1.0f);
    anchor.gloo = gctx;
    anchor.host = buf.data();
    anchor.n = n;
    auto row = bp_bench::Interleave("cpu", RunBackplane, &ours, RunGloo, &anchor, opt.rounds, iters);
    if (rank == 0) {
      const double ours_gbs = bytes * factor / row.ours_ns, anchor_gbs = bytes * factor / row.anchor_ns;
      std::printf("%-10s %9zu %12.2f %12.2f %8.2f %10.3f\n", "cpu", bytes, ours_gbs, anchor_gbs, 1.0 / row.ratio,
                  ours_gbs / memcpy_gbs);
    }
    bp_tensor_release(ours.tensor);
    if (vs_native != nullptr) {
      Side native, staged;
      native.comm = vs_native;
      staged.comm = vs_staged;
      const bp_device_t vs{vs_backend, 0};
      if (bp_tensor_empty(ctx, vs, 1, sizes, f32, &native.tensor) != BP_STATUS_OK) Die("bp_tensor_empty");
      staged.tensor = native.tensor;
      auto r2 = bp_bench::Interleave("vendor_sim", RunBackplane, &native, RunBackplane, &staged, opt.rounds, iters);
      if (rank == 0) {
        const double ours_gbs = bytes * factor / r2.ours_ns, anchor_gbs = bytes * factor / r2.anchor_ns;
        std::printf("%-10s %9zu %12.2f %12.2f %8.2f %10.3f\n", "vendor_sim", bytes, ours_gbs, anchor_gbs,
                    1.0 / r2.ratio, ours_gbs / memcpy_gbs);
      }
      bp_tensor_release(native.tensor);
    }
    std::fflush(stdout);
  }
  bp_comm_destroy(vs_native);
  bp_comm_destroy(vs_staged);
  bp_comm_destroy(cpu_comm);
  bp_kv_store_file_destroy(store);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--ranks") {
      opt.ranks.clear();
      for (const char* p = argv[i + 1]; *p != '\0';) {
        opt.ranks.push_back(std::atoi(p));
        while (*p != '\0' && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else if (a == "--rounds") {
      opt.rounds = std::atoi(argv[i + 1]);
    } else if (a == "--max-mb") {
      opt.max_mb = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: bp_bench_comm [--ranks 2,4] [--rounds 7] [--max-mb 64]\n");
      return 2;
    }
  }
  std::printf(
      "all-reduce sum, float32, bus bandwidth; ratio = ours / anchor bandwidth (median of per-round ratios)\n"
      "cpu: bp_comm (Gloo engine) vs Gloo directly; vendor_sim: native shared memory vs Gloo staged\n");
  std::fflush(stdout);
  for (int world : opt.ranks) {
    char tmpl[] = "/tmp/bp_bench_comm_XXXXXX";
    const char* dir = mkdtemp(tmpl);
    if (dir == nullptr || mkdir((std::string(dir) + "/gloo").c_str(), 0700) != 0) return 2;
    std::vector<pid_t> pids;
    for (int r = 0; r < world; ++r) {
      const pid_t pid = fork();
      if (pid == 0) _exit(Rank(opt, r, world, dir));
      pids.push_back(pid);
    }
    int failed = 0;
    for (pid_t p : pids) {
      int status = 0;
      waitpid(p, &status, 0);
      failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    std::string rm = std::string("rm -rf ") + dir;
    if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir);
    if (failed != 0) return 1;
  }
  return 0;
}
