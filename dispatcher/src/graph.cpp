// Graph capture and replay: recording resolved kernel calls, and the C API
// (backplane/streams.h).
#include "graph.h"
#include "graph_inputs.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <unordered_set>
#include <utility>

#include "api.h"
#include "copy.h"
#include "dispatch.h"
#include "kernel_error.h"
#include "plugin.h"
#include "struct_size.h"
#include "tensor.h"

namespace bp::core {
namespace {

std::string DeviceName(const DeviceState* dev) { return dev->slot->name + ":" + std::to_string(dev->index); }

// Keeps the first reason a capture became invalid.
void Invalidate(Capture* c, const std::string& why) {
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->error.empty()) c->error = why;
}

// Copies of an int list and a string owned by `node` (NULL stays NULL).
const int64_t* KeepInts(GraphNode* node, const int64_t* data, int64_t size) {
  if (data == nullptr) return nullptr;
  node->ints.emplace_back(data, data + size);
  return node->ints.back().data();
}
const char* KeepString(GraphNode* node, const char* str) {
  if (str == nullptr) return nullptr;
  node->strings.emplace_back(str);
  return node->strings.back().c_str();
}

// A copy of `t` (and its shape and strides) owned by `node`; the same input
// pointer maps to the same copy (an in-place call's output is its argument).
const DLTensor* CopyTensor(GraphNode* node, std::vector<std::pair<const DLTensor*, DLTensor*>>* seen,
                           const DLTensor* t) {
  if (t == nullptr) return nullptr;
  for (auto& [from, to] : *seen) {
    if (from == t) return to;
  }
  node->tensors.push_back(*t);
  DLTensor* c = &node->tensors.back();
  node->ints.emplace_back(t->shape, t->shape + t->ndim);
  c->shape = node->ints.back().data();
  if (t->strides != nullptr) {
    node->ints.emplace_back(t->strides, t->strides + t->ndim);
    c->strides = node->ints.back().data();
  }
  seen->emplace_back(t, c);
  return c;
}

std::unique_ptr<GraphNode> CopyCall(bp_kernel_fn fn, const bp_kernel_call_t& call) {
  auto node = std::make_unique<GraphNode>();
  node->fn = fn;
  node->kernel_data = call.kernel_data;
  node->backend_data = call.backend_data;
  node->op_name = call.op_name;
  std::vector<std::pair<const DLTensor*, DLTensor*>> seen;
  node->args.assign(call.args, call.args + call.num_args);
  for (bp_kernel_arg_t& a : node->args) {
    switch (a.kind) {
      case BP_VALUE_TENSOR:
        a.u.tensor = CopyTensor(node.get(), &seen, a.u.tensor);
        break;
      case BP_VALUE_TENSOR_LIST: {
        node->lists.emplace_back();
        for (int64_t i = 0; i < a.u.tensor_list.size; ++i) {
          node->lists.back().push_back(CopyTensor(node.get(), &seen, a.u.tensor_list.data[i]));
        }
        a.u.tensor_list.data = node->lists.back().data();
        break;
      }
      case BP_VALUE_INT_LIST:
        a.u.int_list.data = KeepInts(node.get(), a.u.int_list.data, a.u.int_list.size);
        break;
      case BP_VALUE_STRING:
        a.u.str = KeepString(node.get(), a.u.str);
        break;
      default:
        break;  // scalars are copied with the struct
    }
  }
  for (int32_t i = 0; i < call.num_outputs; ++i) {
    node->outputs.push_back(const_cast<DLTensor*>(CopyTensor(node.get(), &seen, call.outputs[i])));
  }
  return node;
}

// Suspends capture on this thread for its scope (a host node's own work).
struct SuspendCapture {
  SuspendCapture() { ++t_capture_suspended; }
  ~SuspendCapture() { --t_capture_suspended; }
  SuspendCapture(const SuspendCapture&) = delete;
  SuspendCapture& operator=(const SuspendCapture&) = delete;
};

Status CheckOwner(Capture* c, bp_stream_handle_t* stream, const std::string& what) {
  if (std::this_thread::get_id() == c->owner) return Status::Ok();
  const std::string why = what + " was enqueued on stream of device " + DeviceName(stream->dev) +
                          " by a thread other than the one capturing it";
  Invalidate(c, why);
  return Error(BP_STATUS_FAILED_PRECONDITION, why + "; the capture is invalidated");
}

// A host node's copy of the boxed arguments: tensors retained, lists copied.
std::unique_ptr<GraphNode> CopyHostCall(const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                                        bp_tensor_t* const* results, int32_t num_results) {
  auto node = std::make_unique<GraphNode>();
  node->host_op = op;
  node->host_args.assign(args, args + num_args);
  for (bp_value_t& v : node->host_args) {
    switch (v.kind) {
      case BP_VALUE_TENSOR:
        if (v.u.tensor != nullptr) TensorRetain(v.u.tensor);
        break;
      case BP_VALUE_TENSOR_LIST: {
        node->host_lists.emplace_back(v.u.tensor_list.data, v.u.tensor_list.data + v.u.tensor_list.size);
        for (bp_tensor_t* t : node->host_lists.back()) {
          if (t != nullptr) TensorRetain(t);
        }
        v.u.tensor_list.data = node->host_lists.back().data();
        break;
      }
      case BP_VALUE_INT_LIST:
        v.u.int_list.data = KeepInts(node.get(), v.u.int_list.data, v.u.int_list.size);
        break;
      case BP_VALUE_STRING:
        v.u.str = KeepString(node.get(), v.u.str);
        break;
      default:
        break;
    }
  }
  for (int32_t i = 0; i < num_results; ++i) {
    node->host_results.push_back(results[i]);
    if (results[i] != nullptr) TensorRetain(results[i]);
  }
  return node;
}

// Replays a host node on `stream`: the fallback again (on the launch stream,
// which it synchronizes), its results copied into the captured results.
Status ReplayHostNode(bp_context_t* ctx, bp_stream_handle_t* stream, GraphNode& n) {
  DeviceState* dev = stream->dev;
  bp_stream_handle_t* previous = CurrentStreamHandle(dev);
  if (bp_set_current_stream(PublicHandle(stream)) != BP_STATUS_OK) {
    return Status(bp_last_error_status(), bp_last_error_message());
  }
  if (n.host_copy) {
    Status st = CopyInto(ctx, n.host_results[0], n.host_results[1]);
    bp_set_current_stream(PublicHandle(previous != nullptr ? previous : &dev->default_stream));
    return st;
  }
  std::vector<bp_tensor_t*> fresh(n.host_results.size(), nullptr);
  Status st = RunHostFallback(ctx, n.host_op, n.host_args.data(), static_cast<int32_t>(n.host_args.size()), dev,
                              fresh.data(), static_cast<int32_t>(fresh.size()));
  for (size_t k = 0; k < fresh.size(); ++k) {
    bp_tensor_t* got = fresh[k];
    bp_tensor_t* want = n.host_results[k];
    if (st.ok() && got != nullptr && want != nullptr && got->storage != want->storage) st = CopyInto(ctx, want, got);
    if (got != nullptr) TensorRelease(got);
  }
  bp_set_current_stream(PublicHandle(previous != nullptr ? previous : &dev->default_stream));
  return st;
}

}  // namespace

