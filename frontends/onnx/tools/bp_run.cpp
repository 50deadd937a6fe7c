// bp-run: runs an ONNX model on any Backplane device (see --help).
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "bponnx/graph.h"
#include "bponnx/npy.h"
#include "bponnx/observe.h"
#include "bponnx/threads.h"
#include "run_guard.h"
#include "run_bench.h"
#include "run_report.h"

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2, kExitDiverged = 3;

const char* kHelpFooter = R"(Examples:
  bp-run model.onnx                                  # first non-CPU device, random inputs
  bp-run model.onnx --device cpu --input input=x.npy --output-dir out/
  bp-run model.onnx --device opencl:0 --report --trace trace.json
  bp-run model.onnx --device vendor_sim --shadow     # first node that differs from the CPU
  bp-run model.onnx --bench 20                       # warm-up, then median and min per run
  bp-run model.onnx --bench 20 --graph               # the same, as a captured graph replayed
  bp-run model.onnx --device cpu --threads 2 --bench 20  # the CPU kernels on 2 threads
  bp-run model.onnx --input input=x.npy --expect output_0=y.npy --expect-rtol 1e-3
  bp-run model.onnx --plugin ./build/libmy_backend.so --device my_backend --timeout 60

Exit codes:
  0  the model ran (and matched every --expect)
  1  a node failed to run (operator error, unmapped attribute), or an --expect mismatch
  2  bad input: unreadable or invalid model (truncated, not ONNX, cycle, opset too new,
     short initializer data, external data that is not a regular file inside the
     model's directory, node with no mapping), input missing or of the wrong shape
     or dtype, an input larger than --max-memory, unreadable .npy, unknown device,
     a --plugin that does not load, bad option
  3  --shadow found a node whose output differs from the CPU beyond tolerance
  4  --timeout ran out (the line printed says what was running))";

bool split_assign(const std::string& s, std::string* name, std::string* file) {
  const size_t k = s.find('=');
  if (k == std::string::npos || k == 0) return false;
  *name = s.substr(0, k);
  *file = s.substr(k + 1);
  return true;
}

// The first backend with a device that is not the CPU, else the CPU.
bp_device_t default_device(bp_context_t* ctx) {
  int32_t n = 0;
  bp_backend_count(ctx, &n);
  for (int32_t b = 1; b < n; ++b) {
    bp_backend_info_t info{};
    info.struct_size = sizeof info;
    if (bp_backend_info(ctx, b, &info) == BP_STATUS_OK && info.loaded && info.device_count > 0) return {b, 0};
  }
  return {0, 0};
}

std::string backend_name(bp_context_t* ctx, int32_t b) {
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  return bp_backend_info(ctx, b, &info) == BP_STATUS_OK && info.name ? info.name : "?";
}

bp_tensor_t* host_tensor(bp_context_t* ctx, const bponnx::RawTensor& r, std::string* err) {
  bp_tensor_t* t = nullptr;
  const uint8_t dummy = 0;
  const bp_status_t st = bp_tensor_from_host(ctx, bp_device_t{0, 0}, static_cast<int32_t>(r.sizes.size()),
                                             r.sizes.data(), bponnx::dtype_to_dl(r.dtype),
                                             r.bytes.empty() ? &dummy : static_cast<const void*>(r.bytes.data()),
                                             r.bytes.size(), &t);
  if (st != BP_STATUS_OK) *err = bponnx::api_error("bp_tensor_from_host", st);
  return st == BP_STATUS_OK ? t : nullptr;
}

