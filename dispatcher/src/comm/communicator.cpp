// The communicator's worker, its queue and the registry of live handles.
#include "comm/communicator.h"

#include <algorithm>
#include <chrono>
#include <unordered_set>
#include <utility>

#include "tensor.h"

namespace bp::core {

const char* CollectiveName(bp_collective_kind_t kind) {
  switch (kind) {
    case BP_COLLECTIVE_ALL_REDUCE:
      return "all_reduce";
    case BP_COLLECTIVE_BROADCAST:
      return "broadcast";
    case BP_COLLECTIVE_ALL_GATHER:
      return "all_gather";
    case BP_COLLECTIVE_REDUCE_SCATTER:
      return "reduce_scatter";
    case BP_COLLECTIVE_ALL_TO_ALL:
      return "all_to_all";
    case BP_COLLECTIVE_SEND:
      return "send";
    case BP_COLLECTIVE_RECV:
      return "recv";
    case BP_COLLECTIVE_BARRIER:
      return "barrier";
  }
  return "collective";
}

const char* ReduceOpName(bp_reduce_op_t op) {
  switch (op) {
    case BP_REDUCE_SUM:
      return "sum";
    case BP_REDUCE_PROD:
      return "prod";
    case BP_REDUCE_MIN:
      return "min";
    case BP_REDUCE_MAX:
      return "max";
    case BP_REDUCE_AVG:
      return "avg";
  }
  return "unknown";
}

void WorkState::Finish(Status s) {
  {
    std::lock_guard<std::mutex> lock(mu);
    status = std::move(s);
    done = true;
  }
  cv.notify_all();
}

Status WorkState::Wait() {
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [this] { return done; });
  return status;
}

namespace {

void ReleaseCall(CollectiveCall& call) {
  if (call.input != nullptr) TensorRelease(call.input);
  if (call.output != nullptr && call.output != call.input) TensorRelease(call.output);
  call.input = call.output = nullptr;
}

// Runs one call under exec_mu; a failure breaks the communicator.
Status Execute(bp_comm_t* comm, CollectiveCall& call) {
  Status st;
  if (comm->broken.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(comm->mu);
    st = Error(BP_STATUS_FAILED_PRECONDITION, std::string(CollectiveName(call.kind)) +
                                                  ": the communicator is broken by an earlier failure (" +
                                                  comm->broken_message + "); destroy it");
  } else {
    try {
      st = comm->engine->Run(call);
    } catch (const std::exception& e) {
      st = Error(BP_STATUS_INTERNAL, std::string(CollectiveName(call.kind)) + ": internal error: " + e.what());
    }
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(comm->mu);
      comm->broken_message = st.message();
      comm->broken.store(true, std::memory_order_release);
    }
  }
  ReleaseCall(call);
  return st;
}

void WorkerLoop(bp_comm_t* comm) {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(comm->mu);
      comm->cv.wait(lock, [comm] { return comm->stopping || !comm->queue.empty(); });
      if (comm->queue.empty()) return;  // stopping, and everything ran
    }
    std::lock_guard<std::mutex> exec(comm->exec_mu);
    bp_comm_t::Task task;
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      task = std::move(comm->queue.front());
      comm->queue.pop_front();
    }
    Status st = Execute(comm, task.call);
    task.work->Finish(std::move(st));
  }
}

std::mutex g_live_mu;
std::unordered_set<const bp_comm_t*>& LiveComms() {
  static auto* live = new std::unordered_set<const bp_comm_t*>();  // never destroyed: usable at exit
  return *live;
}

}  // namespace

void StartCommWorker(bp_comm_t* comm) { comm->worker = std::thread(WorkerLoop, comm); }

