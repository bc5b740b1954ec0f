#include "codegen/c/compiler.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include "support/error.h"
#include "target/host.h"

extern char** environ;

namespace sy::codegen {

namespace fs = std::filesystem;

namespace {

std::atomic<int64_t> g_invocations{0};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void write_file(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
  if (!out) throw Error("codegen: cannot write " + p.string());
}

}  // namespace

int run_command(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

namespace {

std::string first_error_lines(const std::string& log, size_t max_lines) {
  std::istringstream in(log);
  std::string line, out;
  size_t n = 0;
  bool started = false;
  while (std::getline(in, line) && n < max_lines) {
    if (!started && line.find("error") == std::string::npos) continue;
    started = true;
    out += "\n  " + line;
    ++n;
  }
  if (out.empty()) {  // no line says "error": the first lines, whatever they are
    std::istringstream all(log);
    while (std::getline(all, line) && n++ < max_lines) out += "\n  " + line;
  }
  return out;
}

}  // namespace

std::string compiler_identity(const std::string& cc) {
  static std::mutex mu;
  static std::string cached_cc, cached_id;
  std::lock_guard<std::mutex> lock(mu);
  if (cached_cc == cc && !cached_id.empty()) return cached_id;
  fs::path log = fs::temp_directory_path() / ("sy-cc-version-" + std::to_string(getpid()) + ".txt");
  int rc = run_command({cc, "--version"}, log.string());
  std::string id = read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0) throw Error("codegen: cannot run the C compiler '" + cc + "' (is it installed and on PATH?)");
  cached_cc = cc;
  cached_id = id.substr(0, id.find('\n'));
  return cached_id;
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("SWITCHYARD_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "switchyard").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "switchyard").string();
  return (fs::temp_directory_path() / "switchyard-cache").string();
}

std::string content_hash(const std::string& data) {
  uint64_t h1 = 14695981039346656037ULL, h2 = 0x9e3779b97f4a7c15ULL;
  for (unsigned char c : data) {
    h1 = (h1 ^ c) * 1099511628211ULL;
    h2 = (h2 ^ c) * 0x100000001b3ULL;
    h2 ^= h2 >> 29;
  }
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h1), static_cast<unsigned long long>(h2));
  return buf;
}

namespace {

// What a compile of the library keys on besides its source: the compiler's identity and every flag.
std::string key_prefix(const CompileOptions& opts, const std::vector<std::string>& target_flags) {
  std::string key_text = compiler_identity(opts.cc) + "\n" + opts.cc;
  for (const auto& f : opts.flags) key_text.append(" ").append(f);
  for (const auto& f : target_flags) key_text.append(" ").append(f);
  return key_text + " -lmvec -lm";
}

// Runs argv with its output in log; on failure removes `remove`, keeps `source` for inspection and
// throws with the compiler's first error lines.
void run_compiler(const std::vector<std::string>& argv, const fs::path& log, const fs::path& source,
                  const fs::path& remove) {
  ++g_invocations;
  const int rc = run_command(argv, log.string());
  const std::string out = read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  if (rc == 0) return;
  fs::remove(remove, ec);
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  throw Error("codegen: the C compiler failed (exit " + std::to_string(rc) + ") on " + source.string() + ":" +
              first_error_lines(out, 8) + "\n  command: " + cmd);
}

}  // namespace

int compile_jobs(const CompileOptions& opts) {
  if (opts.jobs > 0) return opts.jobs;
  if (const char* j = std::getenv("SWITCHYARD_COMPILE_JOBS"); j && *j) {
    char* end = nullptr;
    const long v = std::strtol(j, &end, 10);
    if (*end || v < 1 || v > 1024)
      throw Error("SWITCHYARD_COMPILE_JOBS='" + std::string(j) + "': expected a number of compiler processes from 1 to 1024");
    return static_cast<int>(v);
  }
  return std::max(1, target::host().cores);
}

