#include "backend_select.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "load_probe.h"

namespace bpc {

namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0);
}

int32_t backend_count(bp_context_t* ctx) {
  int32_t n = 0;
  return bp_backend_count(ctx, &n) == BP_STATUS_OK ? n : 0;
}

bool backend_loaded(bp_context_t* ctx, int32_t b, bp_backend_info_t* info) {
  *info = bp_backend_info_t{};
  info->struct_size = sizeof *info;
  return bp_backend_info(ctx, b, info) == BP_STATUS_OK && info->loaded;
}

std::string resolved(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  const std::string r = real != nullptr ? real : path;
  std::free(real);
  return r;
}

// The loaded backends whose plugin is the file `path` (resolved as the loader
// resolves it). A host-memory plugin (the cpu plugin) takes the existing cpu
// slot, so "a new slot" would find none.
std::vector<int32_t> backends_of_file(bp_context_t* ctx, const std::string& path) {
  std::vector<int32_t> out;
  const std::string r = resolved(path);
  bp_backend_info_t info;
  for (int32_t b = 0; b < backend_count(ctx); ++b) {
    if (backend_loaded(ctx, b, &info) && info.plugin_path != nullptr && r == info.plugin_path) out.push_back(b);
  }
  return out;
}

// The lib*.so files of `dir`, sorted (discovery's rule).
void list_plugins(const std::string& dir, std::vector<std::string>* out) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (const struct dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 6 && n.compare(0, 3, "lib") == 0 && n.compare(n.size() - 3, 3, ".so") == 0) {
      files.push_back(dir + "/" + n);
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  out->insert(out->end(), files.begin(), files.end());
}

std::vector<std::string> split_colon(const char* s) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* c = s; c != nullptr; ++c) {
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

// True when the load of `path` may run in this process: no probe asked
// for, or the probe's child survived it. Otherwise prints the file's
// LOAD CRASHED / LOAD EXITED / LOAD TIMEOUT line.
bool survives_load(const std::string& path, double timeout_s, int* load_failures) {
  if (timeout_s <= 0) return true;
  const std::string line = load_verdict_line(probe_plugin_load(path, timeout_s), path);
  if (line.empty()) return true;
  std::cout << line << "\n" << std::flush;
  if (load_failures != nullptr) ++*load_failures;
  return false;
}

}  // namespace

std::vector<std::string> discovery_candidates() {
  std::vector<std::string> files;
  for (const std::string& f : split_colon(secure_getenv("BACKPLANE_PLUGINS"))) {
    if (f[0] == '/') files.push_back(f);  // relative entries: ignored, as bp_plugin_discover does
  }
  for (const std::string& d : split_colon(secure_getenv("BACKPLANE_PLUGIN_PATH"))) {
    if (d[0] == '/') list_plugins(d, &files);
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&bp_plugin_discover), &info) != 0 && info.dli_fname != nullptr) {
    const std::string lib = resolved(info.dli_fname);
    list_plugins(lib.substr(0, lib.rfind('/')) + "/backplane/plugins", &files);
  }
  // Each file once (the first spelling of it).
  std::vector<std::string> out, seen;
  for (const std::string& f : files) {
    const std::string r = resolved(f);
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) continue;
    seen.push_back(r);
    out.push_back(f);
  }
  return out;
}

bool select_backends(bp_context_t* ctx, const std::vector<std::string>& args, const SelectOptions& opt,
                     std::vector<std::pair<int32_t, std::string>>* out, SelectResult* result) {
  SelectResult ignored;
  if (result == nullptr) result = &ignored;
  bool discovered = false;
  // Discovery, one file at a time: each probed in a child first (a file
  // whose load crashes or hangs gets its own verdict line and is skipped;
  // bp_plugin_discover would load it here). Workers load exactly the files
  // their parent loaded, never discovering.
  auto discover = [&] {
    if (discovered) return;
    discovered = true;
    const std::vector<std::string> files = opt.worker_files != nullptr ? *opt.worker_files : discovery_candidates();
    for (const std::string& f : files) {
      if (!backends_of_file(ctx, f).empty()) continue;  // already loaded (a --backend path)
      if (opt.worker_files == nullptr && !survives_load(f, opt.load_timeout_s, &result->load_failures)) continue;
      const bp_status_t st = bp_plugin_load(ctx, f.c_str(), nullptr);
      // A backend name already loaded (a given path wins) is no news;
      // other refusals are, as discovery's warnings are.
      if (st != BP_STATUS_OK && st != BP_STATUS_ALREADY_EXISTS) {
        std::cerr << "bp-conformance: plugin discovery: " << bp_last_error_message() << "\n";
      }
    }
  };
  for (const std::string& a : args) {
    if (!looks_like_path(a)) continue;
    if (backends_of_file(ctx, a).empty()) {
      if (!survives_load(a, opt.load_timeout_s, &result->load_failures)) {
        result->skipped_paths.push_back(a);
        continue;
      }
      const bp_status_t st = bp_plugin_load(ctx, a.c_str(), nullptr);
      if (st != BP_STATUS_OK) {
        std::cerr << "bp-conformance: cannot load plugin " << a << ": " << bp_status_name(st) << ": "
                  << bp_last_error_message() << "\n";
        return false;
      }
    }
    for (int32_t b : backends_of_file(ctx, a)) out->push_back({b, a});
  }
  for (const std::string& a : args) {
    if (looks_like_path(a)) continue;
    discover();
    int32_t b = -1;
    if (bp_backend_find(ctx, a.c_str(), &b) != BP_STATUS_OK) {
      std::cerr << "bp-conformance: no backend named '" << a << "' (" << bp_last_error_message() << "); loaded:";
      bp_backend_info_t info;
      for (int32_t k = 0; k < backend_count(ctx); ++k) {
        if (backend_loaded(ctx, k, &info)) std::cerr << " " << info.name;
      }
      std::cerr << "\n";
      return false;
    }
    out->push_back({b, a});
  }
  // Always (after the paths, so a given path wins): the CPU fallback needs
  // the CPU backend's kernels.
  discover();
  bp_backend_info_t info;
  for (int32_t b = 0; b < backend_count(ctx); ++b) {
    if (!backend_loaded(ctx, b, &info)) continue;
    if (args.empty()) out->push_back({b, ""});
    if (info.plugin_path != nullptr && info.plugin_path[0] != '\0') result->loaded_files.push_back(info.plugin_path);
  }
  return true;
}

}  // namespace bpc
