#include "program_cache.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include <unistd.h>

#include "kernel_sources.h"

namespace bpcl {

std::string DefaultCacheDir() {
  if (const char* dir = secure_getenv("BACKPLANE_OPENCL_CACHE_DIR")) return dir;
  if (const char* xdg = secure_getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/backplane/opencl";
  if (const char* home = secure_getenv("HOME"); home != nullptr && home[0] != '\0')
    return std::string(home) + "/.cache/backplane/opencl";
  return "";
}

uint64_t Fnv1a64(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

constexpr char kMagic[8] = {'B', 'P', 'C', 'L', 'B', 'I', 'N', '1'};

std::string BuildLog(cl_program program, cl_device_id dev) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// Compiles `source`; on failure releases the program and returns the log.
Status BuildFromSource(const Backend* b, Device* d, const char* name, const std::string& source,
                       const std::string& options, cl_program* out) {
  const char* text = source.c_str();
  const size_t len = source.size();
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(d->context, 1, &text, &len, &err);
  BPCL_CL(err, "clCreateProgramWithSource");
  err = clBuildProgram(p, 1, &d->id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    std::string log = BuildLog(p, d->id);
    clReleaseProgram(p);
    return Status(BP_STATUS_INTERNAL, std::string("opencl: building program '") + name + "' for device '" +
                                          d->name + "' failed (clBuildProgram: " + ClErrorName(err) +
                                          ", options '" + options + "'); build log:\n" + log);
  }
  if (b->verbose) {
    const std::string log = BuildLog(p, d->id);
    if (log.find_first_not_of(" \n\r\t") != std::string::npos)
      std::fprintf(stderr, "backplane opencl: build log of %s [%s]:\n%s\n", name, options.c_str(), log.c_str());
  }
  *out = p;
  return Ok();
}

std::string CacheKey(const Device* d, const std::string& source, const std::string& options) {
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, Fnv1a64(source));
  return d->platform_name + "\n" + d->name + "\n" + d->driver_version + "\n" + options + "\n" + hash;
}

std::string CachePath(const Backend* b, const std::string& key) {
  char file[40];
  std::snprintf(file, sizeof file, "%016" PRIx64 ".bin", Fnv1a64(key));
  return b->cache_dir + "/" + file;
}

// Loads a cached binary; any mismatch or failure is a cache miss (false).
bool LoadCached(Device* d, const std::string& path, const std::string& key, const std::string& options,
                cl_program* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[8];
  uint64_t key_len = 0, bin_len = 0;
  if (!in.read(magic, 8) || std::string(magic, 8) != std::string(kMagic, 8)) return false;
  if (!in.read(reinterpret_cast<char*>(&key_len), 8) || key_len != key.size()) return false;
  std::string stored(key_len, '\0');
  if (!in.read(stored.data(), static_cast<std::streamsize>(key_len)) || stored != key) return false;
  if (!in.read(reinterpret_cast<char*>(&bin_len), 8) || bin_len == 0 || bin_len > (1ull << 30)) return false;
  std::vector<unsigned char> bin(bin_len);
  if (!in.read(reinterpret_cast<char*>(bin.data()), static_cast<std::streamsize>(bin_len))) return false;
  const unsigned char* ptr = bin.data();
  const size_t size = bin.size();
  cl_int bin_status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program p = clCreateProgramWithBinary(d->context, 1, &d->id, &size, &ptr, &bin_status, &err);
  if (err != CL_SUCCESS || bin_status != CL_SUCCESS) {
    if (p != nullptr) clReleaseProgram(p);
    return false;
  }
  if (clBuildProgram(p, 1, &d->id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    clReleaseProgram(p);
    return false;
  }
  *out = p;
  return true;
}

// Best effort: a cache that cannot be written only costs a rebuild later.
void StoreCached(const Backend* b, Device* d, cl_program p, const std::string& path, const std::string& key) {
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) return;
  std::vector<unsigned char> bin(size);
  unsigned char* ptr = bin.data();
  if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(b->cache_dir, ec);
  if (ec) return;
  // Write a temporary file and rename it: concurrent processes never read a
  // half-written binary.
  const std::string tmp = path + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(d)) + "." +
                          std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const uint64_t key_len = key.size(), bin_len = bin.size();
    out.write(kMagic, 8);
    out.write(reinterpret_cast<const char*>(&key_len), 8);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(reinterpret_cast<const char*>(&bin_len), 8);
    out.write(reinterpret_cast<const char*>(bin.data()), static_cast<std::streamsize>(bin.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

Status GetProgram(Backend* backend, Device* d, const char* name, const char* body, const std::string& options,
                  cl_program* out_program) {
  const std::string mem_key = std::string(name) + "|" + options;
  std::lock_guard<std::mutex> lock(d->program_mutex);
  auto it = d->programs.find(mem_key);
  if (it != d->programs.end()) {
    *out_program = it->second;
    return Ok();
  }
  const std::string source = std::string(src::k_common) + "\n" + body;
  const std::string key = CacheKey(d, source, options);
  cl_program p = nullptr;
  std::string path;
  if (!backend->cache_dir.empty()) {
    path = CachePath(backend, key);
    if (LoadCached(d, path, key, options, &p)) {
      backend->program_cache_loads++;
      if (backend->verbose)
        std::fprintf(stderr, "backplane opencl: loaded program %s [%s] from cache %s\n", name, options.c_str(),
                     path.c_str());
    }
  }
  if (p == nullptr) {
    BPCL_RETURN_IF_ERROR(BuildFromSource(backend, d, name, source, options, &p));
    backend->program_builds++;
    if (backend->verbose)
      std::fprintf(stderr, "backplane opencl: built program %s [%s] for %s\n", name, options.c_str(),
                   d->name.c_str());
    if (!path.empty()) StoreCached(backend, d, p, path, key);
  }
  d->programs.emplace(mem_key, p);
  *out_program = p;
  return Ok();
}

Status BuildProgramUncached(Backend* backend, Device* d, const char* name, const std::string& source,
                            const std::string& options) {
  cl_program p = nullptr;
  BPCL_RETURN_IF_ERROR(BuildFromSource(backend, d, name, source, options, &p));
  backend->program_builds++;
  clReleaseProgram(p);
  return Ok();
}

}  // namespace bpcl
