// Shared helpers of the switchyard commands.
#include "cli_common.h"

#include "backend_selection.h"
#include "runtime/artifact.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "api/load.h"

namespace sy::cli {

Progress::Progress() : enabled_(isatty(STDERR_FILENO) != 0) {}
Progress::~Progress() { clear(); }

void Progress::show(const std::string& text) {
  if (!enabled_) return;
  std::string pad = shown_ > text.size() ? std::string(shown_ - text.size(), ' ') : "";
  std::cerr << "\r" << text << pad << std::flush;
  shown_ = text.size();
}

void Progress::clear() {
  if (!enabled_ || shown_ == 0) return;
  std::cerr << "\r" << std::string(shown_, ' ') << "\r" << std::flush;
  shown_ = 0;
}

ir::Module load(const std::string& spec, const std::vector<std::string>& input_shapes) {
  api::LoadOptions opts;
  for (const auto& text : input_shapes) {
    auto [name, shape] = api::parse_input_shape(text);
    opts.input_shapes[name] = shape;
  }
  Progress p;
  p.show("loading " + spec + " ...");
  if (runtime::looks_like_artifact(spec)) {
    if (!input_shapes.empty()) throw Error(spec + ": an artifact has fixed input shapes; drop --input-shape");
    return runtime::load_artifact(spec, all_backends()).module;
  }
  return api::load_model(spec, opts);
}

std::string with_commas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string ms(double v) { return fixed(v, v >= 100 ? 1 : v >= 10 ? 2 : 3) + " ms"; }

std::string si(double v, const char* unit) {
  static const char* kPrefixes[] = {"", "K", "M", "G", "T", "P"};
  int k = 0;
  while (std::fabs(v) >= 1000 && k < 5) {
    v /= 1000;
    ++k;
  }
  std::string suffix = std::string(kPrefixes[k]) + unit;
  return fixed(v, k == 0 ? 0 : (std::fabs(v) < 10 ? 2 : 1)) + (suffix.empty() ? "" : " " + suffix);
}

nlohmann::json shape_json(const Shape& s) {
  nlohmann::json j = nlohmann::json::array();
  for (int64_t d : s) j.push_back(d);
  return j;
}

nlohmann::json tensor_info_json(const api::TensorInfo& t) {
  return {{"name", t.name}, {"shape", shape_json(t.shape)}, {"dtype", std::string(dtype_name(t.dtype))}};
}

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

}  // namespace sy::cli
