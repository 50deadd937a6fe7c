// Where plugins come from: the checks every plugin file passes before dlopen
// (absolute resolved path, regular file, trusted owners and permissions on
// the whole way), and discovery
// through BACKPLANE_PLUGINS, BACKPLANE_PLUGIN_PATH and the install directory.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api.h"
#include "plugin.h"

namespace bp::core {
namespace {

// BACKPLANE_ALLOW_INSECURE_PLUGINS=1 (development only): plugin files and
// paths that fail the ownership and write-permission checks load. Read with
// secure_getenv.
bool AllowInsecure() {
  const char* v = secure_getenv("BACKPLANE_ALLOW_INSECURE_PLUGINS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// The non-empty parts of `s` between `sep`s.
std::vector<std::string> SplitOn(const char* s, char sep) {
  std::vector<std::string> out;
  if (s == nullptr) return out;
  std::string cur;
  for (const char* c = s;; ++c) {
    if (*c == sep || *c == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*c == '\0') break;
    } else {
      cur += *c;
    }
  }
  return out;
}
std::vector<std::string> SplitOn(const std::string& s, char sep) { return SplitOn(s.c_str(), sep); }
std::vector<std::string> SplitColon(const char* s) { return SplitOn(s, ':'); }

// The plugin files of `dir`: lib*.so, sorted.
std::vector<std::string> ListPlugins(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (struct dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 6 && n.compare(0, 3, "lib") == 0 && n.compare(n.size() - 3, 3, ".so") == 0) {
      files.push_back(dir + "/" + n);
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

namespace {

const char kOptOut[] = "; refused (BACKPLANE_ALLOW_INSECURE_PLUGINS=1 allows it, for development only)";

bool TrustedOwner(uid_t uid) { return uid == 0 || uid == geteuid(); }

// The rule for every directory on the way to a plugin (see docs/security.md):
// owned by root or the running user, and not writable by others unless the
// sticky bit keeps others from replacing what they do not own (/tmp).
Status CheckDirectory(const std::string& fn, const std::string& dir) {
  struct stat db;
  if (stat(dir.c_str(), &db) != 0) {
    return Error(BP_STATUS_PERMISSION_DENIED, fn + ": cannot check directory '" + dir + "': " + std::strerror(errno));
  }
  if (!TrustedOwner(db.st_uid)) {
    return Error(BP_STATUS_PERMISSION_DENIED, fn + ": directory '" + dir + "' is owned by uid " +
                                                  std::to_string(db.st_uid) +
                                                  ", neither root nor the running user (its owner could put any "
                                                  "library there)" +
                                                  kOptOut);
  }
  if ((db.st_mode & S_IWOTH) != 0 && (db.st_mode & S_ISVTX) == 0) {
    return Error(BP_STATUS_PERMISSION_DENIED, fn + ": directory '" + dir +
                                                  "' is world-writable without the sticky bit (anyone could "
                                                  "replace what it holds)" +
                                                  kOptOut);
  }
  return Status::Ok();
}

// Walks `path` component by component as the kernel resolves it, following
// each symbolic link, and checks every directory passed through and every
// link (owned by root or the running user, in a checked directory): a link
// another user can replace chooses the code that runs. Checks, not the
// resolution itself: realpath gave the file that is opened.
Status CheckPathComponents(const std::string& fn, const std::string& path) {
  std::string start = path;
  if (start.empty() || start[0] != '/') {
    char* cwd = getcwd(nullptr, 0);
    if (cwd == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": cannot read the current directory");
    start = std::string(cwd) + "/" + start;
    std::free(cwd);
  }
  std::vector<std::string> todo = SplitOn(start, '/');  // reversed: the next component at the back
  std::reverse(todo.begin(), todo.end());
  std::string cur;  // resolved so far; "" is the root
  BP_RETURN_IF_ERROR(CheckDirectory(fn, "/"));
  for (int links = 0; !todo.empty();) {
    const std::string comp = std::move(todo.back());
    todo.pop_back();
    if (comp == ".") continue;
    if (comp == "..") {
      cur = cur.substr(0, cur.rfind('/') == std::string::npos ? 0 : cur.rfind('/'));
      continue;
    }
    const std::string next = cur + "/" + comp;
    struct stat lb;
    if (lstat(next.c_str(), &lb) != 0) return Error(BP_STATUS_NOT_FOUND, fn + ": no such file ('" + next + "')");
    if (S_ISLNK(lb.st_mode)) {
      if (!TrustedOwner(lb.st_uid)) {
        return Error(BP_STATUS_PERMISSION_DENIED, fn + ": symbolic link '" + next + "' is owned by uid " +
                                                      std::to_string(lb.st_uid) +
                                                      ", neither root nor the running user" + kOptOut);
      }
      if (++links > 40) return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": too many levels of symbolic links");
      std::string target(static_cast<size_t>(lb.st_size) + 1, '\0');
      const ssize_t n = readlink(next.c_str(), target.data(), target.size());
      if (n < 0 || static_cast<size_t>(n) >= target.size()) {
        return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": cannot read symbolic link '" + next + "'");
      }
      target.resize(static_cast<size_t>(n));
      if (!target.empty() && target[0] == '/') cur.clear();
      std::vector<std::string> parts = SplitOn(target, '/');
      todo.insert(todo.end(), parts.rbegin(), parts.rend());
      continue;
    }
    cur = next;
    if (S_ISDIR(lb.st_mode)) BP_RETURN_IF_ERROR(CheckDirectory(fn, cur));
  }
  return Status::Ok();
}

}  // namespace

Status ResolvePluginFile(const char* path, std::string* resolved, struct stat* out_stat) {
  const std::string fn = std::string("bp_plugin_load('") + path + "')";
  // realpath: absolute, every symbolic link and "." / ".." resolved, so the
  // file checked is the file dlopen opens (a path with a '/' never makes
  // dlopen search the library path).
  char* real = realpath(path, nullptr);
  if (real == nullptr) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return Error(BP_STATUS_NOT_FOUND, fn + ": no such file");
    if (err == ELOOP) {
      return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": too many levels of symbolic links (a symbolic link loop)");
    }
    return Error(err == EACCES ? BP_STATUS_PERMISSION_DENIED : BP_STATUS_INVALID_ARGUMENT,
                 fn + ": cannot resolve the path: " + std::strerror(err));
  }
  std::string abs = real;
  std::free(real);
  struct stat sb;
  if (stat(abs.c_str(), &sb) != 0) return Error(BP_STATUS_NOT_FOUND, fn + ": no such file");
  if (!S_ISREG(sb.st_mode)) return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": not a regular file");
  if (!AllowInsecure()) {
    if ((sb.st_mode & S_IWOTH) != 0) {
      return Error(BP_STATUS_PERMISSION_DENIED,
                   fn + ": '" + abs + "' is world-writable (anyone could replace the code it runs)" + kOptOut);
    }
    if (!TrustedOwner(sb.st_uid)) {
      return Error(BP_STATUS_PERMISSION_DENIED, fn + ": '" + abs + "' is owned by uid " + std::to_string(sb.st_uid) +
                                                    ", neither root nor the running user (its owner could change "
                                                    "the code it runs)" +
                                                    kOptOut);
    }
    // Every directory and link the path passes through as it resolves.
    BP_RETURN_IF_ERROR(CheckPathComponents(fn, path));
  }
  *resolved = std::move(abs);
  if (out_stat != nullptr) *out_stat = sb;
  return Status::Ok();
}

}  // namespace bp::core

