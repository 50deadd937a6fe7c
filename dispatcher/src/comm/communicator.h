// Communicators (bp_comm_t) and their queued calls (bp_comm_work_t): the
// engine-neutral part of the collectives API. Each communicator runs its
// calls on one worker thread, in issue order, so every rank executes them
// in the order the ranks agreed on (NCCL's rule) while the caller goes on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backplane/backplane.h"
#include "context.h"
#include "status.h"

namespace bp::core {

// One collective as the engines see it. Tensors are retained by the queue
// until the call ran.
struct CollectiveCall {
  bp_collective_kind_t kind = BP_COLLECTIVE_BARRIER;
  bp_reduce_op_t op = BP_REDUCE_SUM;
  int32_t peer = -1;              // root of broadcast, the other rank of send/recv
  bp_tensor_t* input = nullptr;   // NULL for recv and barrier
  bp_tensor_t* output = nullptr;  // NULL for send and barrier
};

// "all_reduce", "broadcast", ...: the name every message uses.
const char* CollectiveName(bp_collective_kind_t kind);
const char* ReduceOpName(bp_reduce_op_t op);

// An engine runs collectives for one communicator, on its worker thread.
class CommEngine {
 public:
  virtual ~CommEngine() = default;
  // "gloo", or the backend's name for its native collectives.
  virtual const char* name() const = 0;
  // Runs `call` to completion (or failure within the timeout).
  virtual Status Run(const CollectiveCall& call) = 0;
};

// Completion of one queued call, shared by the queue and the caller's handle.
struct WorkState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status status;
  void Finish(Status s);
  Status Wait();
};

}  // namespace bp::core

struct bp_comm_work_t {
  std::shared_ptr<bp::core::WorkState> state;
};

struct bp_comm_t {
  bp_context_t* ctx = nullptr;
  bp_device_t device{};
  bp::core::DeviceState* dev = nullptr;
  int32_t rank = 0;
  int32_t world_size = 1;
  int64_t timeout_ms = 0;
  std::unique_ptr<bp::core::CommEngine> engine;

  // The worker's queue.
  struct Task {
    bp::core::CollectiveCall call;
    std::shared_ptr<bp::core::WorkState> work;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Task> queue;
  // Held while a call runs (by the worker, or by a caller running its call
  // inline); the worker pops a task only while holding it, so a caller that
  // holds it and sees an empty queue has no earlier call still pending.
  std::mutex exec_mu;
  bool stopping = false;
  std::thread worker;
  // Set by the first failed call: later calls fail at once with this.
  std::atomic<bool> broken{false};
  std::string broken_message;  // under mu
};

namespace bp::core {

// Starts the worker of a communicator whose engine is set.
void StartCommWorker(bp_comm_t* comm);
// Queues `call` (its tensors already retained) and returns its completion.
// FAILED_PRECONDITION when the communicator is broken (tensors released).
Status EnqueueCollective(bp_comm_t* comm, CollectiveCall call, std::shared_ptr<WorkState>* out);
// Runs `call` (tensors retained) on the calling thread when nothing is
// queued before it (a blocking call: no hand-off to the worker, whose two
// thread switches cost more than a small collective); else queues it and
// waits. Either way the call's status.
Status RunCollective(bp_comm_t* comm, CollectiveCall call);
// Waits for the queue to drain, stops the worker, frees the communicator.
void DestroyComm(bp_comm_t* comm);

// Live communicators: a destroyed handle is refused, not dereferenced.
void RegisterComm(const bp_comm_t* comm);
bool IsLiveComm(const bp_comm_t* comm);
void UnregisterComm(const bp_comm_t* comm);
// How many live communicators are on a device of `slot` (bp_plugin_unload
// refuses while any is: its engine and its tensors call the plugin).
int64_t CountLiveComms(const BackendSlot& slot);

// Engines. Each returns UNIMPLEMENTED with a reason when it cannot serve.
struct CommSetup {
  bp_comm_t* comm = nullptr;
  const bp_kv_store_t* store = nullptr;
  std::string prefix;  // of every store key
  std::string host;    // Gloo: this rank's address
  // The whole bootstrap ends by this time: each store wait gets what is left,
  // not a fresh timeout (a world of W ranks would otherwise wait W times).
  std::chrono::steady_clock::time_point deadline;
};
Status MakeGlooEngine(const CommSetup& setup, std::unique_ptr<CommEngine>* out);
Status MakeNativeEngine(const CommSetup& setup, std::unique_ptr<CommEngine>* out);
// Store helpers shared by the engines (the caller's callbacks, with the
// communicator's prefix and timeout, as Status).
Status StoreSet(const CommSetup& setup, const std::string& key, const void* data, size_t nbytes);
Status StoreGet(const CommSetup& setup, const std::string& key, std::string* out);

}  // namespace bp::core
