// The registry of graph inputs (graph_inputs.h).
#include "graph_inputs.h"

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "allocator.h"
#include "graph.h"

namespace bp::core {
namespace {

struct Watch {
  const DeviceState* dev = nullptr;
  void* pool = nullptr;  // the graph's private pool: its blocks stay the graph's
  // Address -> where the graph uses it ("node 2 (relu), argument 0").
  std::unordered_map<const void*, std::string> uses;
  std::string released;  // the first use whose memory was released
};

std::mutex& Mu() {
  static std::mutex mu;
  return mu;
}
std::map<const bp_graph_t*, Watch>& Watches() {
  static std::map<const bp_graph_t*, Watch> w;
  return w;
}

}  // namespace

void WatchGraphInputs(bp_graph_t* graph) {
  Watch w;
  w.dev = graph->dev;
  w.pool = graph->pool;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const GraphNode& n = *graph->nodes[i];
    if (n.host_op != nullptr) continue;  // host nodes hold their tensors
    const std::string node = "node " + std::to_string(i) + " (" + (n.op_name ? n.op_name : "?") + ")";
    for (size_t k = 0; k < n.args.size(); ++k) {
      if (n.args[k].kind == BP_VALUE_TENSOR && n.args[k].u.tensor != nullptr && n.args[k].u.tensor->data != nullptr) {
        w.uses.emplace(n.args[k].u.tensor->data, node + ", argument " + std::to_string(k));
      }
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] != nullptr && n.outputs[k]->data != nullptr) {
        w.uses.emplace(n.outputs[k]->data, node + ", output " + std::to_string(k));
      }
    }
  }
  if (w.uses.empty()) return;
  std::lock_guard<std::mutex> lock(Mu());
  if (Watches().emplace(graph, std::move(w)).second) g_watched_graphs.fetch_add(1, std::memory_order_relaxed);
}

void UnwatchGraphInputs(bp_graph_t* graph) {
  std::lock_guard<std::mutex> lock(Mu());
  if (Watches().erase(graph) != 0) g_watched_graphs.fetch_sub(1, std::memory_order_relaxed);
}

void NoteStorageFreed(const DeviceState* dev, const Block* block) {
  std::lock_guard<std::mutex> lock(Mu());
  for (auto& [graph, w] : Watches()) {
    if (w.dev != dev || block->home == w.pool || !w.released.empty()) continue;
    auto it = w.uses.find(block->ptr);
    if (it != w.uses.end()) w.released = it->second;
  }
}

Status CheckGraphInputsAlive(bp_graph_t* graph, const char* fn) {
  if (g_watched_graphs.load(std::memory_order_relaxed) == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(Mu());
  auto it = Watches().find(graph);
  if (it == Watches().end() || it->second.released.empty()) return Status::Ok();
  return Error(BP_STATUS_FAILED_PRECONDITION,
               std::string(fn) + ": a tensor the graph captured was released after the capture (" +
                   it->second.released +
                   "); its memory may now belong to another tensor, so the graph cannot be replayed; keep the "
                   "captured tensors alive as long as the graph is launched, or capture again");
}

}  // namespace bp::core
