#include "codegen/c/compiler.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

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

std::string compile_shared_library(const std::string& source, const CompileOptions& opts) {
  const fs::path dir = opts.cache_dir.empty() ? default_cache_dir() : opts.cache_dir;
  const std::vector<std::string> target_flags =
      opts.target_flags.empty() ? target::host().compiler_flags() : opts.target_flags;
  std::string key_text = compiler_identity(opts.cc) + "\n" + opts.cc;
  for (const auto& f : opts.flags) key_text.append(" ").append(f);
  for (const auto& f : target_flags) key_text.append(" ").append(f);
  key_text += " -lmvec -lm";
  const std::string key = content_hash(key_text + "\n" + source);
  const fs::path so = dir / (key + ".so");
  std::error_code ec;
  if (fs::exists(so, ec)) return so.string();
  fs::create_directories(dir, ec);
  if (ec) throw Error("codegen: cannot create the cache directory " + dir.string() + ": " + ec.message());
  static std::atomic<int64_t> attempt{0};
  const std::string tag = std::to_string(getpid()) + "-" + std::to_string(attempt++);
  // Every file of this attempt has a unique name until the final renames, so concurrent builds
  // of the same source (other processes, other threads) never see each other's partial files.
  const fs::path src_final = dir / (key + ".c");
  const fs::path src = dir / (key + "-" + tag + ".c");
  const fs::path tmp = dir / (key + ".so.tmp-" + tag);
  const fs::path log = dir / (key + ".log-" + tag);
  write_file(src, source);
  std::vector<std::string> argv = {opts.cc};
  argv.insert(argv.end(), opts.flags.begin(), opts.flags.end());
  argv.insert(argv.end(), target_flags.begin(), target_flags.end());
  argv.insert(argv.end(), {"-o", tmp.string(), src.string(), "-lmvec", "-lm"});
  ++g_invocations;
  const int rc = run_command(argv, log.string());
  const std::string out = read_file(log);
  fs::remove(log, ec);
  if (rc != 0) {  // the source stays for inspection under the name the messages use
    fs::remove(tmp, ec);
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw Error("codegen: the C compiler failed (exit " + std::to_string(rc) + ") on " + src.string() + ":" +
                first_error_lines(out, 8) + "\n  command: " + cmd);
  }
  fs::rename(src, src_final, ec);
  fs::rename(tmp, so, ec);  // atomic: a concurrent build of the same source writes the same bytes
  if (ec) throw Error("codegen: cannot move " + tmp.string() + " into the cache: " + ec.message());
  return so.string();
}

int64_t compiler_invocations() { return g_invocations.load(); }

}  // namespace sy::codegen
