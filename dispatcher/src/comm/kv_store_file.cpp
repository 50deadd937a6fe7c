// bp_kv_store_file_create: a key-value store on a directory, as torch's
// FileStore, for bootstrapping communicators of processes that share a file
// system. One file per key, written to a temporary name and renamed, so a
// reader sees a whole value or none.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "api.h"
#include "backplane/backplane.h"

namespace bp::core {
namespace {

struct FileStore {
  bp_kv_store_t table{};
  std::string directory;
};

// Keys may hold '/' and anything else: every byte outside [A-Za-z0-9._-]
// becomes %XX.
std::string KeyPath(const FileStore& fs, const char* key) {
  static const char* hex = "0123456789abcdef";
  std::string name;
  for (const char* p = key; *p != '\0'; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      name += static_cast<char>(c);
    } else {
      name += '%';
      name += hex[c >> 4];
      name += hex[c & 15];
    }
  }
  return fs.directory + "/" + name;
}

bp_status_t FileSet(void* user_data, const char* key, const void* value, size_t nbytes) {
  auto* fs = static_cast<FileStore*>(user_data);
  if (key == nullptr || (value == nullptr && nbytes != 0)) {
    return SetLastError(Error(BP_STATUS_INVALID_ARGUMENT, "file store set: NULL key or value"));
  }
  const std::string path = KeyPath(*fs, key);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return SetLastError(
        Error(BP_STATUS_UNAVAILABLE, "file store set: cannot write " + tmp + ": " + std::strerror(errno)));
  }
  const bool ok = std::fwrite(value, 1, nbytes, f) == nbytes;
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return SetLastError(
        Error(BP_STATUS_UNAVAILABLE, "file store set: cannot write " + path + ": " + std::strerror(errno)));
  }
  return BP_STATUS_OK;
}

bp_status_t FileGet(void* user_data, const char* key, void* value, size_t capacity, size_t* out_nbytes,
                    int64_t timeout_ms) {
  auto* fs = static_cast<FileStore*>(user_data);
  if (key == nullptr || out_nbytes == nullptr || (value == nullptr && capacity != 0)) {
    return SetLastError(Error(BP_STATUS_INVALID_ARGUMENT, "file store get: NULL key, value or out_nbytes"));
  }
  const std::string path = KeyPath(*fs, key);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      *out_nbytes = data.size();
      if (capacity != 0) std::memcpy(value, data.data(), std::min(capacity, data.size()));
      return BP_STATUS_OK;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return SetLastError(Error(BP_STATUS_DEADLINE_EXCEEDED, "file store get: no key \"" + std::string(key) + "\" in " +
                                                                 fs->directory + " after " +
                                                                 std::to_string(timeout_ms) + " ms"));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
}

}  // namespace
}  // namespace bp::core

using namespace bp::core;

extern "C" BP_API bp_status_t bp_kv_store_file_create(const char* directory, bp_kv_store_t** out_store) {
  return ApiCall("bp_kv_store_file_create", [&]() -> Status {
    BP_CHECK_ARG(directory != nullptr && *directory != '\0' && out_store != nullptr, "bp_kv_store_file_create",
                 "directory must be a non-empty path and out_store non-NULL");
    *out_store = nullptr;
    if (mkdir(directory, 0700) != 0 && errno != EEXIST) {
      return Error(
          errno == EACCES ? BP_STATUS_PERMISSION_DENIED : BP_STATUS_NOT_FOUND,
          std::string("bp_kv_store_file_create: cannot create directory ") + directory + ": " + std::strerror(errno));
    }
    auto* fs = new FileStore();
    fs->directory = directory;
    fs->table.struct_size = sizeof(bp_kv_store_t);
    fs->table.user_data = fs;
    fs->table.set = FileSet;
    fs->table.get = FileGet;
    *out_store = &fs->table;
    return Status::Ok();
  });
}

extern "C" BP_API void bp_kv_store_file_destroy(bp_kv_store_t* store) {
  if (store == nullptr) return;
  delete static_cast<FileStore*>(store->user_data);
}
