// bp_kv_store_file_create: a key-value store on a directory, as torch's
// FileStore, for bootstrapping communicators of processes that share a file
// system. One file per key, written to a temporary name and renamed, so a
// reader sees a whole value or none.
//
// The directory is checked once as the plugin loader checks a plugin's
// directory (docs/security.md): a directory another local user can write to
// lets them plant a symbolic link where the store writes, and the job then
// overwrites whatever the link points at. Every later access goes through the
// directory's descriptor (openat/renameat), so the directory checked is the
// one written, and no path component is followed as a link.
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "api.h"
#include "backplane/backplane.h"

namespace bp::core {
namespace {

struct FileStore {
  bp_kv_store_t table{};
  std::string directory;
  int dir_fd = -1;
};

// Keys may hold '/' and anything else: every byte outside [A-Za-z0-9._-]
// becomes %XX, so a key names one file directly in the directory.
std::string KeyName(const char* key) {
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
  return name;
}

// A temporary name nobody can guess ahead (as mkstemp's), created with
// O_EXCL|O_NOFOLLOW: a planted file or link at that name fails the open, it
// is never written through.
int OpenTemp(const FileStore& fs, const std::string& name, std::string* tmp) {
  static const char* hex = "0123456789abcdef";
  for (int attempt = 0; attempt < 16; ++attempt) {
    // The kernel's random bytes: no generator state (libbackplane keeps its
    // static TLS small, being dlopened by Python).
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
      r = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    }
    std::string suffix;
    for (int i = 0; i < 16; ++i, r >>= 4) suffix += hex[r & 15];
    // The key's encoding never makes '%' followed by "tmp", so no key's file
    // has a temporary's name.
    *tmp = name + "%tmp." + suffix;
    const int fd = openat(fs.dir_fd, tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

bool WriteAll(int fd, const void* data, size_t nbytes) {
  const char* p = static_cast<const char*>(data);
  while (nbytes > 0) {
    const ssize_t w = write(fd, p, nbytes);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    nbytes -= static_cast<size_t>(w);
  }
  return true;
}

bp_status_t FileSet(void* user_data, const char* key, const void* value, size_t nbytes) {
  auto* fs = static_cast<FileStore*>(user_data);
  if (key == nullptr || (value == nullptr && nbytes != 0)) {
    return SetLastError(Error(BP_STATUS_INVALID_ARGUMENT, "file store set: NULL key or value"));
  }
  const std::string name = KeyName(key);
  std::string tmp;
  const int fd = OpenTemp(*fs, name, &tmp);
  if (fd < 0) {
    return SetLastError(Error(BP_STATUS_UNAVAILABLE, "file store set: cannot create a temporary file in " +
                                                         fs->directory + ": " + std::strerror(errno)));
  }
  const bool ok = WriteAll(fd, value, nbytes);
  int err = ok ? 0 : errno;
  if (close(fd) != 0 && err == 0) err = errno;
  // renameat replaces a link planted at the key's name; it does not follow it.
  if (err != 0 || renameat(fs->dir_fd, tmp.c_str(), fs->dir_fd, name.c_str()) != 0) {
    if (err == 0) err = errno;
    unlinkat(fs->dir_fd, tmp.c_str(), 0);
    return SetLastError(Error(BP_STATUS_UNAVAILABLE, "file store set: cannot write " + fs->directory + "/" + name +
                                                         ": " + std::strerror(err)));
  }
  return BP_STATUS_OK;
}

// Reads the key's file if it is there: 1 read, 0 absent, -1 error (message set).
int ReadKey(const FileStore& fs, const std::string& name, std::string* data, std::string* why) {
  const int fd = openat(fs.dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    *why = errno == ELOOP ? std::string("it is a symbolic link (not written by a file store)") : std::strerror(errno);
    return -1;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    *why = "it is not a regular file (not written by a file store)";
    return -1;
  }
  data->clear();
  char buf[65536];
  for (;;) {
    const ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *why = std::strerror(errno);
      close(fd);
      return -1;
    }
    if (r == 0) break;
    data->append(buf, static_cast<size_t>(r));
  }
  close(fd);
  return 1;
}

bp_status_t FileGet(void* user_data, const char* key, void* value, size_t capacity, size_t* out_nbytes,
                    int64_t timeout_ms) {
  auto* fs = static_cast<FileStore*>(user_data);
  if (key == nullptr || out_nbytes == nullptr || (value == nullptr && capacity != 0)) {
    return SetLastError(Error(BP_STATUS_INVALID_ARGUMENT, "file store get: NULL key, value or out_nbytes"));
  }
  const std::string name = KeyName(key);
  // Clamped so that now + timeout cannot overflow the clock's nanoseconds.
  const int64_t wait_ms = std::min<int64_t>(std::max<int64_t>(timeout_ms, 0), int64_t{1} << 40);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    std::string data, why;
    const int got = ReadKey(*fs, name, &data, &why);
    if (got < 0) {
      return SetLastError(Error(BP_STATUS_UNAVAILABLE,
                                "file store get: cannot read " + fs->directory + "/" + name + ": " + why));
    }
    if (got > 0) {
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

// The plugin path rules (docs/security.md) for the store's directory, on its
// open descriptor: a directory owned by root or the running user, not
// world-writable unless sticky.
Status CheckDirectory(const char* directory, int fd) {
  const std::string where = std::string("bp_kv_store_file_create: directory ") + directory;
  struct stat sb;
  if (fstat(fd, &sb) != 0) return Error(BP_STATUS_UNAVAILABLE, where + ": " + std::strerror(errno));
  if (sb.st_uid != 0 && sb.st_uid != geteuid()) {
    return Error(BP_STATUS_PERMISSION_DENIED, where + " is owned by uid " + std::to_string(sb.st_uid) +
                                                  ", neither root nor the running user (uid " +
                                                  std::to_string(geteuid()) + "): its owner could plant links there");
  }
  if ((sb.st_mode & S_IWOTH) != 0 && (sb.st_mode & S_ISVTX) == 0) {
    return Error(BP_STATUS_PERMISSION_DENIED,
                 where + " is world-writable without the sticky bit: any local user could plant links there "
                         "(use a directory of your own, e.g. mode 0700)");
  }
  return Status::Ok();
}

}  // namespace
}  // namespace bp::core

using namespace bp::core;

extern "C" BP_API bp_status_t bp_kv_store_file_create(const char* directory, bp_kv_store_t** out_store) {
  return ApiCall("bp_kv_store_file_create", [&]() -> Status {
    BP_CHECK_ARG(directory != nullptr && *directory != '\0' && out_store != nullptr, "bp_kv_store_file_create",
                 "directory must be a non-empty path and out_store non-NULL");
    *out_store = nullptr;
    const std::string where = std::string("bp_kv_store_file_create: directory ") + directory;
    if (mkdir(directory, 0700) != 0 && errno != EEXIST) {
      return Error(errno == EACCES ? BP_STATUS_PERMISSION_DENIED : BP_STATUS_NOT_FOUND,
                   "bp_kv_store_file_create: cannot create directory " + std::string(directory) + ": " +
                       std::strerror(errno));
    }
    // O_NOFOLLOW on the last component: the directory itself is no link.
    const int fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      struct stat sb;
      if (lstat(directory, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        return Error(BP_STATUS_PERMISSION_DENIED,
                     where + " is a symbolic link: give the directory itself (a link could be redirected)");
      }
      if (e == ENOTDIR) return Error(BP_STATUS_INVALID_ARGUMENT, where + " is not a directory");
      return Error(e == EACCES ? BP_STATUS_PERMISSION_DENIED : BP_STATUS_NOT_FOUND, where + ": " + std::strerror(e));
    }
    Status st = CheckDirectory(directory, fd);
    if (!st.ok()) {
      close(fd);
      return st;
    }
    auto* fs = new FileStore();
    fs->directory = directory;
    fs->dir_fd = fd;
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
  auto* fs = static_cast<FileStore*>(store->user_data);
  close(fs->dir_fd);
  delete fs;
}