GraphNode::~GraphNode() {
  for (bp_value_t& v : host_args) {
    if (v.kind == BP_VALUE_TENSOR && v.u.tensor != nullptr) TensorRelease(v.u.tensor);
  }
  for (auto& list : host_lists) {
    for (bp_tensor_t* t : list) {
      if (t != nullptr) TensorRelease(t);
    }
  }
  for (bp_tensor_t* t : host_results) {
    if (t != nullptr) TensorRelease(t);
  }
}

Status CaptureHostFallback(bp_context_t* ctx, bp_stream_handle_t* stream, const bp_op_t* op, const bp_value_t* args,
                           int32_t num_args, DeviceState* dev, bp_tensor_t** out_results, int32_t num_results) {
  Capture* c = stream->capture.load(std::memory_order_acquire);
  if (c == nullptr) return RunHostFallback(ctx, op, args, num_args, dev, out_results, num_results);
  BP_RETURN_IF_ERROR(CheckOwner(c, stream, "the CPU fallback of " + op->name));
  {
    SuspendCapture suspend;
    BP_RETURN_IF_ERROR(RunHostFallback(ctx, op, args, num_args, dev, out_results, num_results));
  }
  c->graph->nodes.push_back(CopyHostCall(op, args, num_args, out_results, num_results));
  return Status::Ok();
}

