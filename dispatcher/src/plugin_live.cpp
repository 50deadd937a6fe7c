// What bp_plugin_unload waits for: every object that calls the plugin's code
// or holds its memory (streams, events, pinned host blocks, communicators)
// must be gone first, or its next use would run unmapped code.
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "context.h"
#include "stream_handle.h"

namespace bp::core {

Status CheckNothingLiveOn(bp_context_t* ctx, const BackendSlot& slot, const char* fn) {
  if (slot.host_memory) return Status::Ok();  // the core's own streams and memory
  int64_t streams = 0, events = 0, pinned = 0;
  for (DeviceState* d : slot.devices) {
    {
      std::lock_guard<std::mutex> lock(d->streams_mu);
      streams += static_cast<int64_t>(d->streams.size());
    }
    events += d->live_events.load(std::memory_order_acquire);
  }
  {
    std::lock_guard<std::mutex> lock(ctx->pinned_mu);
    for (const auto& [at, b] : ctx->pinned) pinned += b.dev != nullptr && b.dev->slot == &slot ? 1 : 0;
  }
  const int64_t comms = CountLiveComms(slot);
  std::vector<std::string> alive;
  if (streams > 0) alive.push_back(std::to_string(streams) + " stream(s) from bp_stream_create");
  if (events > 0) alive.push_back(std::to_string(events) + " event(s) from bp_event_create");
  if (pinned > 0) alive.push_back(std::to_string(pinned) + " pinned host block(s) from bp_host_alloc");
  if (comms > 0) alive.push_back(std::to_string(comms) + " communicator(s) from bp_comm_create");
  if (alive.empty()) return Status::Ok();
  std::string list;
  for (size_t i = 0; i < alive.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == alive.size() ? " and " : ", ") + alive[i];
  }
  return Error(BP_STATUS_FAILED_PRECONDITION, std::string(fn) + ": backend '" + slot.name + "' still has " + list +
                                                  " alive (each calls the plugin's code); destroy them first");
}

}  // namespace bp::core