namespace {

// The units' objects, each by its own compiler process, compile_jobs(opts) at a time, linked into
// tmp; their sources then stay in the cache as KEY-U.c (the failing one's, on failure, under the
// name the message gives).
void compile_and_link(const std::vector<std::string>& units, const std::vector<std::string>& common,
                      const CompileOptions& opts, const fs::path& dir, const std::string& key, const std::string& tag,
                      const fs::path& tmp) {
  std::error_code ec;
  const size_t workers = std::min(units.size(), static_cast<size_t>(compile_jobs(opts)));
  std::vector<fs::path> srcs, objs;
  for (size_t u = 0; u < units.size(); ++u) {
    const std::string stem = key + "-" + tag + "-" + std::to_string(u);
    srcs.push_back(dir / (stem + ".c"));
    objs.push_back(dir / (stem + ".o"));
    write_file(srcs[u], units[u]);
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  std::vector<char> compiled(units.size(), 0);
  auto worker = [&] {
    for (size_t u; (u = next++) < units.size();) {
      try {
        std::vector<std::string> argv = common;
        argv.insert(argv.end(), {"-c", "-o", objs[u].string(), srcs[u].string()});
        run_compiler(argv, dir / (key + ".log-" + tag + "-" + std::to_string(u)), srcs[u], objs[u]);
        compiled[u] = 1;
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {  // no more threads: the ones started do the rest
      break;
    }
  }
  worker();
  for (auto& t : threads) t.join();
  auto remove_objs = [&] {
    for (const auto& o : objs) fs::remove(o, ec);
  };
  if (failure) {  // the failing unit's source stays, under the name the message gives
    remove_objs();
    for (size_t u = 0; u < units.size(); ++u)
      if (compiled[u]) fs::remove(srcs[u], ec);
    std::rethrow_exception(failure);
  }
  std::vector<std::string> link = common;
  link.insert(link.end(), {"-o", tmp.string()});
  for (const auto& o : objs) link.push_back(o.string());
  link.insert(link.end(), {"-lmvec", "-lm"});
  try {
    run_compiler(link, dir / (key + ".log-" + tag + "-link"), srcs[0], tmp);  // the units' sources stay
  } catch (...) {
    remove_objs();
    throw;
  }
  remove_objs();
  for (size_t u = 0; u < units.size(); ++u)
    fs::rename(srcs[u], dir / (key + "-" + std::to_string(u) + ".c"), ec);
}

}  // namespace

std::string compile_shared_library(const std::string& source, const CompileOptions& opts) {
  return compile_shared_library(std::vector<std::string>{source}, opts);
}

std::string compile_shared_library(const std::vector<std::string>& units, const CompileOptions& opts) {
  if (units.empty()) throw Error("codegen: no C source to compile");
  const fs::path dir = opts.cache_dir.empty() ? default_cache_dir() : opts.cache_dir;
  const std::vector<std::string> target_flags =
      opts.target_flags.empty() ? target::host().compiler_flags() : opts.target_flags;
  // One unit keys as it always did; several key on all of them, in order (a different split of
  // the same kernels is another library, built once).
  std::string text = key_prefix(opts, target_flags) + "\n" + units[0];
  for (size_t u = 1; u < units.size(); ++u) text.append("\n// unit ").append(std::to_string(u)).append("\n").append(units[u]);
  const std::string key = content_hash(text);
  const fs::path so = dir / (key + ".so");
  std::error_code ec;
  if (fs::exists(so, ec)) return so.string();
  fs::create_directories(dir, ec);
  if (ec) throw Error("codegen: cannot create the cache directory " + dir.string() + ": " + ec.message());
  static std::atomic<int64_t> attempt{0};
  const std::string tag = std::to_string(getpid()) + "-" + std::to_string(attempt++);
  // Every file of this attempt has a unique name until the final renames, so concurrent builds
  // of the same source (other processes, other threads) never see each other's partial files.
  const fs::path tmp = dir / (key + ".so.tmp-" + tag);
  std::vector<std::string> common = {opts.cc};
  common.insert(common.end(), opts.flags.begin(), opts.flags.end());
  common.insert(common.end(), target_flags.begin(), target_flags.end());
  if (units.size() == 1) {
    const fs::path src = dir / (key + "-" + tag + ".c");
    write_file(src, units[0]);
    std::vector<std::string> argv = common;
    argv.insert(argv.end(), {"-o", tmp.string(), src.string(), "-lmvec", "-lm"});
    run_compiler(argv, dir / (key + ".log-" + tag), src, tmp);
    fs::rename(src, dir / (key + ".c"), ec);
  } else {
    compile_and_link(units, common, opts, dir, key, tag, tmp);
  }
  fs::rename(tmp, so, ec);  // atomic: a concurrent build of the same source writes the same bytes
  if (ec) throw Error("codegen: cannot move " + tmp.string() + " into the cache: " + ec.message());
  return so.string();
}

int64_t compiler_invocations() { return g_invocations.load(); }

}  // namespace sy::codegen