using namespace bp::core;

extern "C" {

BP_API bp_status_t bp_plugin_discover(bp_context_t* context, int32_t* out_loaded) {
  return ApiCall("bp_plugin_discover", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_plugin_discover"));
    std::vector<std::string> candidates;
    for (const std::string& f : SplitColon(secure_getenv("BACKPLANE_PLUGINS"))) {
      if (f[0] != '/') {
        LogMessage(context, BP_LOG_WARNING, "plugin discovery: BACKPLANE_PLUGINS entry '" + f +
                                                "' is not an absolute path; ignored");
        continue;
      }
      candidates.push_back(f);
    }
    for (const std::string& d : SplitColon(secure_getenv("BACKPLANE_PLUGIN_PATH"))) {
      if (d[0] != '/') {
        // "." or "plugins" would load whatever the current directory holds.
        LogMessage(context, BP_LOG_WARNING, "plugin discovery: BACKPLANE_PLUGIN_PATH entry '" + d +
                                                "' is not an absolute path; ignored");
        continue;
      }
      for (const std::string& f : ListPlugins(d)) candidates.push_back(f);
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&bp_plugin_discover), &info) != 0 && info.dli_fname != nullptr) {
      char* real = realpath(info.dli_fname, nullptr);
      if (real != nullptr) {
        std::string lib = real;
        std::free(real);
        std::string dir = lib.substr(0, lib.rfind('/'));
        for (const std::string& f : ListPlugins(dir + "/backplane/plugins")) candidates.push_back(f);
      }
    }
    int32_t loaded = 0;
    std::unique_lock<std::mutex> lock;
    BP_RETURN_IF_ERROR(LockWriter(context, "bp_plugin_discover", &lock));
    std::vector<std::string> seen;
    for (const std::string& f : candidates) {
      char* real = realpath(f.c_str(), nullptr);
      std::string key = real != nullptr ? real : f;
      std::free(real);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      bool already = false;
      for (auto& p : context->plugins) {
        if (p->loaded && p->path == key) already = true;  // plugin paths are resolved
      }
      if (already) continue;
      Status st = LoadLocked(context, f.c_str(), nullptr);
      if (st.ok()) {
        ++loaded;
      } else if (st.code() == BP_STATUS_ALREADY_EXISTS) {
        LogMessage(context, BP_LOG_DEBUG, "plugin discovery: skipped " + st.message());
      } else {
        LogMessage(context, BP_LOG_WARNING, "plugin discovery: " + st.message());
      }
    }
    if (out_loaded != nullptr) *out_loaded = loaded;
    return Status::Ok();
  });
}

}  // extern "C"
