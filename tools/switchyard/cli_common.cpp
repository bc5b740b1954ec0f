// Shared helpers of the switchyard commands.
#include "cli_common.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>

namespace switchyard::cli {

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

std::map<std::string, std::vector<int64_t>> input_shapes(const std::vector<std::string>& texts) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& text : texts) {
    auto [name, shape] = parse_input_shape(text);
    out[name] = shape;
  }
  return out;
}

Model load(const std::string& spec, const std::vector<std::string>& shapes,
           const std::map<std::string, std::vector<int64_t>>& data_shapes) {
  LoadOptions opts;
  opts.input_shapes = input_shapes(shapes);
  opts.data_shapes = data_shapes;
  Progress p;
  p.show("loading " + spec + " ...");
  if (is_artifact(spec)) {
    if (!shapes.empty()) throw Error(spec + ": an artifact has fixed input shapes; drop --input-shape");
    return Compiled::load(spec).model();
  }
  return Model::load(spec, opts);
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

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

nlohmann::json shape_json(const std::vector<int64_t>& s) {
  nlohmann::json j = nlohmann::json::array();
  for (int64_t d : s) j.push_back(d);
  return j;
}

nlohmann::json tensor_info_json(const TensorInfo& t) {
  return {{"name", t.name}, {"shape", shape_json(t.shape)}, {"dtype", std::string(dtype_name(t.dtype))}};
}

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

}  // namespace switchyard::cli
