// Where plugins come from: the checks every plugin file passes before dlopen
// (absolute resolved path, regular file, not world-writable), and discovery
// through BACKPLANE_PLUGINS, BACKPLANE_PLUGIN_PATH and the install directory.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

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

// BACKPLANE_ALLOW_INSECURE_PLUGINS=1 (development only): world-writable
// plugin files and directories load. Read with secure_getenv.
bool AllowInsecure() {
  const char* v = secure_getenv("BACKPLANE_ALLOW_INSECURE_PLUGINS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::vector<std::string> SplitColon(const char* s) {
  std::vector<std::string> out;
  if (s == nullptr) return out;
  std::string cur;
  for (const char* c = s;; ++c) {
    if (*c == ':' || *c == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*c == '\0') break;
    } else {
      cur += *c;
    }
  }
  return out;
}

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

Status ResolvePluginFile(const char* path, std::string* resolved) {
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
                   fn + ": '" + abs + "' is world-writable (anyone could replace the code it runs); refused "
                        "(BACKPLANE_ALLOW_INSECURE_PLUGINS=1 allows it, for development only)");
    }
    const std::string dir = abs.substr(0, std::max<size_t>(abs.rfind('/'), 1));
    struct stat db;
    if (stat(dir.c_str(), &db) == 0 && (db.st_mode & S_IWOTH) != 0) {
      return Error(BP_STATUS_PERMISSION_DENIED,
                   fn + ": its directory '" + dir + "' is world-writable (anyone could put a library there); "
                        "refused (BACKPLANE_ALLOW_INSECURE_PLUGINS=1 allows it, for development only)");
    }
  }
  *resolved = std::move(abs);
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
    std::lock_guard<std::mutex> lock(context->mu);
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
