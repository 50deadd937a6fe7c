// Builds OpenCL programs on first use and caches them: in memory per device
// (per plugin instance) and on disk as program binaries, keyed by device
// name, driver version, build options and a hash of the source, so that a
// second process compiles nothing.
#pragma once

#include <string>

#include "plugin.h"

namespace bpcl {

// Returns the program `name` built from `common.cl` + `body` with `options`
// for device `d`: from the in-memory cache, else the disk cache, else a build
// from source (counted in backend->program_builds). The program is owned by
// the device's cache. A build failure is an INTERNAL error whose message
// carries the build log.
Status GetProgram(Backend* backend, Device* d, const char* name, const char* body,
                  const std::string& options, cl_program* out_program);

// Builds `source` (complete, nothing prepended) without any cache and
// releases it: a test hook for the build-failure path.
Status BuildProgramUncached(Backend* backend, Device* d, const char* name, const std::string& source,
                            const std::string& options);

// Directory for program binaries: BACKPLANE_OPENCL_CACHE_DIR, else
// $XDG_CACHE_HOME/backplane/opencl, else $HOME/.cache/backplane/opencl.
std::string DefaultCacheDir();

// 64-bit FNV-1a, used for cache keys.
uint64_t Fnv1a64(const std::string& s, uint64_t h = 1469598103934665603ull);

}  // namespace bpcl