Status CaptureHostCopy(bp_context_t* ctx, bp_stream_handle_t* stream, bp_tensor_t* dst, bp_tensor_t* src,
                       const std::function<Status()>& run) {
  (void)ctx;
  Capture* c = stream->capture.load(std::memory_order_acquire);
  if (c == nullptr) return run();
  BP_RETURN_IF_ERROR(CheckOwner(c, stream, "copy_ (a copy through the host)"));
  {
    SuspendCapture suspend;
    BP_RETURN_IF_ERROR(run());
  }
  auto node = std::make_unique<GraphNode>();
  node->host_copy = true;
  node->host_op = ctx->copy_op;
  for (bp_tensor_t* t : {dst, src}) {
    TensorRetain(t);
    node->host_results.push_back(t);
  }
  c->graph->nodes.push_back(std::move(node));
  return Status::Ok();
}

Status RecordKernelCall(bp_stream_handle_t* stream, bp_kernel_fn fn, const bp_kernel_call_t& call) {
  Capture* c = stream->capture.load(std::memory_order_acquire);
  if (c == nullptr) return Status::Ok();
  BP_RETURN_IF_ERROR(CheckOwner(c, stream, call.op_name));
  c->graph->nodes.push_back(CopyCall(fn, call));
  return Status::Ok();
}

Status RefuseDuringCapture(const DeviceState* dev, const std::string& what) {
  bp_stream_handle_t* h = CapturingStream(dev);
  if (h == nullptr) return Status::Ok();
  Capture* c = h->capture.load(std::memory_order_acquire);
  if (c == nullptr) return Status::Ok();
  const std::string why = what + " during the graph capture of a stream of device " + DeviceName(dev) +
                          ": it must reach the host, which a graph cannot hold";
  Invalidate(c, why);
  return Error(BP_STATUS_FAILED_PRECONDITION, why + "; the capture is invalidated");
}

Status RefuseWhileThisThreadCaptures(DeviceState* dev, const std::string& what) {
  std::lock_guard<std::mutex> lock(dev->streams_mu);
  for (bp_stream_handle_t* s : dev->streams) {
    Capture* c = s->capture.load(std::memory_order_acquire);
    if (c == nullptr || c->owner != std::this_thread::get_id()) continue;
    const std::string why = what + " during the graph capture of a stream of device " + DeviceName(dev) +
                            ": a host wait cannot be part of a graph";
    Invalidate(c, why);
    return Error(BP_STATUS_FAILED_PRECONDITION, why + "; the capture is invalidated");
  }
  return Status::Ok();
}

void InvalidateCapturesLocked(DeviceState* dev, const std::string& why) {
  for (bp_stream_handle_t* s : dev->streams) {
    if (Capture* c = s->capture.load(std::memory_order_acquire)) Invalidate(c, why);
  }
}