// Random values of the declared shape (symbolic dims: 1): floats ~ N(0, 1),
// integers in [0, 10), bool false.
bool random_input(const bponnx::ValueInfo& v, uint64_t max_memory, std::mt19937_64* rng, bponnx::RawTensor* out,
                  std::string* err) {
  bponnx::DType d = bponnx::DType::kFloat32;
  if (v.elem_type != 0 && !bponnx::dtype_from_onnx(v.elem_type, &d, nullptr)) {
    *err = "input " + v.name + " has element type " + bponnx::onnx_type_name(v.elem_type) + ", which Backplane lacks";
    return false;
  }
  out->dtype = d;
  out->sizes.clear();
  for (int64_t s : v.dims) out->sizes.push_back(s < 0 ? 1 : s);
  uint64_t bytes = 0;
  if (!bprun::check_tensor_bytes("input " + v.name, out->sizes, bponnx::dtype_itemsize(d), bponnx::dtype_name(d),
                                 max_memory, &bytes, err)) {
    return false;
  }
  const size_t n = static_cast<size_t>(out->numel());
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int64_t> ints(0, 9);
  out->bytes.assign(n * bponnx::dtype_itemsize(d), '\0');
  for (size_t k = 0; k < n; ++k) {
    if (d == bponnx::DType::kFloat32) {
      const float x = normal(*rng);
      std::memcpy(&out->bytes[k * 4], &x, 4);
    } else if (d == bponnx::DType::kFloat64) {
      const double x = normal(*rng);
      std::memcpy(&out->bytes[k * 8], &x, 8);
    } else if (d == bponnx::DType::kInt64) {
      const int64_t x = ints(*rng);
      std::memcpy(&out->bytes[k * 8], &x, 8);
    } else if (d == bponnx::DType::kInt32) {
      const int32_t x = static_cast<int32_t>(ints(*rng));
      std::memcpy(&out->bytes[k * 4], &x, 4);
    } else if (d != bponnx::DType::kBool) {
      *err = "input " + v.name + ": random " + bponnx::dtype_name(d) + " values are not supported; pass --input";
      return false;
    }
  }
  return true;
}

// A tensor's bytes on the host (made contiguous on its device first).
bool read_raw(bp_context_t* ctx, bp_tensor_t* t, bponnx::RawTensor* out, std::string* err) {
  try {
    bponnx::OpCache ops(ctx);
    bponnx::Exec ex(ctx, bp_tensor_device(t), &ops);
    bp_tensor_t* c = bp_tensor_is_contiguous(t) ? t : ex.call("contiguous", {bponnx::vt(t)});
    out->dtype = bponnx::dtype_of(c);
    out->sizes = bponnx::sizes_of(c);
    out->bytes.assign(static_cast<size_t>(out->numel()) * bponnx::dtype_itemsize(out->dtype), '\0');
    const bp_status_t st = bp_tensor_to_host(c, out->bytes.empty() ? nullptr : &out->bytes[0], out->bytes.size());
    if (st != BP_STATUS_OK) {
      *err = bponnx::api_error("bp_tensor_to_host", st);
      return false;
    }
  } catch (const bponnx::CallFailed& e) {
    *err = e.message;
    return false;
  }
  return true;
}

}  // namespace

// "running node #3 'conv1' (Conv)": what the watchdog names when --timeout runs out.
static std::string node_phase(const bponnx::Model& model, size_t i) {
  if (i >= model.nodes().size()) return "finishing the run";
  const bponnx::OnnxNode& n = model.nodes()[i];
  return "running node #" + std::to_string(i) + " '" + bponnx::node_display_name(n) + "' (" + n.op_type + ")";
}

