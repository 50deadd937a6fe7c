// Captured inputs released before a replay (issue 42 item 18). A graph's
// nodes hold fixed addresses; memory the graph's own pool did not provide (a
// tensor made before the capture) goes back to the caching allocator when
// its tensor is released, and a replay would then read or write whatever
// tensor took it. Each graph watches the addresses its kernel nodes use;
// freeing one marks the graph, and bp_graph_launch refuses it with
// FAILED_PRECONDITION naming the node, the operator and the argument.
#pragma once

#include <atomic>
#include <string>

#include "status.h"

struct bp_graph_t;

namespace bp::core {

struct Block;
struct DeviceState;

// Number of graphs being watched: the storage release path checks it first
// (one relaxed load) and calls NoteStorageFreed only while it is nonzero.
inline std::atomic<int64_t> g_watched_graphs{0};

// Starts watching the memory of `graph`'s kernel nodes (bp_graph_end_capture).
void WatchGraphInputs(bp_graph_t* graph);
// Stops watching (bp_graph_destroy). Idempotent.
void UnwatchGraphInputs(bp_graph_t* graph);
// Called when a storage's block goes back to `dev`'s allocator.
void NoteStorageFreed(const DeviceState* dev, const Block* block);
// FAILED_PRECONDITION for `fn` when an input of `graph` was released.
Status CheckGraphInputsAlive(bp_graph_t* graph, const char* fn);

}  // namespace bp::core