namespace {

// Live graphs, and the launches and queries running on each: a destroyed
// graph is refused, not dereferenced, and bp_graph_destroy waits for the
// calls that started before it (streams.h: graph functions are thread-safe).
std::mutex g_graphs_mu;
std::condition_variable g_graphs_cv;
std::unordered_set<bp_graph_t*>& LiveGraphs() {
  static auto* graphs = new std::unordered_set<bp_graph_t*>();  // never destroyed: usable at exit
  return *graphs;
}
// The values callers hold (handle_table.h): a destroyed graph's value stays
// stale after a new graph takes its memory. Guarded by g_graphs_mu too.
HandleTable<bp_graph_t>& GraphTable() {
  static auto* table = new HandleTable<bp_graph_t>(0x7);  // streams 0x3, events 0x5
  return *table;
}

}  // namespace

void ForgetStreamInGraphs(DeviceState* dev, bp_stream_t stream) {
  std::lock_guard<std::mutex> lock(g_graphs_mu);
  for (bp_graph_t* g : LiveGraphs()) {
    if (g->dev != dev) continue;
    std::lock_guard<std::mutex> launched(g->launched_mu);
    auto& v = g->launched_on;
    v.erase(std::remove(v.begin(), v.end(), stream), v.end());
  }
}

}  // namespace bp::core

using namespace bp::core;

namespace {

Status StaleGraph(const bp_graph_t* value, HandleTable<bp_graph_t>::Found found, const char* fn) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", static_cast<const void*>(value));
  return Error(BP_STATUS_INVALID_ARGUMENT,
               std::string(fn) + ": graph " + buf + " is not a live graph (" +
                   (found == HandleTable<bp_graph_t>::Found::kStale
                        ? "a stale graph handle: that graph was destroyed)"
                        : "not a graph handle: bp_graph_end_capture never made it)"));
}

// Holds `graph` in use for a call's scope; bp_graph_destroy waits for it.
class GraphUse {
 public:
  GraphUse() = default;
  GraphUse(const GraphUse&) = delete;
  GraphUse& operator=(const GraphUse&) = delete;
  ~GraphUse() {
    if (graph_ == nullptr) return;
    std::lock_guard<std::mutex> lock(g_graphs_mu);
    if (--graph_->in_use == 0) g_graphs_cv.notify_all();
  }
  // Resolves the caller's handle value `in` to the graph (*out) and holds it.
  Status Acquire(const bp_graph_t* in, const char* fn, bp_graph_t** out) {
    std::lock_guard<std::mutex> lock(g_graphs_mu);
    HandleTable<bp_graph_t>::Found found;
    bp_graph_t* graph = GraphTable().Find(in, &found);
    if (graph == nullptr) return StaleGraph(in, found, fn);
    ++graph->in_use;
    graph_ = graph;
    *out = graph;
    return Status::Ok();
  }

 private:
  bp_graph_t* graph_ = nullptr;
};

// Resolves the caller's stream handle value (streams.cpp's rule: a stale or
// foreign value is refused without a dereference).
Status CheckGraphStream(const bp_stream_handle_t* in, const char* fn, bp_stream_handle_t** out) {
  if (in == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": stream is NULL");
  HandleTable<bp_stream_handle_t>::Found found;
  bp_stream_handle_t* s = StreamTable().Find(in, &found);
  if (s == nullptr || s->magic != kStreamMagic) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(fn) + ": stream " + HandleTable<bp_stream_handle_t>::Describe(in, found, "stream"));
  }
  *out = s;
  return Status::Ok();
}

Status WaitLaunches(bp_graph_t* g, const char* fn) {
  std::vector<bp_stream_t> streams;
  {
    std::lock_guard<std::mutex> lock(g->launched_mu);
    streams.swap(g->launched_on);
  }
  const bp_backend_t& t = g->dev->slot->table;
  if (t.stream_synchronize == nullptr) return Status::Ok();
  for (bp_stream_t s : streams) {
    const uint64_t serial = g_last_error_serial;
    const bp_status_t rc = t.stream_synchronize(t.backend_data, g->dev->index, s);
    if (rc != BP_STATUS_OK) {
      return PluginFailure(std::string(fn) + ": waiting for the graph's launches on device " + DeviceName(g->dev),
                           rc, serial);
    }
  }
  return Status::Ok();
}

}  // namespace