Status EnqueueCollective(bp_comm_t* comm, CollectiveCall call, std::shared_ptr<WorkState>* out) {
  if (comm->broken.load(std::memory_order_acquire)) {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      why = comm->broken_message;
    }
    ReleaseCall(call);
    return Error(BP_STATUS_FAILED_PRECONDITION, std::string("bp_comm_") + CollectiveName(call.kind) +
                                                    ": the communicator is broken by an earlier failure (" + why +
                                                    "); destroy it");
  }
  auto work = std::make_shared<WorkState>();
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    comm->queue.push_back(bp_comm_t::Task{call, work});
  }
  comm->cv.notify_one();
  *out = std::move(work);
  return Status::Ok();
}

Status RunCollective(bp_comm_t* comm, CollectiveCall call) {
  {
    std::unique_lock<std::mutex> exec(comm->exec_mu);
    bool empty;
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      empty = comm->queue.empty();
    }
    if (empty) return Execute(comm, call);
  }
  std::shared_ptr<WorkState> work;
  BP_RETURN_IF_ERROR(EnqueueCollective(comm, call, &work));
  return work->Wait();
}

void DestroyComm(bp_comm_t* comm) {
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    comm->stopping = true;
  }
  comm->cv.notify_all();
  if (comm->worker.joinable()) comm->worker.join();
  comm->engine.reset();
  delete comm;
}

void RegisterComm(const bp_comm_t* comm) {
  std::lock_guard<std::mutex> lock(g_live_mu);
  LiveComms().insert(comm);
}

bool IsLiveComm(const bp_comm_t* comm) {
  std::lock_guard<std::mutex> lock(g_live_mu);
  return LiveComms().count(comm) != 0;
}

int64_t CountLiveComms(const BackendSlot& slot) {
  std::lock_guard<std::mutex> lock(g_live_mu);
  int64_t n = 0;
  for (const bp_comm_t* c : LiveComms()) n += c->dev != nullptr && c->dev->slot == &slot ? 1 : 0;
  return n;
}

void UnregisterComm(const bp_comm_t* comm) {
  std::lock_guard<std::mutex> lock(g_live_mu);
  LiveComms().erase(comm);
}

Status StoreSet(const CommSetup& setup, const std::string& key, const void* data, size_t nbytes) {
  const std::string full = setup.prefix + "/" + key;
  const uint64_t serial = g_last_error_serial;
  const bp_status_t rc = setup.store->set(setup.store->user_data, full.c_str(), data, nbytes);
  if (rc == BP_STATUS_OK) return Status::Ok();
  std::string msg = PluginMessageSince(serial);
  return Error(PluginStatus(rc), "bp_comm_create: the key-value store's set(\"" + full + "\") failed" +
                                     (msg.empty() ? std::string() : ": " + msg));
}

Status StoreGet(const CommSetup& setup, const std::string& key, std::string* out) {
  const std::string full = setup.prefix + "/" + key;
  const int64_t timeout = setup.comm->timeout_ms;
  out->assign(256, '\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int64_t left = std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(setup.deadline - std::chrono::steady_clock::now())
               .count());
    size_t n = 0;
    const uint64_t serial = g_last_error_serial;
    const bp_status_t rc = setup.store->get(setup.store->user_data, full.c_str(), &(*out)[0], out->size(), &n, left);
    if (rc != BP_STATUS_OK) {
      std::string msg = PluginMessageSince(serial);
      return Error(PluginStatus(rc), "bp_comm_create: rank " + std::to_string(setup.comm->rank) + " waited for key \"" +
                                         full + "\" of the key-value store" +
                                         (rc == BP_STATUS_DEADLINE_EXCEEDED
                                              ? " until the communicator's timeout of " + std::to_string(timeout) +
                                                    " ms ran out (a rank did not arrive)"
                                              : std::string(" and failed")) +
                                         (msg.empty() ? std::string() : ": " + msg));
    }
    if (n <= out->size()) {
      out->resize(n);
      return Status::Ok();
    }
    out->assign(n, '\0');  // larger than guessed: read again with room for it
  }
  return Error(BP_STATUS_INTERNAL, "bp_comm_create: the value of \"" + full + "\" kept growing");
}

}  // namespace bp::core
