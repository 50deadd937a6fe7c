// What bp_stream_destroy does so that a stream can always be released
// (issue 42 item 15, docs/streams.md "Asynchronous errors"): a capture whose
// thread went away is discarded, and a sticky device error found while
// draining the stream is logged rather than keeping the stream alive.
#pragma once

#include "status.h"
#include "stream_handle.h"

namespace bp::core {

// Ends and discards the capture of `stream` when no thread can record into
// it any more (no thread has the stream as its current stream: the thread
// that began it exited or moved on); returns true then, or when there was no
// capture. False: a thread still captures through it.
bool DiscardAbandonedCapture(bp_stream_handle_t* stream);

// Logs (context log, WARNING) that `fn` released `stream` although draining
// it failed with `error` (a sticky asynchronous fault): the handle goes, the
// fault is not lost silently.
void LogReleasedDespite(const bp_stream_handle_t* stream, const char* fn, const Status& error);

}  // namespace bp::core
