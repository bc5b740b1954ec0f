// Target values: the feature tables of the x86 ISA levels and named CPUs, the target-string
// parser and printer, and what follows from a target (vector width, compiler flags).
#include "target/target.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "support/error.h"
#include "support/join.h"
#include "target/host.h"

namespace sy::target {

namespace {

// The psABI levels as GCC's feature names (only those a compiler may emit for float kernels and
// that cpuid reports one by one; x86-64-v2's cx16/sahf are implied by every 64-bit CPU we meet).
const std::vector<std::string>& level_features(IsaLevel l) {
  static const std::vector<std::string> v2 = {"popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"};
  static const std::vector<std::string> v3 = [] {
    std::vector<std::string> f = v2;
    f.insert(f.end(), {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe"});
    std::sort(f.begin(), f.end());  // sorted, as Target::features (std::includes needs it)
    return f;
  }();
  static const std::vector<std::string> v4 = [] {
    std::vector<std::string> f = v3;
    f.insert(f.end(), {"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"});
    std::sort(f.begin(), f.end());
    return f;
  }();
  static const std::vector<std::string> v1;  // SSE2: every x86-64 CPU
  return l == IsaLevel::Baseline ? v1 : l == IsaLevel::Sse42 ? v2 : l == IsaLevel::Avx2 ? v3 : v4;
}

// Features above the levels that a target may carry (the host has them; code may use them).
const std::vector<std::string>& extra_features() {
  static const std::vector<std::string> f = {"amx-bf16",   "amx-int8",   "amx-tile",   "avx512bf16", "avx512fp16",
                                             "avx512ifma", "avx512vbmi", "avx512vnni", "avxvnni"};
  return f;
}

// What GCC turns on with each -m flag (and CPUs always have): a target must list the implied
// features too, or its code would use instructions its feature list (and the check at load) omit.
const std::vector<std::pair<std::string, std::vector<std::string>>>& implications() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> m = {
      {"ssse3", {"sse3"}},
      {"sse4.1", {"ssse3"}},
      {"sse4.2", {"sse4.1"}},
      {"avx", {"sse4.2"}},
      {"avx2", {"avx"}},
      {"fma", {"avx"}},
      {"f16c", {"avx"}},
      {"avxvnni", {"avx2"}},
      {"avx512f", {"avx2", "fma", "f16c"}},
      {"avx512bw", {"avx512f"}},
      {"avx512cd", {"avx512f"}},
      {"avx512dq", {"avx512f"}},
      {"avx512vl", {"avx512f"}},
      {"avx512ifma", {"avx512f"}},
      {"avx512vbmi", {"avx512bw"}},
      {"avx512vnni", {"avx512f"}},
      {"avx512bf16", {"avx512bw"}},
      {"avx512fp16", {"avx512bw"}},
      {"amx-bf16", {"amx-tile"}},
      {"amx-int8", {"amx-tile"}},
  };
  return m;
}

struct NamedCpu {
  IsaLevel level;
  std::vector<std::string> extra;
  std::string mtune;  // one GCC 12 knows (it has no znver4/znver5: their nearest tuning)
};

const std::map<std::string, NamedCpu>& named_cpus() {
  static const std::map<std::string, NamedCpu> m = {
      {"x86-64-v2", {IsaLevel::Sse42, {}, "generic"}},
      {"x86-64-v3", {IsaLevel::Avx2, {}, "generic"}},
      {"x86-64-v4", {IsaLevel::Avx512, {}, "generic"}},
      {"haswell", {IsaLevel::Avx2, {}, "haswell"}},
      {"skylake", {IsaLevel::Avx2, {}, "skylake"}},
      {"skylake-avx512", {IsaLevel::Avx512, {}, "skylake-avx512"}},
      {"cascadelake", {IsaLevel::Avx512, {"avx512vnni"}, "cascadelake"}},
      {"icelake-server", {IsaLevel::Avx512, {"avx512ifma", "avx512vbmi", "avx512vnni"}, "icelake-server"}},
      {"sapphirerapids",
       {IsaLevel::Avx512,
        {"amx-bf16", "amx-int8", "amx-tile", "avx512bf16", "avx512fp16", "avx512ifma", "avx512vbmi", "avx512vnni",
         "avxvnni"},
        "sapphirerapids"}},
      {"znver2", {IsaLevel::Avx2, {}, "znver2"}},
      {"znver3", {IsaLevel::Avx2, {}, "znver3"}},
      {"znver4", {IsaLevel::Avx512, {"avx512bf16", "avx512ifma", "avx512vbmi", "avx512vnni"}, "znver3"}},
      {"znver5", {IsaLevel::Avx512, {"avx512bf16", "avx512ifma", "avx512vbmi", "avx512vnni", "avxvnni"}, "znver3"}},
  };
  return m;
}

void normalize(std::vector<std::string>& f) {
  std::sort(f.begin(), f.end());
  f.erase(std::unique(f.begin(), f.end()), f.end());
}

std::vector<std::string> with_level(IsaLevel l, const std::vector<std::string>& extra) {
  std::vector<std::string> f = level_features(l);
  f.insert(f.end(), extra.begin(), extra.end());
  normalize(f);
  return f;
}

bool parse_level(const std::string& v, IsaLevel* l) {
  if (v == "x86-64" || v == "sse2") *l = IsaLevel::Baseline;
  else if (v == "sse4.2" || v == "x86-64-v2") *l = IsaLevel::Sse42;
  else if (v == "avx2" || v == "x86-64-v3") *l = IsaLevel::Avx2;
  else if (v == "avx512" || v == "x86-64-v4") *l = IsaLevel::Avx512;
  else return false;
  return true;
}

// The integer at the start of v; *pos: where it ends (0 when there is none or it overflows).
int64_t leading_int(const std::string& v, size_t* pos) {
  try {
    return std::stoll(v, pos);
  } catch (const std::exception&) {
    *pos = 0;
    return 0;
  }
}

int64_t parse_size(const std::string& attr, const std::string& v) {
  size_t pos = 0;
  const int64_t n = leading_int(v, &pos);
  std::string unit = v.substr(pos);
  int64_t mul = unit.empty() || unit == "B" ? 1
                : unit == "K" || unit == "KB" || unit == "KiB" ? 1 << 10
                : unit == "M" || unit == "MB" || unit == "MiB" ? 1 << 20
                : unit == "G" || unit == "GB" || unit == "GiB" ? int64_t(1) << 30
                                                               : 0;
  if (pos == 0 || mul == 0 || n <= 0 || n > (int64_t(1) << 40) / mul)
    throw Error("target attribute " + attr + "=" + v + ": expected a size such as 48K, 2M or 32768");
  return n * mul;
}

std::string size_str(int64_t b) {
  if (b % (1 << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b % (1 << 10) == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

void check_consistent(const Target& t) {
  for (const auto& [f, needs] : implications())
    if (t.has(f))
      for (const auto& n : needs)
        if (!t.has(n)) throw Error("target: " + f + " needs " + n + " (the compiler's -m" + f + " implies it)");
}

// -mtune reaches the C compiler's command line (the c_source backend runs it through a shell).
void check_tune(const std::string& v) {
  bool ok = !v.empty() && v.size() <= 64;
  for (char c : v) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (!ok) throw Error("target attribute -mtune=" + v + ": expected a CPU name such as znver3 or generic");
}

}  // namespace

bool Target::has(const std::string& f) const { return std::binary_search(features.begin(), features.end(), f); }

IsaLevel Target::isa() const {
  for (IsaLevel l : {IsaLevel::Avx512, IsaLevel::Avx2, IsaLevel::Sse42}) {
    const auto& need = level_features(l);
    if (std::includes(features.begin(), features.end(), need.begin(), need.end())) return l;
  }
  return IsaLevel::Baseline;
}

int Target::vector_lanes() const {
  switch (isa()) {
    case IsaLevel::Avx512: return 16;
    case IsaLevel::Avx2: return 8;
    default: return 4;
  }
}

int Target::vector_registers() const { return isa() == IsaLevel::Avx512 ? 32 : 16; }

std::string Target::isa_name() const {
  switch (isa()) {
    case IsaLevel::Avx512: return "avx512";
    case IsaLevel::Avx2: return "avx2";
    case IsaLevel::Sse42: return "sse4.2";
    default: return "x86-64";
  }
}

namespace {
// Features beyond the target's level: what -mattr=+... must add to -isa=LEVEL.
std::vector<std::string> extras_of(const Target& t) {
  const auto& base = level_features(t.isa());
  std::vector<std::string> out;
  for (const auto& f : t.features)
    if (std::find(base.begin(), base.end(), f) == base.end()) out.push_back(f);
  return out;
}
}  // namespace

std::string Target::str() const {
  if (kind == Kind::Reference) return "reference";
  std::string s = "cpu -isa=" + isa_name();
  std::vector<std::string> extra = extras_of(*this);
  if (!extra.empty()) {
    for (auto& f : extra) f = "+" + f;
    s += " -mattr=" + join(extra, ",");
  }
  s += " -mtune=" + mtune + " -cores=" + std::to_string(cores) + " -l1d=" + size_str(l1d_bytes) +
       " -l2=" + size_str(l2_bytes) + " -l3=" + size_str(l3_bytes);
  if (codegen != "c") s += " -codegen=" + codegen;
  return s;
}

std::string Target::key() const {
  if (kind == Kind::Reference) return "reference";
  std::string s = "cpu " + isa_name();
  for (const auto& f : extras_of(*this)) s += "+" + f;
  s += " cores=" + std::to_string(cores);
  return codegen == "c" ? s : s + " codegen=" + codegen;
}

std::vector<std::string> Target::compiler_flags() const {
  SY_CHECK(kind == Kind::Cpu) << "compiler flags of a " << str() << " target";
  const IsaLevel l = isa();
  std::vector<std::string> f = {l == IsaLevel::Baseline ? std::string("-march=x86-64")
                                                        : "-march=x86-64-v" + std::to_string(static_cast<int>(l))};
  for (const auto& e : extras_of(*this)) f.push_back("-m" + e);
  f.push_back("-mtune=" + mtune);
  // GCC's tunings for several AVX-512 CPUs keep auto-vectorized loops at 256 bits; the schedules
  // are planned in 512-bit vectors.
  if (l == IsaLevel::Avx512) f.push_back("-mprefer-vector-width=512");
  return f;
}

std::vector<std::string> Target::missing_on(const Target& cpu) const {
  std::vector<std::string> out;
  std::set_difference(features.begin(), features.end(), cpu.features.begin(), cpu.features.end(),
                      std::back_inserter(out));
  return out;
}

const std::vector<std::string>& known_features() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> f = level_features(IsaLevel::Avx512);
    f.insert(f.end(), extra_features().begin(), extra_features().end());
    normalize(f);
    return f;
  }();
  return all;
}

std::vector<std::string> known_cpus() {
  std::vector<std::string> out;
  for (const auto& [n, _] : named_cpus()) out.push_back(n);
  return out;
}

Target reference() {
  Target t;
  t.kind = Kind::Reference;
  t.features.clear();
  t.mtune.clear();
  return t;
}

Target parse(const std::string& text) {
  std::istringstream in(text);
  std::string kind;
  in >> kind;
  if (kind != "cpu") return parse(text, Target{});  // no host needed (or an error to report)
  return parse(text, host());
}

Target parse(const std::string& text, const Target& host_target) {
  std::istringstream in(text);
  std::vector<std::string> tok;
  for (std::string w; in >> w;) tok.push_back(w);
  if (tok.empty()) throw Error("empty target string (expected e.g. 'cpu', 'cpu -isa=avx2' or 'reference')");
  if (tok[0] == "reference") {
    if (tok.size() > 1) throw Error("target 'reference' takes no attributes (got '" + tok[1] + "')");
    return reference();
  }
  if (tok[0] != "cpu")
    throw Error("unknown target kind '" + tok[0] + "' in '" + text + "' (known: cpu, reference)");
  Target t = host_target;
  t.kind = Kind::Cpu;
  // The attributes that set the whole feature list (-isa, -mcpu) first, whatever their place, so
  // that -mattr always edits the result.
  std::vector<std::pair<std::string, std::string>> attrs;
  int bases = 0;
  for (size_t i = 1; i < tok.size(); ++i) {
    const std::string& a = tok[i];
    size_t eq = a.find('=');
    std::string name = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (name.size() < 2 || name[0] != '-')
      throw Error("target '" + text + "': '" + a + "' is not an attribute (expected -name=value)");
    if (eq == std::string::npos || value.empty())
      throw Error("target attribute " + name + " needs a value (" + name + "=...)");
    const bool base = name == "-isa" || name == "-mcpu";
    if (base && ++bases > 1)
      throw Error("target '" + text + "': give one of -isa and -mcpu (both set the features; -mtune sets the tuning)");
    attrs.insert(base ? attrs.begin() : attrs.end(), {name, value});
  }
  for (const auto& [name, value] : attrs) {
    if (name == "-isa") {
      IsaLevel l;
      if (!parse_level(value, &l))
        throw Error("target attribute -isa=" + value + ": unknown ISA level (known: x86-64, sse4.2, avx2, avx512)");
      t.features = with_level(l, {});
    } else if (name == "-mcpu") {
      auto it = named_cpus().find(value);
      if (it == named_cpus().end())
        throw Error("target attribute -mcpu=" + value + ": unknown CPU (known: " + join(known_cpus(), ", ") + ")");
      t.features = with_level(it->second.level, it->second.extra);
      t.mtune = it->second.mtune;
    } else if (name == "-mtune") {
      check_tune(value);
      t.mtune = value;
    } else if (name == "-mattr") {
      std::stringstream ss(value);
      for (std::string f; std::getline(ss, f, ',');) {
        bool add = true;
        if (!f.empty() && (f[0] == '+' || f[0] == '-')) {
          add = f[0] == '+';
          f = f.substr(1);
        }
        const auto& known = known_features();
        if (std::find(known.begin(), known.end(), f) == known.end())
          throw Error("target attribute -mattr: unknown feature '" + f + "' (known: " + join(known, ", ") + ")");
        if (add) t.features.push_back(f);
        else t.features.erase(std::remove(t.features.begin(), t.features.end(), f), t.features.end());
        normalize(t.features);
      }
    } else if (name == "-cores") {
      size_t pos = 0;
      const int64_t n = leading_int(value, &pos);
      if (pos != value.size() || n < 1 || n > 1024)
        throw Error("target attribute -cores=" + value + ": expected a count from 1 to 1024");
      t.cores = static_cast<int>(n);
    } else if (name == "-l1d") {
      t.l1d_bytes = parse_size(name, value);
    } else if (name == "-l2") {
      t.l2_bytes = parse_size(name, value);
    } else if (name == "-l3") {
      t.l3_bytes = parse_size(name, value);
    } else if (name == "-codegen") {
      bool ok = true;
      for (char c : value) ok &= std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
      if (!ok) throw Error("target attribute -codegen=" + value + ": expected a code generator's name: lower-case letters, digits and _ (see `switchyard target --help`)");
      t.codegen = value;
    } else {
      throw Error("unknown target attribute '" + name + "' (known: -isa, -mcpu, -mtune, -mattr, -cores, -l1d, -l2, -l3, -codegen)");
    }
  }
  normalize(t.features);
  check_consistent(t);
  if (t.mtune.empty()) t.mtune = "generic";
  return t;
}

}  // namespace sy::target
