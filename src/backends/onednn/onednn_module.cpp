// The oneDNN runtime module: plans per (function, thread count), save/load of its small state.
#include "backends/onednn/onednn_module.h"

#include <omp.h>

#include <algorithm>
#include <sstream>

#include <oneapi/dnnl/dnnl.hpp>

namespace sy::backends::onednn {

namespace {

std::string library_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

}  // namespace

OnednnModule::OnednnModule(const std::vector<ExternFunction>& fns) {
  for (const ExternFunction& f : fns) {
    auto* fn = f.function ? f.function->as<ir::FunctionNode>() : nullptr;
    if (!fn) throw Error("onednn: external function '" + f.symbol + "' is not a function");
    auto it = fn->attrs.find("Compiler");
    if (it == fn->attrs.end() || it->second != "onednn")
      throw Error("onednn: external function '" + f.symbol + "' has Compiler=\"" +
                  (it == fn->attrs.end() ? std::string() : it->second) + "\", expected \"onednn\"");
    if (!fns_.emplace(f.symbol, f.function).second)
      throw Error("onednn: external function '" + f.symbol + "' given twice");
  }
  for (auto& [sym, _] : fns_) stats(sym);  // builds each plan now (errors at load, not at the first run)
}

OnednnModule::Slot& OnednnModule::acquire(const std::string& symbol) {
  auto fit = fns_.find(symbol);
  if (fit == fns_.end()) {
    std::string avail;
    for (auto& [s, _] : fns_) avail += (avail.empty() ? "" : ", ") + s;
    throw Error("onednn: no external function '" + symbol + "' in this module (has: " + avail + ")");
  }
  const int threads = omp_get_max_threads();
  std::lock_guard<std::mutex> lock(mu_);
  auto& slots = plans_[{symbol, threads}];
  for (auto& s : slots)
    if (!s->busy) {
      s->busy = true;
      return *s;
    }
  auto s = std::make_unique<Slot>();
  s->plan = std::make_unique<Plan>(symbol, fit->second, weights_);
  s->busy = true;
  slots.push_back(std::move(s));
  return *slots.back();
}

std::vector<Tensor> OnednnModule::run(const std::string& symbol, const std::vector<Tensor>& inputs) {
  Slot& s = acquire(symbol);
  struct Release {
    OnednnModule* m;
    Slot* s;
    ~Release() {
      std::lock_guard<std::mutex> lock(m->mu_);
      s->busy = false;
    }
  } release{this, &s};
  return s.plan->run(inputs);
}

int64_t OnednnModule::activation_bytes() {
  int64_t total = 0;
  for (const auto& [symbol, fn] : fns_) total += static_cast<int64_t>(stats(symbol).arena_bytes);
  return total;
}

const PlanStats& OnednnModule::stats(const std::string& symbol) {
  Slot& s = acquire(symbol);
  std::lock_guard<std::mutex> lock(mu_);
  s.busy = false;
  return s.plan->stats();
}

// Text: magic, format version, the oneDNN version it was built with (informational), the symbols.
std::string OnednnModule::save() const {
  std::ostringstream os;
  os << kModuleMagic << "\n" << kModuleFormatVersion << "\n" << library_version() << "\n" << fns_.size() << "\n";
  for (auto& [sym, _] : fns_) os << sym << "\n";
  return os.str();
}

std::unique_ptr<OnednnModule> OnednnModule::load(const std::string& bytes, const std::vector<ExternFunction>& fns) {
  std::istringstream is(bytes);
  std::string magic, version_line, lib, count_line;
  if (!std::getline(is, magic) || magic != kModuleMagic)
    throw Error("onednn module: not a oneDNN module (bad magic)");
  if (!std::getline(is, version_line)) throw Error("onednn module: truncated (no format version)");
  int version = -1;
  try {
    version = std::stoi(version_line);
  } catch (...) {
    throw Error("onednn module: malformed format version '" + version_line + "'");
  }
  if (version != kModuleFormatVersion)
    throw Error("onednn module: format version " + std::to_string(version) + " is not supported (this build reads version " +
                std::to_string(kModuleFormatVersion) + ")");
  if (!std::getline(is, lib) || !std::getline(is, count_line)) throw Error("onednn module: truncated header");
  size_t n = 0;
  try {
    n = static_cast<size_t>(std::stoul(count_line));
  } catch (...) {
    throw Error("onednn module: malformed symbol count '" + count_line + "'");
  }
  std::vector<std::string> saved;
  for (size_t i = 0; i < n; ++i) {
    std::string s;
    if (!std::getline(is, s)) throw Error("onednn module: truncated symbol list");
    saved.push_back(s);
  }
  std::string extra;
  if (std::getline(is, extra) && !extra.empty()) throw Error("onednn module: unexpected bytes after the symbol list");
  std::vector<std::string> given;
  for (const ExternFunction& f : fns) given.push_back(f.symbol);
  std::sort(given.begin(), given.end());
  std::vector<std::string> sorted = saved;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != given) {
    std::string a, b;
    for (auto& s : sorted) a += (a.empty() ? "" : ", ") + s;
    for (auto& s : given) b += (b.empty() ? "" : ", ") + s;
    throw Error("onednn module: saved for functions [" + a + "] but loaded with [" + b + "]");
  }
  return std::make_unique<OnednnModule>(fns);
}

}  // namespace sy::backends::onednn
