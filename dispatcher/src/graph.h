// Graph capture and replay (backplane/streams.h): while a stream is
// captured, every kernel call that runs on it is also recorded here, resolved
// (kernel function, its data, arguments with fixed addresses and shapes), so
// bp_graph_launch replays the calls without dispatch. graph.cpp has the C API.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "context.h"
#include "status.h"

namespace bp::core {

// One recorded kernel call; owns copies of everything the call pointed at.
// Or a host node: an operator the CPU fallback served during the capture,
// replayed by running the fallback again on the captured tensors (retained)
// and copying its results into the captured results.
struct GraphNode {
  GraphNode() = default;
  GraphNode(const GraphNode&) = delete;
  GraphNode& operator=(const GraphNode&) = delete;
  ~GraphNode();
  const bp_op_t* host_op = nullptr;  // a host node when set
  bool host_copy = false;            // a host copy: copy_(host_results[0], host_results[1])
  std::vector<bp_value_t> host_args;
  std::vector<bp_tensor_t*> host_results;
  std::deque<std::vector<bp_tensor_t*>> host_lists;
  bp_kernel_fn fn = nullptr;
  void* kernel_data = nullptr;
  void* backend_data = nullptr;
  const char* op_name = nullptr;  // static while the operator exists
  std::vector<bp_kernel_arg_t> args;
  std::vector<DLTensor*> outputs;
  // What args and outputs point at (deques: stable addresses as they grow).
  std::deque<DLTensor> tensors;
  std::deque<std::vector<int64_t>> ints;
  std::deque<std::vector<const DLTensor*>> lists;
  std::deque<std::string> strings;
};

// A capture in progress, hung on its stream's handle.
struct Capture {
  std::thread::id owner;          // the thread that began it
  bp_graph_t* graph = nullptr;    // being recorded
  std::mutex mu;                  // guards error
  std::string error;              // the first call that invalidated it
};

// Records the kernel call that just ran on `stream` (being captured).
// FAILED_PRECONDITION when the calling thread is not the one capturing (the
// capture is invalidated).
Status RecordKernelCall(bp_stream_handle_t* stream, bp_kernel_fn fn, const bp_kernel_call_t& call);

// Runs the CPU fallback of `op` on `dev` while `stream` is captured (its
// copies and synchronizes are the node's own) and records it as a host node.
Status CaptureHostFallback(bp_context_t* ctx, bp_stream_handle_t* stream, const bp_op_t* op, const bp_value_t* args,
                           int32_t num_args, DeviceState* dev, bp_tensor_t** out_results, int32_t num_results);

// Runs `run`, a copy the core makes through the host (copy_ with no kernel,
// or between devices), while `stream` is captured, and records it as a host
// node that makes copy_(dst, src) again at replay.
Status CaptureHostCopy(bp_context_t* ctx, bp_stream_handle_t* stream, bp_tensor_t* dst, bp_tensor_t* src,
                       const std::function<Status()>& run);

// OK unless the calling thread's current stream of `dev` is being captured;
// then the capture is invalidated and the error names `what` (work that must
// reach the host, which a graph cannot hold).
Status RefuseDuringCapture(const DeviceState* dev, const std::string& what);

// As RefuseDuringCapture, for any stream of `dev` the calling thread is
// capturing (current or not): a host wait (bp_event_synchronize) cannot be
// part of a graph.
Status RefuseWhileThisThreadCaptures(DeviceState* dev, const std::string& what);

// Invalidates every capture in progress on `dev` (the caller holds
// dev->streams_mu, under which captures end) with `why`.
void InvalidateCapturesLocked(DeviceState* dev, const std::string& why);

// bp_stream_destroy of `stream` (synchronized, so every graph launch on it
// has finished): graphs of `dev` forget it, so their destroy never waits on
// a freed backend stream.
void ForgetStreamInGraphs(DeviceState* dev, bp_stream_t stream);

}  // namespace bp::core

struct bp_graph_t {
  bp_context_t* ctx = nullptr;
  bp::core::DeviceState* dev = nullptr;
  void* pool = nullptr;  // the allocator's private pool (BeginCapture)
  bp_plugin_t* plugin = nullptr;  // retained: the nodes call its code
  std::vector<std::unique_ptr<bp::core::GraphNode>> nodes;
  std::mutex launched_mu;
  std::vector<bp_stream_t> launched_on;  // streams to wait for at destroy
  // bp_graph_launch / bp_graph_info calls running on it (under graph.cpp's
  // registry lock): bp_graph_destroy waits until none is.
  int32_t in_use = 0;
};