extern "C" {

BP_API bp_status_t bp_graph_begin_capture(bp_stream_handle_t* stream_in) {
  const char* fn = "bp_graph_begin_capture";
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckGraphStream(stream_in, fn, &stream));
    if (stream->is_default) {
      return Error(BP_STATUS_FAILED_PRECONDITION, std::string(fn) + ": stream is the default stream of device " +
                                                      DeviceName(stream->dev) +
                                                      "; capture needs a stream from bp_stream_create");
    }
    auto capture = std::make_unique<Capture>();
    capture->owner = std::this_thread::get_id();
    auto graph = std::make_unique<bp_graph_t>();
    graph->ctx = stream->ctx;
    graph->dev = stream->dev;
    capture->graph = graph.get();
    Capture* expected = nullptr;
    if (!stream->capture.compare_exchange_strong(expected, capture.get(), std::memory_order_acq_rel)) {
      return Error(BP_STATUS_FAILED_PRECONDITION,
                   std::string(fn) + ": stream of device " + DeviceName(stream->dev) + " is already being captured");
    }
    graph->pool = stream->dev->allocator->BeginCapture(stream->raw);
    graph.release();
    capture.release();
    return Status::Ok();
  });
}

BP_API bp_status_t bp_graph_end_capture(bp_stream_handle_t* stream_in, bp_graph_t** out_graph) {
  const char* fn = "bp_graph_end_capture";
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckGraphStream(stream_in, fn, &stream));
    BP_CHECK_ARG(out_graph != nullptr, fn, "out_graph is NULL");
    Capture* c = stream->capture.load(std::memory_order_acquire);
    if (c == nullptr || c->owner != std::this_thread::get_id()) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": stream of device " + DeviceName(stream->dev) +
                                                   (c == nullptr ? " is not being captured"
                                                                 : " is being captured by another thread"));
    }
    {
      // Under streams_mu: bp_device_synchronize reads the capture under it.
      std::lock_guard<std::mutex> lock(stream->dev->streams_mu);
      stream->capture.store(nullptr, std::memory_order_release);
    }
    std::unique_ptr<Capture> capture(c);
    std::unique_ptr<bp_graph_t> graph(c->graph);
    stream->dev->allocator->EndCapture(stream->raw);
    if (!c->error.empty()) {
      stream->dev->allocator->ReleaseCapture(graph->pool);
      return Error(BP_STATUS_FAILED_PRECONDITION, std::string(fn) + ": the capture was invalidated: " + c->error);
    }
    if (!stream->dev->slot->host_memory) {
      graph->plugin = stream->dev->slot->plugin;
      PluginRetain(graph->plugin);
    }
    uintptr_t value = 0;
    {
      std::lock_guard<std::mutex> lock(g_graphs_mu);
      LiveGraphs().insert(graph.get());
      value = GraphTable().Add(graph.get());
    }
    WatchGraphInputs(graph.get());  // graph_inputs.h
    graph.release();
    *out_graph = reinterpret_cast<bp_graph_t*>(value);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_graph_launch(bp_graph_t* graph_in, bp_stream_handle_t* stream_in) {
  const char* fn = "bp_graph_launch";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(graph_in != nullptr, fn, "graph is NULL");
    GraphUse use;
    bp_graph_t* graph = nullptr;
    BP_RETURN_IF_ERROR(use.Acquire(graph_in, fn, &graph));
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckGraphStream(stream_in, fn, &stream));
    if (stream->dev != graph->dev) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": the graph was captured on device " +
                                                   DeviceName(graph->dev) + ", the stream is of device " +
                                                   DeviceName(stream->dev));
    }
    if (stream->capture.load(std::memory_order_acquire) != nullptr) {
      return Error(BP_STATUS_FAILED_PRECONDITION,
                   std::string(fn) + ": the stream is being captured; launch on another stream");
    }
    BP_RETURN_IF_ERROR(CheckGraphInputsAlive(graph, fn));  // graph_inputs.h
    {
      std::lock_guard<std::mutex> lock(graph->launched_mu);
      if (std::find(graph->launched_on.begin(), graph->launched_on.end(), stream->raw) == graph->launched_on.end()) {
        graph->launched_on.push_back(stream->raw);
      }
    }
    const std::string& backend = graph->dev->slot->name;
    for (size_t i = 0; i < graph->nodes.size(); ++i) {
      GraphNode& n = *graph->nodes[i];
      if (n.host_op != nullptr) {
        Status st = ReplayHostNode(graph->ctx, stream, n);
        if (!st.ok()) {
          return Error(st.code(), std::string(fn) + ": node " + std::to_string(i) + " of " +
                                      std::to_string(graph->nodes.size()) + " (" + n.host_op->name +
                                      ", a CPU fallback): " + st.message());
        }
        continue;
      }
      bp_kernel_call_t call = {};
      call.struct_size = sizeof(call);
      call.op_name = n.op_name;
      call.args = n.args.data();
      call.num_args = static_cast<int32_t>(n.args.size());
      call.num_outputs = static_cast<int32_t>(n.outputs.size());
      call.outputs = n.outputs.data();
      call.stream = stream->raw;
      call.device_index = graph->dev->index;
      call.kernel_data = n.kernel_data;
      call.backend_data = n.backend_data;
      CallError slot;
      AttachCallError(&call, &slot);
      const bp_status_t rc = n.fn(&call);
      if (rc != BP_STATUS_OK) {
        Status st = KernelFailure(call, n.op_name, backend, rc);
        return Error(st.code(), std::string(fn) + ": node " + std::to_string(i) + " of " +
                                    std::to_string(graph->nodes.size()) + " (" + n.op_name + "): " + st.message());
      }
    }
    return Status::Ok();
  });
}

