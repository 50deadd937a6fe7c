// Graph capture and replay (backplane/streams.h): while a stream is
// captured, every kernel call that runs on it is also recorded here, resolved
// (kernel function, its data, arguments with fixed addresses and shapes), so
// bp_graph_launch replays the calls without dispatch. graph.cpp has the C API.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "context.h"
#include "status.h"

namespace bp::core {

// One recorded kernel call; owns copies of everything the call pointed at.
struct GraphNode {
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

// OK unless the calling thread's current stream of `dev` is being captured;
// then the capture is invalidated and the error names `what` (work that must
// reach the host, which a graph cannot hold).
Status RefuseDuringCapture(const DeviceState* dev, const std::string& what);

}  // namespace bp::core

struct bp_graph_t {
  bp_context_t* ctx = nullptr;
  bp::core::DeviceState* dev = nullptr;
  void* pool = nullptr;  // the allocator's private pool (BeginCapture)
  bp_plugin_t* plugin = nullptr;  // retained: the nodes call its code
  std::vector<std::unique_ptr<bp::core::GraphNode>> nodes;
  std::mutex launched_mu;
  std::vector<bp_stream_t> launched_on;  // streams to wait for at destroy
};
