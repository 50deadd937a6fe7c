// Constant weights kept in oneDNN's layout: reordered once, reused on every
// later call that carries the same constant storage (BP_KERNEL_ARG_CONSTANT,
// ABI 1.5). ONNX Runtime pre-packs initializers at session creation and
// PyTorch prepacks for mkldnn; here the key is the host's constant-storage
// id, so no prepack operator is needed and a non-constant weight simply
// takes the per-call reorder.
#pragma once

#include <cstdint>
#include <functional>

#include "oneapi/dnnl/dnnl.hpp"

namespace bp_cpu {

/// The weights of view `user` (plain layout at `data`) of the constant
/// storage `id` in layout `want`: from the cache, or reordered now (on
/// `stream`, waited for) and kept. The cache holds at most
/// BP_CPU_PACKED_WEIGHTS_MB MiB (default 512; 0 turns it off), dropping the
/// least recently used entries first; an entry larger than the whole budget
/// is reordered for this call only. The returned memory stays valid while
/// the caller holds it, even if it is evicted meanwhile.
/// Thread-safe. Throws dnnl::error or std::bad_alloc as a reorder does.
dnnl::memory PackedWeights(uint64_t id, const dnnl::memory::desc& user, void* data, const dnnl::memory::desc& want,
                           const dnnl::engine& engine, dnnl::stream& stream);

/// Whether packed weights of `bytes` bytes would be kept (they fit the
/// budget): a kernel with a fast path on plain weights takes it otherwise,
/// rather than reordering on every call. Thread-safe.
bool PackedWeightsCanKeep(int64_t bytes);

/// The same for weights that need a step of the kernel's own before the
/// reorder (the recurrent kernels reorder gates and transpose): `source`
/// describes the constant view at `address` and is part of the key; on a
/// miss `plain()` makes the weights in a plain layout oneDNN reorders to
/// `want` (it is not called on a hit).
dnnl::memory PackedWeightsFrom(uint64_t id, const void* address, const dnnl::memory::desc& source,
                               const dnnl::memory::desc& want, const std::function<dnnl::memory()>& plain,
                               const dnnl::engine& engine, dnnl::stream& stream);

/// Entries and bytes held now (tests and --report-style diagnostics).
struct PackedWeightsStats {
  int64_t entries, bytes, hits, misses;
};
PackedWeightsStats PackedWeightsStatsNow();

}  // namespace bp_cpu
