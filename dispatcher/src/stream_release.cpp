// Releasing a stream whatever state its work or capture is in
// (stream_release.h).
#include "stream_release.h"

#include <memory>
#include <string>

#include "context.h"
#include "graph.h"

namespace bp::core {

bool DiscardAbandonedCapture(bp_stream_handle_t* stream) {
  if (stream->capture.load(std::memory_order_acquire) == nullptr) return true;
  // Only a thread whose current stream this is records into the capture
  // (graph.h); with none left, nothing can touch it while it is discarded.
  if (stream->current_on.load(std::memory_order_acquire) > 0) return false;
  Capture* c = stream->capture.exchange(nullptr, std::memory_order_acq_rel);
  if (c == nullptr) return true;
  std::unique_ptr<Capture> capture(c);
  std::unique_ptr<bp_graph_t> graph(c->graph);
  stream->dev->allocator->EndCapture(stream->raw);
  stream->dev->allocator->ReleaseCapture(graph->pool);
  return true;
}

void LogReleasedDespite(const bp_stream_handle_t* stream, const char* fn, const Status& error) {
  LogMessage(stream->ctx, BP_LOG_WARNING,
             std::string(fn) + ": released the stream although its work ended with an error (" + error.message() +
                 ")");
}

}  // namespace bp::core