BP_API bp_status_t bp_graph_info(const bp_graph_t* graph_in, bp_graph_info_t* out_info) {
  const char* fn = "bp_graph_info";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(graph_in != nullptr && out_info != nullptr, fn, "graph and out_info must not be NULL");
    GraphUse use;
    bp_graph_t* graph = nullptr;
    BP_RETURN_IF_ERROR(use.Acquire(graph_in, fn, &graph));
    BP_RETURN_IF_ERROR(CheckStructSize(out_info, fn, "out_info"));
    bp_graph_info_t info{};
    info.struct_size = sizeof(info);
    info.num_nodes = static_cast<int64_t>(graph->nodes.size());
    for (const auto& n : graph->nodes) info.num_host_nodes += n->host_op != nullptr ? 1 : 0;
    CopyOutFitting(info, out_info);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_graph_destroy(bp_graph_t* graph_in) {
  const char* fn = "bp_graph_destroy";
  if (graph_in == nullptr) return BP_STATUS_OK;
  return ApiCall(fn, [&]() -> Status {
    bp_graph_t* graph = nullptr;
    {
      // Unlisted first (new calls are refused), then the calls already
      // running on it finish before it goes.
      std::unique_lock<std::mutex> lock(g_graphs_mu);
      HandleTable<bp_graph_t>::Found found;
      graph = GraphTable().Remove(graph_in, &found);
      if (graph == nullptr) return StaleGraph(graph_in, found, fn);
      LiveGraphs().erase(graph);
      g_graphs_cv.wait(lock, [&] { return graph->in_use == 0; });
    }
    Status st = WaitLaunches(graph, fn);
    UnwatchGraphInputs(graph);  // graph_inputs.h
    DeviceState* dev = graph->dev;
    dev->allocator->ReleaseCapture(graph->pool);
    bp_plugin_t* plugin = graph->plugin;
    delete graph;
    if (plugin != nullptr) PluginRelease(plugin);
    return st;
  });
}

}  // extern "C"
