// Asynchronous execution on vendor_sim: a chain of N native kernels (relu on
// a small float32 tensor) run three ways in interleaved rounds:
//   sync         vendor_sim synchronous (BP_VENDOR_SIM_ASYNC=0): each kernel
//                runs on the calling thread; the host waits for every one;
//   eager async  vendor_sim asynchronous with a launch latency per kernel
//                (BP_VENDOR_SIM_LAUNCH_US, default 20): operator calls enqueue
//                and return; one synchronize at the end;
//   graph        the same chain captured once as a graph, replayed.
// Per mode: the host's time per kernel until the chain was enqueued, and the
// wall time per kernel until it finished. The device's own busy time is the
// graph's wall time (the host launches far faster than the device runs, so
// the device never idles): eager async within 1.1x of it means the host is
// never the bottleneck. Goals (issue 20): that ratio <= 1.1, graph host
// cost <= 1 us per node.
//
//   bp_bench_streams [rounds] [kernels] [launch_us]
#include <backplane/backplane.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "interleaved.h"

namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "bp_bench_streams: %s: %s\n", what, bp_last_error_message());
  std::exit(1);
}

// A context whose vendor_sim reads `async` and `launch_us` at its init.
bp_context_t* VendorSimContext(bool async, int launch_us, bp_device_t* dev) {
  setenv("BP_VENDOR_SIM_ASYNC", async ? "1" : "0", 1);
  setenv("BP_VENDOR_SIM_LAUNCH_US", std::to_string(launch_us).c_str(), 1);
  bp_context_options_t opts{};
  opts.struct_size = sizeof(opts);
  opts.discover_plugins = 1;
  opts.min_log_level = BP_LOG_ERROR;
  bp_context_t* c = nullptr;
  if (bp_context_create(&opts, &c) != BP_STATUS_OK) Die("bp_context_create");
  unsetenv("BP_VENDOR_SIM_ASYNC");
  unsetenv("BP_VENDOR_SIM_LAUNCH_US");
  if (bp_device_parse(c, "vendor_sim:0", dev) != BP_STATUS_OK) Die("vendor_sim:0 (build the vendor_sim plugin)");
  return c;
}

struct Chain {
  bp_context_t* ctx = nullptr;
  bp_device_t dev{};
  bp_op_t* relu = nullptr;
  bp_tensor_t* x = nullptr;
  bp_stream_handle_t* stream = nullptr;
  int kernels = 0;

  Chain(bool async, int launch_us, int n) : kernels(n) {
    ctx = VendorSimContext(async, launch_us, &dev);
    if (bp_op_find(ctx, "relu", &relu) != BP_STATUS_OK) Die("relu");
    if (bp_stream_create(ctx, dev, &stream) != BP_STATUS_OK) Die("bp_stream_create");
    if (bp_set_current_stream(stream) != BP_STATUS_OK) Die("bp_set_current_stream");
    std::vector<float> host(256, -0.5f);
    const int64_t size = 256;
    if (bp_tensor_from_host(ctx, dev, 1, &size, DLDataType{kDLFloat, 32, 1}, host.data(), host.size() * 4, &x) !=
        BP_STATUS_OK) {
      Die("bp_tensor_from_host");
    }
  }
  ~Chain() {
    bp_stream_handle_t* def = nullptr;
    if (bp_stream_get_default(ctx, dev, &def) == BP_STATUS_OK) bp_set_current_stream(def);
    bp_stream_destroy(stream);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
  }
  Chain(const Chain&) = delete;
  Chain& operator=(const Chain&) = delete;
  // Enqueues the chain: relu(relu(...relu(x))).
  void Enqueue() {
    bp_tensor_t* cur = x;
    bp_tensor_retain(cur);
    for (int i = 0; i < kernels; ++i) {
      bp_value_t arg{};
      arg.kind = BP_VALUE_TENSOR;
      arg.u.tensor = cur;
      bp_tensor_t* next = nullptr;
      if (bp_op_call(ctx, relu, &arg, 1, &next, 1) != BP_STATUS_OK) Die("relu");
      bp_tensor_release(cur);
      cur = next;
    }
    bp_tensor_release(cur);
  }
  void Synchronize() {
    if (bp_stream_synchronize(stream) != BP_STATUS_OK) Die("bp_stream_synchronize");
  }
};