static int run_tool(int argc, char** argv) {
  CLI::App app{"bp-run: run an ONNX model on any Backplane device"};
  app.footer(kHelpFooter);
  std::string model_path, device_spec, output_dir, trace_path;
  std::vector<std::string> input_specs, expect_specs, no_opt;
  int bench = 0, warmup = 0;
  uint64_t seed = 0;
  int threads = 0;
  bool threads_given = false;
  bool report = false, shadow = false, seed_given = false, graph = false;
  std::vector<std::string> plugins;
  double timeout_s = 0;
  uint64_t max_memory = bprun::default_memory_limit();
  double shadow_rtol = bponnx::kShadowRtol, shadow_atol = bponnx::kShadowAtol, expect_rtol = 1e-3, expect_atol = 1e-4;
  app.add_option("model", model_path, "the .onnx file")->required();
  app.add_option("--plugin", plugins,
                 "load this plugin file first (repeatable; a relative path is resolved against the working "
                 "directory); discovery (BACKPLANE_PLUGINS, BACKPLANE_PLUGIN_PATH, the install directory) still runs")
      ->type_name("PATH");
  std::string timeout_text, max_memory_text;
  app.add_option("--timeout", timeout_text,
                 "give up after SECONDS (a kernel or plugin that never returns): one line naming what was running, "
                 "exit code 4 (default: no limit; at most 31536000, a year)")
      ->type_name("SECONDS");
  app.add_option("--max-memory", max_memory_text,
                 "largest host buffer the model may make bp-run allocate (an input of its declared shape, a .npy "
                 "input), e.g. 4GiB (default: the machine's physical memory); larger is bad input, exit code 2")
      ->type_name("BYTES");
  app.add_option("--device", device_spec, "NAME[:i]; default: the first non-CPU device, else cpu");
  app.add_option("--input", input_specs, "NAME=FILE.npy for a graph input (random values of the declared shape otherwise)");
  app.add_option("--output-dir", output_dir, "write each graph output as DIR/<name>.npy");
  app.add_option("--bench", bench, "after one warm-up run, time N runs; print median and min")->check(CLI::NonNegativeNumber);
  app.add_flag("--graph", graph,
               "with --bench: capture the model once on a new stream as a graph and time its replays "
               "(docs/streams.md); the replay's outputs are compared with an eager run");
  app.add_option("--warmup", warmup,
                 "run the model N times before the run that --report/--trace/--shadow record (steady-state times: no "
                 "first-call set-up)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--report", report, "per backend: nodes and time native vs fallback, transfers, peak memory, fallback ops by time");
  app.add_option("--trace", trace_path, "write a Chrome trace-event JSON (Perfetto, chrome://tracing), one event per node");
  app.add_flag("--shadow", shadow, "run every node on the CPU too; report the first and the worst differing node");
  app.add_option("--shadow-rtol", shadow_rtol, "relative tolerance of --shadow (default 1e-3)");
  app.add_option("--shadow-atol", shadow_atol, "absolute tolerance of --shadow (default 1e-4)");
  app.add_option("--expect", expect_specs, "NAME=FILE.npy: compare graph output NAME with the file");
  app.add_option("--expect-rtol", expect_rtol, "relative tolerance of --expect (default 1e-3)");
  app.add_option("--expect-atol", expect_atol, "absolute tolerance of --expect (default 1e-4)");
  std::string pass_names = "all";
  for (const auto& p : bponnx::optimizer_passes()) pass_names += ", " + p.first;
  app.add_option("--no-opt", no_opt,
                 "turn the graph optimizer's pass PASS off (repeatable; 'all': every pass). Passes: " + pass_names)
      ->type_name("PASS");
  app.add_option("--threads", threads,
                 "intra-op threads of the CPU backend (as OMP_NUM_THREADS; default: that variable, else one per core; "
                 "at most 4 per hardware thread)")
      ->each([&](const std::string&) { threads_given = true; });
  app.add_option("--seed", seed, "seed of the random inputs (default: from the clock; printed)")->each([&](const std::string&) { seed_given = true; });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }

  std::string err;
  if ((!timeout_text.empty() && !bprun::parse_timeout(timeout_text, &timeout_s, &err)) ||
      (!max_memory_text.empty() && !bprun::parse_memory(max_memory_text, &max_memory, &err))) {
    std::fprintf(stderr, "bp-run: %s\n", err.c_str());
    return kExitBadInput;
  }
  // Before anything is loaded: a bad --threads is bad input, not a crash later.
  if (threads_given && !bponnx::set_intra_op_threads(threads, &err)) {
    std::fprintf(stderr, "bp-run: --threads: %s\n", err.c_str());
    return kExitBadInput;
  }
  bprun::Watchdog watchdog(timeout_s);
  watchdog.set_phase("loading the model " + model_path);
  bponnx::Model model;
  if (!bponnx::Model::load(model_path, &model, &err)) {
    std::fprintf(stderr, "bp-run: %s\n", err.c_str());
    return kExitBadInput;
  }
  bp_context_t* ctx = nullptr;
  if (bp_context_create(nullptr, &ctx) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp-run: bp_context_create: %s\n", bp_last_error_message());
    return kExitFailed;
  }
  struct CtxGuard {
    bp_context_t* c;
    ~CtxGuard() { bp_context_destroy(c); }
  } guard{ctx};
  // --plugin files first: a given file wins over a discovered plugin of the same backend name.
  for (const std::string& p : plugins) {
    watchdog.set_phase("loading the plugin " + p);
    if (bp_plugin_load(ctx, p.c_str(), nullptr) != BP_STATUS_OK) {
      std::fprintf(stderr, "bp-run: --plugin %s: %s\n", p.c_str(), bp_last_error_message());
      return kExitBadInput;
    }
  }
  watchdog.set_phase("discovering plugins");
  int32_t loaded = 0;
  bp_plugin_discover(ctx, &loaded);
  bp_device_t dev = default_device(ctx);
  if (!device_spec.empty() && bp_device_parse(ctx, device_spec.c_str(), &dev) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp-run: --device %s: %s\n", device_spec.c_str(), bp_last_error_message());
    return kExitBadInput;
  }
  const std::string dev_name = backend_name(ctx, dev.backend) + ":" + std::to_string(dev.index);

  // Inputs.
  std::map<std::string, std::string> files;
  for (const std::string& s : input_specs) {
    std::string n, f;
    if (!split_assign(s, &n, &f)) {
      std::fprintf(stderr, "bp-run: --input %s: expected NAME=FILE.npy\n", s.c_str());
      return kExitBadInput;
    }
    files[n] = f;
  }
  for (const auto& kv : files) {
    bool known = false;
    for (const auto& v : model.inputs()) known = known || v.name == kv.first;
    if (!known) {
      std::fprintf(stderr, "bp-run: --input %s: the model has no input of that name\n", kv.first.c_str());
      return kExitBadInput;
    }
  }
  if (!seed_given) seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::mt19937_64 rng(seed);
  std::map<std::string, bp_tensor_t*> inputs;
  struct InputsGuard {
    std::map<std::string, bp_tensor_t*>* m;
    ~InputsGuard() {
      for (auto& kv : *m) bp_tensor_release(kv.second);
    }
  } inputs_guard{&inputs};
  bool random_used = false;
  for (const auto& v : model.inputs()) {
    bponnx::RawTensor r;
    const auto f = files.find(v.name);
    // Read at most --max-memory bytes (st_size is not trusted: /dev/zero,
    // a FIFO or a growing file say nothing true about what a read returns).
    if (f != files.end() ? !bponnx::npy_read(f->second, &r, &err, max_memory)
                         : !random_input(v, max_memory, &rng, &r, &err)) {
      std::fprintf(stderr, "bp-run: %s%s\n", f != files.end() ? "--input " : "", err.c_str());
      return kExitBadInput;
    }
    random_used = random_used || f == files.end();
    bp_tensor_t* t = host_tensor(ctx, r, &err);
    if (t == nullptr) {
      std::fprintf(stderr, "bp-run: input %s: %s\n", v.name.c_str(), err.c_str());
      return kExitBadInput;
    }
    inputs[v.name] = t;
  }
  if (random_used) std::printf("bp-run: random inputs, seed %llu (--seed to repeat)\n", static_cast<unsigned long long>(seed));

  watchdog.set_phase("preparing the model (uploading initializers)");
  bponnx::Session session(ctx, dev, &model);
  for (const std::string& p : no_opt) {
    if (!session.disable_pass(p, &err)) {
      std::fprintf(stderr, "bp-run: --no-opt: %s\n", err.c_str());
      return kExitBadInput;
    }
  }
  if (!session.prepare(&err)) {
    std::fprintf(stderr, "bp-run: %s\n", err.c_str());
    return kExitBadInput;
  }
  watchdog.set_phase("in a --warmup run");
  for (int i = 0; i < warmup; ++i) {  // unobserved runs: caches, oneDNN primitives and memory warm
    std::vector<bp_tensor_t*> outs;
    if (!session.run(inputs, &outs, &err)) break;  // the recorded run below reports the error
    for (bp_tensor_t* t : outs) bp_tensor_release(t);
  }
  bprun::Recorder rec(ctx, dev, !trace_path.empty(), shadow, shadow_rtol, shadow_atol);
  const bool recording = report || shadow || !trace_path.empty();
  const bool progress = isatty(2) != 0;  // a progress line on a terminal, for runs over a second
  const auto t0 = std::chrono::steady_clock::now();
  double last_progress = 0.0;
  const bponnx::Model& ran = session.model();  // after the optimizer: the nodes that run
  watchdog.set_phase(node_phase(ran, 0));
  // An observer synchronizes the device after each node: only when something uses it.
  if (recording || progress || timeout_s > 0) {
    session.set_observer([&](const bponnx::NodeRun& nr) {
      watchdog.set_phase(node_phase(ran, nr.index + 1));
      if (recording) rec.on_node(nr);
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (progress && t > 1.0 && t - last_progress > 0.25) {
        std::fprintf(stderr, "\rbp-run: node %zu of %zu (%s), %.1f s ", nr.index + 1, ran.nodes().size(),
                     nr.node->op_type.c_str(), t);
        last_progress = t;
      }
    });
  }
  rec.begin_run();
  std::vector<bp_tensor_t*> outputs;
  const bool ok = session.run(inputs, &outputs, &err);
  const double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (last_progress > 0.0) std::fprintf(stderr, "\n");
  struct OutputsGuard {
    std::vector<bp_tensor_t*>* v;
    ~OutputsGuard() {
      for (bp_tensor_t* t : *v) bp_tensor_release(t);
    }
  } outputs_guard{&outputs};
  if (!ok) {
    std::fprintf(stderr, "bp-run: %s\n", err.c_str());
    const bool bad_input = err.find(": input ") != std::string::npos && err.find("node '") == std::string::npos;
    return bad_input ? kExitBadInput : kExitFailed;
  }
  std::printf("bp-run: %s on %s: %zu nodes in %.3f ms", model_path.c_str(), dev_name.c_str(), ran.nodes().size(),
              first_s * 1e3);
  if (shadow) std::printf(" (%.3f ms of it the --shadow check on the cpu)", rec.shadow_seconds() * 1e3);
  std::printf("\n");
  int rc = kExitOk;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::string& name = model.outputs()[k].name;
    std::printf("  output %s: %s %s\n", name.c_str(), bponnx::dtype_name(bponnx::dtype_of(outputs[k])),
                bponnx::sizes_str(bponnx::sizes_of(outputs[k])).c_str());
    if (!output_dir.empty()) {
      bponnx::RawTensor r;
      mkdir(output_dir.c_str(), 0755);
      if (!read_raw(ctx, outputs[k], &r, &err) || !bponnx::npy_write(output_dir + "/" + name + ".npy", r, &err)) {
        std::fprintf(stderr, "bp-run: output %s: %s\n", name.c_str(), err.c_str());
        rc = kExitFailed;
      }
    }
  }
  for (const std::string& s : expect_specs) {
    std::string n, f;
    bponnx::RawTensor want;
    if (!split_assign(s, &n, &f) || !bponnx::npy_read(f, &want, &err)) {
      std::fprintf(stderr, "bp-run: --expect %s: %s\n", s.c_str(), err.empty() ? "expected NAME=FILE.npy" : err.c_str());
      return kExitBadInput;
    }
    size_t k = 0;
    while (k < model.outputs().size() && model.outputs()[k].name != n) ++k;
    if (k == model.outputs().size()) {
      std::fprintf(stderr, "bp-run: --expect %s: the model has no output of that name\n", n.c_str());
      return kExitBadInput;
    }
    const bponnx::OutputMatch m = bponnx::compare_output(ctx, outputs[k], want, expect_rtol, expect_atol);
    std::printf("  expect %s: %s (%s)\n", n.c_str(), m.match ? "match" : "MISMATCH",
                m.message(expect_rtol, expect_atol).c_str());
    if (!m.match) rc = kExitFailed;
  }
  if (report) rec.print_report(std::cout);
  if (!trace_path.empty()) {
    if (!rec.write_trace(trace_path)) {
      std::fprintf(stderr, "bp-run: cannot write %s\n", trace_path.c_str());
      rc = kExitFailed;
    } else {
      std::printf("bp-run: trace written to %s\n", trace_path.c_str());
    }
  }
  if (shadow) {
    std::printf("shadow: %zu nodes checked on cpu (rtol %g, atol %g)\n", rec.shadow_checked(), shadow_rtol, shadow_atol);
    if (!rec.shadow_error().empty()) std::printf("shadow: could not check %s\n", rec.shadow_error().c_str());
    for (const bponnx::ShadowFinding* f : {&rec.first_divergence(), &rec.worst_divergence()}) {
      if (!f->found) continue;
      std::printf("shadow: %s divergent node #%zu '%s' (%s), inputs %s: max abs %g, max rel %g\n",
                  f == &rec.first_divergence() ? "first" : "worst", f->index, f->node.c_str(), f->op.c_str(),
                  f->shapes.c_str(), f->max_abs, f->max_rel);
    }
    if (rec.first_divergence().found) {
      rc = rc == kExitOk ? kExitDiverged : rc;
    } else {
      std::printf("shadow: every node matches the cpu\n");
    }
  }
  if (bench > 0) {
    watchdog.set_phase(graph ? "in a --bench --graph run" : "in a --bench run");
    session.set_observer(nullptr);
    bprun::BenchResult b;
    if (!bprun::bench_runs(ctx, dev, session, inputs, bench, graph, &b, &err)) {
      std::fprintf(stderr, "bp-run: %s\n", err.c_str());
      return kExitFailed;
    }
    const double per_node_us = b.host_median_ms * 1e3 / static_cast<double>(
        graph ? std::max<int64_t>(b.graph_nodes, 1) : std::max<size_t>(ran.nodes().size(), 1));
    std::printf("bench: %d runs on %s%s: median %.3f ms, min %.3f ms; host (enqueueing) median %.3f ms, %.2f us per %s\n",
                bench, dev_name.c_str(), graph ? " (graph replay)" : "", b.median_ms, b.min_ms, b.host_median_ms,
                per_node_us, graph ? "graph node" : "ONNX node");
    if (graph) {
      std::printf("graph: %lld nodes captured (%lld of them host nodes: CPU fallbacks and copies through the host); "
                  "replay outputs vs the eager run: max abs diff %g\n",
                  static_cast<long long>(b.graph_nodes), static_cast<long long>(b.graph_host_nodes), b.max_abs_diff);
    }
  }
  return rc;
}

int main(int argc, char** argv) {
  // Nothing escapes as an abort: an exception at the tool's boundary (out of
  // memory on a hostile model, a library error) is bad input, one line.
  try {
    return run_tool(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "bp-run: out of memory (the model or its inputs need more memory than there is; see "
                 "--max-memory)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bp-run: %s\n", e.what());
  }
  return kExitBadInput;
}
