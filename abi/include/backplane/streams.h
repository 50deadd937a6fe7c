/*
 * Streams and events for host applications (ABI 1.4). Pure C99; included by
 * backplane.h (use that header). Semantics: docs/streams.md, modelled on
 * PyTorch's CUDA semantics (torch.cuda.Stream, Event, record_stream) and
 * PJRT's event rules.
 *
 * A stream is an in-order queue of work on one device. Every device has a
 * default stream; bp_stream_create makes more where the backend supports it.
 * Each thread has a current stream per device (initially the default):
 * operator calls, bp_op_call and call plans alike, enqueue their kernels on
 * the current stream of the device they run on, and the copies of
 * bp_tensor_from_host, bp_tensor_to_host, copy_ and fallbacks use it too.
 *
 * What is ordered: work enqueued on one stream runs in enqueue order. Work on
 * two streams is unordered unless an event orders it: bp_event_record(e, a)
 * then bp_stream_wait_event(b, e) makes work enqueued on b afterwards wait
 * for what preceded the record on a. Who waits where: bp_tensor_to_host and
 * bp_tensor_from_host return with the data copied (they synchronize the
 * current stream); operator calls return once their work is enqueued;
 * bp_stream_synchronize, bp_event_synchronize and bp_device_synchronize (every
 * stream of the device) block the host.
 *
 * Memory: the caching allocator hands a freed block to new allocations on
 * the stream it was allocated on at once (stream order makes that safe). A
 * tensor used on another stream must be marked with bp_tensor_record_stream;
 * its block then returns to the cache only once the work enqueued on those
 * streams before the free has finished (PyTorch's record_stream rule).
 *
 * Handles are owned by the caller and belong to one context; they must be
 * destroyed before it. Functions are thread-safe, except that a stream's
 * handle must not be destroyed while another thread uses it.
 *
 * Stream and event handles are opaque values, not addresses: an index in a
 * process-wide table plus a generation (as IREE's and Unified Runtime's
 * handles). Any call given the handle of a destroyed stream or event fails
 * with INVALID_ARGUMENT ("... is a stale stream handle") without touching
 * freed memory, also after a new stream or event took its place; a handle of
 * one kind passed as the other is refused the same way. A plugin cannot be
 * unloaded while its streams, events or pinned blocks (or communicators,
 * comm.h) live: bp_plugin_unload fails with FAILED_PRECONDITION naming how
 * many of each kind remain.
 */
#ifndef BACKPLANE_STREAMS_H_
#define BACKPLANE_STREAMS_H_