struct Sample {
  double host_ns = 0, wall_ns = 0;  // per kernel
};

template <typename Enqueue, typename Wait>
Sample Time(int kernels, Enqueue enqueue, Wait wait) {
  const double t0 = bp_bench::NowNs();
  enqueue();
  const double t1 = bp_bench::NowNs();
  wait();
  const double t2 = bp_bench::NowNs();
  return Sample{(t1 - t0) / kernels, (t2 - t0) / kernels};
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const int kernels = argc > 2 ? std::atoi(argv[2]) : 200;
  const int launch_us = argc > 3 ? std::atoi(argv[3]) : 20;
  Chain sync(false, 0, kernels), eager(true, launch_us, kernels), replay(true, launch_us, kernels);

  // The graph: the chain captured once on replay's stream.
  if (bp_graph_begin_capture(replay.stream) != BP_STATUS_OK) Die("bp_graph_begin_capture");
  replay.Enqueue();
  bp_graph_t* graph = nullptr;
  if (bp_graph_end_capture(replay.stream, &graph) != BP_STATUS_OK) Die("bp_graph_end_capture");
  replay.Synchronize();

  auto run_sync = [&] { return Time(kernels, [&] { sync.Enqueue(); }, [&] { sync.Synchronize(); }); };
  auto run_eager = [&] { return Time(kernels, [&] { eager.Enqueue(); }, [&] { eager.Synchronize(); }); };
  auto run_graph = [&] {
    return Time(
        kernels, [&] { if (bp_graph_launch(graph, replay.stream) != BP_STATUS_OK) Die("bp_graph_launch"); },
        [&] { replay.Synchronize(); });
  };
  run_sync();
  run_eager();
  run_graph();  // warm-up
  std::vector<double> sh, sw, eh, ew, gh, gw, ratio;
  for (int r = 0; r < rounds; ++r) {
    Sample s, e, g;
    switch (r % 3) {  // the order rotates: each mode sees the same load
      case 0: s = run_sync(); e = run_eager(); g = run_graph(); break;
      case 1: e = run_eager(); g = run_graph(); s = run_sync(); break;
      default: g = run_graph(); s = run_sync(); e = run_eager(); break;
    }
    sh.push_back(s.host_ns), sw.push_back(s.wall_ns);
    eh.push_back(e.host_ns), ew.push_back(e.wall_ns);
    gh.push_back(g.host_ns), gw.push_back(g.wall_ns);
    ratio.push_back(e.wall_ns / g.wall_ns);
  }
  using bp_bench::Median;
  std::printf("vendor_sim, a chain of %d relu kernels on 256 float32 elements, launch latency %d us (async modes), "
              "%d interleaved rounds, medians per kernel\n",
              kernels, launch_us, rounds);
  std::printf("%-12s %14s %14s\n", "mode", "host us", "wall us");
  std::printf("%-12s %14.2f %14.2f\n", "sync", Median(sh) / 1e3, Median(sw) / 1e3);
  std::printf("%-12s %14.2f %14.2f\n", "eager async", Median(eh) / 1e3, Median(ew) / 1e3);
  std::printf("%-12s %14.2f %14.2f\n", "graph", Median(gh) / 1e3, Median(gw) / 1e3);
  std::printf("eager async wall / device busy time (the graph's wall): %.3f (goal <= 1.1)\n", Median(ratio));
  std::printf("graph replay host cost per node: %.3f us (goal <= 1)\n", Median(gh) / 1e3);
  bp_graph_destroy(graph);
  return 0;
}