#ifdef __cplusplus
extern "C" {
#endif

/* A stream of a device as the host sees it (wraps the backend's bp_stream_t).
 * From bp_stream_create (owned by the caller: bp_stream_destroy) or
 * bp_stream_get_default (owned by the context; destroying it is an error). */
typedef struct bp_stream_handle_t bp_stream_handle_t;
/* An event of a device (wraps the backend's bp_event_t); owned by the caller. */
typedef struct bp_event_handle_t bp_event_handle_t;

/* A new stream on `device`. Errors: INVALID_ARGUMENT (NULL), NOT_FOUND (no
 * such device), UNIMPLEMENTED (the backend has only its default stream: its
 * plugin leaves stream_create NULL), and what the backend reports. */
BP_API bp_status_t bp_stream_create(bp_context_t* context, bp_device_t device,
                                    bp_stream_handle_t** out_stream);
/* Waits for the stream's queued work (nothing enqueued is lost), then frees
 * it. What still names the stream forgets it, safely because its work has
 * finished: graphs launched on it (bp_graph_destroy no longer waits for it)
 * and tensors bp_tensor_record_stream marked as used on it (their free no
 * longer waits for it). Accepts NULL. A fault of that work (docs/streams.md
 * "Asynchronous errors") never keeps the stream: it is freed and the fault
 * logged as a WARNING. A capture whose thread no longer has the stream
 * current (it exited without bp_graph_end_capture) is discarded. Errors:
 * INVALID_ARGUMENT (a stale handle: already destroyed, even if a new stream
 * took its place; not a stream handle), FAILED_PRECONDITION (the default
 * stream; a stream being captured by a live thread; a stream that is some
 * thread's current stream: that thread must set another first; a context
 * created before fork(), in the child), and what the backend's
 * stream_destroy reports. */
BP_API bp_status_t bp_stream_destroy(bp_stream_handle_t* stream);
/* The device's default stream; owned by the context, valid until it is
 * destroyed. Errors: INVALID_ARGUMENT (NULL), NOT_FOUND (no such device). */
BP_API bp_status_t bp_stream_get_default(bp_context_t* context, bp_device_t device,
                                         bp_stream_handle_t** out_stream);
/* The device the stream belongs to. Errors: INVALID_ARGUMENT (NULL). */
BP_API bp_status_t bp_stream_device(const bp_stream_handle_t* stream, bp_device_t* out_device);
/* Blocks until all work enqueued on the stream has finished. A fault of that
 * work on the device is reported here, naming the operator, and again by
 * every later synchronize of the stream (sticky; docs/streams.md
 * "Asynchronous errors"). */
BP_API bp_status_t bp_stream_synchronize(bp_stream_handle_t* stream);
/* Makes `stream` the calling thread's current stream of its device (as
 * torch.cuda.set_stream); pass the default stream to go back. Other threads
 * and other devices are unaffected. Errors: INVALID_ARGUMENT (NULL). */
BP_API bp_status_t bp_set_current_stream(bp_stream_handle_t* stream);
/* The calling thread's current stream of `device` (its default stream unless
 * bp_set_current_stream chose another). Errors: INVALID_ARGUMENT, NOT_FOUND. */
BP_API bp_status_t bp_get_current_stream(bp_context_t* context, bp_device_t device,
                                         bp_stream_handle_t** out_stream);

/* A new event on `device`, not yet recorded (a query reports it complete).
 * Errors: INVALID_ARGUMENT, NOT_FOUND, UNIMPLEMENTED (the backend has no
 * events: its event slots are NULL). */
BP_API bp_status_t bp_event_create(bp_context_t* context, bp_device_t device,
                                   bp_event_handle_t** out_event);
/* Frees the event; work waiting on it is not affected. Accepts NULL.
 * Errors: INVALID_ARGUMENT (a stale handle: already destroyed, even if a new
 * event took its place; not an event handle). */
BP_API bp_status_t bp_event_destroy(bp_event_handle_t* event);
/* Captures the work enqueued on `stream` so far: the event completes when
 * that work has finished. Re-recording replaces the previous capture.
 * Errors: INVALID_ARGUMENT (NULL; the stream is on another device),
 * FAILED_PRECONDITION (the stream is being captured: events are not captured
 * into graphs, so the capture is invalidated). */
BP_API bp_status_t bp_event_record(bp_event_handle_t* event, bp_stream_handle_t* stream);
/* Work enqueued on `stream` after this call waits for the event's captured
 * work; the host does not wait (as cudaStreamWaitEvent). Errors:
 * INVALID_ARGUMENT (NULL; the event is of another device),
 * FAILED_PRECONDITION (the stream is being captured; the capture is
 * invalidated). */
BP_API bp_status_t bp_stream_wait_event(bp_stream_handle_t* stream, bp_event_handle_t* event);
/* Blocks until the event's captured work has finished. Errors:
 * FAILED_PRECONDITION when the calling thread is capturing a stream of the
 * event's device (a host wait cannot be part of a graph; the capture is
 * invalidated). */
BP_API bp_status_t bp_event_synchronize(bp_event_handle_t* event);
/* *out_complete = 1 when the captured work has finished (or the event was
 * never recorded), else 0; never blocks where the backend has event_query. */
BP_API bp_status_t bp_event_query(bp_event_handle_t* event, int32_t* out_complete);
/* Milliseconds between the completion of two recorded events of one device.
 * Errors: INVALID_ARGUMENT (NULL; events of two devices), FAILED_PRECONDITION
 * (either not recorded or not complete), UNIMPLEMENTED (no event timing). */
BP_API bp_status_t bp_event_elapsed_time(bp_event_handle_t* start, bp_event_handle_t* end,
                                         float* out_ms);

/* Marks `tensor`'s memory as used by work on `stream` (as
 * Tensor.record_stream): when the last reference to the storage is released,
 * its block is reused only after the work enqueued on `stream` before that
 * release has finished. Needed only for a stream other than the one the
 * storage was allocated on. Errors: INVALID_ARGUMENT (NULL; another device).
 * A tensor the caching allocator does not own (DLPack import) is accepted
 * and ignored: its owner decides when its memory is reused. */
BP_API bp_status_t bp_tensor_record_stream(bp_tensor_t* tensor, bp_stream_handle_t* stream);

/* The caching allocator's counters for the blocks owned by one stream (the
 * stream they were allocated on): allocated_bytes, cache_hits and
 * device_allocations count that stream's blocks; reserved_bytes what they
 * hold, cached or in use; peak_allocated_bytes its peak. Blocks waiting for
 * another stream's work (record_stream) count as allocated until then.
 * Errors: INVALID_ARGUMENT (NULL, struct_size too small). */
BP_API bp_status_t bp_stream_allocator_stats(bp_stream_handle_t* stream,
                                             bp_allocator_stats_t* out_stats);

/* ---- Pinned host memory and asynchronous copies ---------------------------
 * bp_tensor_to_host and bp_tensor_from_host wait for their copy. The async
 * variants enqueue it on the calling thread's current stream and return: the
 * host memory is from bp_host_alloc (page-locked where the backend provides
 * it, so the device copies it without staging), the data is there (or may be
 * overwritten) once the stream's work up to the call has finished: after
 * bp_stream_synchronize, or an event recorded after it completes. */

/* `nbytes` of host memory for asynchronous copies with `device`, from a
 * caching allocator (one per device; blocks are reused). Owned by the caller
 * until bp_host_free. nbytes == 0 gives NULL. Errors: INVALID_ARGUMENT
 * (NULL), NOT_FOUND (no such device), OUT_OF_MEMORY. */
BP_API bp_status_t bp_host_alloc(bp_context_t* context, bp_device_t device, size_t nbytes, void** out_ptr);
/* Gives the block back. Safe while an asynchronous copy with it is still
 * queued: the block is reused only once the streams that used it have passed
 * those copies. Accepts NULL. Errors: INVALID_ARGUMENT (a pointer
 * bp_host_alloc did not return, or freed twice). */
BP_API bp_status_t bp_host_free(bp_context_t* context, void* ptr);
/* Enqueues a copy of the contiguous `tensor`'s bytes (`nbytes` ==
 * numel * itemsize) into `dst` on the current stream of the tensor's device,
 * and returns. `dst` must lie inside one bp_host_alloc block of that device.
 * Errors: INVALID_ARGUMENT (NULL; a non-contiguous tensor: make it
 * contiguous or use bp_tensor_to_host; nbytes; dst not from bp_host_alloc
 * for this device), and what the backend reports. Nothing is written on error. */
BP_API bp_status_t bp_tensor_to_host_async(const bp_tensor_t* tensor, void* dst, size_t nbytes);
/* Enqueues a copy of `nbytes` (== numel * itemsize) from `src` into the
 * contiguous `tensor` on the current stream of its device, and returns; `src`
 * (inside one bp_host_alloc block of that device) must not change until the
 * stream has passed the copy. Errors as bp_tensor_to_host_async. */
BP_API bp_status_t bp_tensor_from_host_async(bp_tensor_t* tensor, const void* src, size_t nbytes);

/* ---- Graph capture and replay -------------------------------------------
 * As CUDA graphs: the kernels a stream runs between begin and end capture
 * are recorded, resolved (route, kernel, arguments, fixed addresses and
 * shapes), and bp_graph_launch enqueues them again, without dispatch, on any
 * stream of the device. Unlike CUDA, the captured work also runs once while
 * it is captured, so the tensors computed during capture hold its results.
 * Work is captured from the thread that began the capture, for the operator
 * calls it makes while the stream is its current stream. Memory allocated
 * during capture comes from a pool the graph keeps (freed blocks return to
 * it), so a replay never writes memory a tensor outside the graph holds;
 * tensors made before the capture must outlive the graph (a replay reads
 * and writes them at their captured addresses).
 * An operator the CPU fallback serves, and a copy the core stages through
 * the host, become host nodes: replayed by running them again on the launch
 * stream (they synchronize it), so every backend can capture a model it
 * lacks kernels for. What ends a capture with an error (the call fails with
 * FAILED_PRECONDITION, and bp_graph_end_capture reports it): reading or
 * writing device memory from the host (bp_tensor_to_host,
 * bp_tensor_from_host, a value an operator reads back), synchronizing the
 * stream or the device (bp_device_synchronize from any thread invalidates
 * every capture on the device, as CUDA does), recording or waiting for an
 * event on the stream, bp_event_synchronize by the capturing thread, and
 * another thread enqueueing on the stream.
 *
 * Graph functions are thread-safe: a graph may be launched from several
 * threads, and bp_graph_destroy called while another thread launches it
 * waits for that launch to return; calls that start after the destroy began
 * fail with INVALID_ARGUMENT ("not a live graph"). */

/* A captured graph; owned by the caller (bp_graph_destroy). The value is a
 * generation-checked handle, not an address (as stream and event handles):
 * a destroyed graph's value is refused ("a stale graph handle") even after a
 * new graph was made, and never reaches another graph. */
typedef struct bp_graph_t bp_graph_t;

/* Starts capturing `stream`. Errors: INVALID_ARGUMENT (NULL),
 * FAILED_PRECONDITION (the default stream: capture needs a stream from
 * bp_stream_create; the stream is already being captured). */
BP_API bp_status_t bp_graph_begin_capture(bp_stream_handle_t* stream);
/* Ends the capture of `stream` and returns the graph (owned by the caller).
 * The stream leaves capture mode whatever the result. Errors:
 * INVALID_ARGUMENT (NULL; the stream is not being captured),
 * FAILED_PRECONDITION (the capture was invalidated: the message names the
 * call that did it; no graph is returned). */
BP_API bp_status_t bp_graph_end_capture(bp_stream_handle_t* stream, bp_graph_t** out_graph);
/* Enqueues the graph's kernels on `stream`, in captured order; returns once
 * they are enqueued. Errors: INVALID_ARGUMENT (NULL; a stream of another
 * device), FAILED_PRECONDITION (the stream is being captured), and a
 * kernel's error, naming the node index and the operator. */
BP_API bp_status_t bp_graph_launch(bp_graph_t* graph, bp_stream_handle_t* stream);
/* What a graph holds. */
typedef struct bp_graph_info_t {
  size_t struct_size;
  int64_t num_nodes;       /* kernel calls and host nodes, in launch order */
  int64_t num_host_nodes;  /* of them, host nodes: CPU fallbacks and copies the
                            * core made through the host, replayed by running
                            * them again (each synchronizes the launch stream) */
} bp_graph_info_t;

/* Fills `out_info` (struct_size preset). Errors: INVALID_ARGUMENT (NULL,
 * struct_size too small). */
BP_API bp_status_t bp_graph_info(const bp_graph_t* graph, bp_graph_info_t* out_info);
/* Waits for bp_graph_launch calls running on the graph in other threads to
 * return, and for its launches' work on streams that still exist, then frees
 * it and its private memory pool (blocks still held by tensors return to the
 * stream's pool when freed). Accepts NULL. Errors: INVALID_ARGUMENT (a graph
 * already destroyed, or never made), and a failing wait on a launch stream. */
BP_API bp_status_t bp_graph_destroy(bp_graph_t* graph);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_STREAMS_H_ */
