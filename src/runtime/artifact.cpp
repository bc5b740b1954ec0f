// Writing and reading .sya artifacts.
#include "runtime/artifact.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "native/compile.h"
#include "partition/partition_graph.h"
#include "runtime/artifact_checksum.h"
#include "support/error.h"
#include "support/mapped_file.h"
#include "support/tensor_storage.h"
#include "support/temporary_name.h"
#include "switchyard/version.h"
#include "target/host.h"
#include "topi/topi.h"

namespace sy::runtime {

namespace {

constexpr char kMagic[8] = {'S', 'W', 'Y', 'D', 'A', 'R', 'T', '\0'};
constexpr const char* kModulePrefix = "module:";
constexpr const char* kNativeLibrary = "native:library";

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }

struct Reader {
  std::string_view data;
  std::string path;
  size_t pos = 0;
  void need(size_t n, const std::string& what) {
    if (data.size() - pos < n)
      throw Error(path + ": truncated artifact: " + what + " needs " + std::to_string(n) + " bytes, " +
                  std::to_string(data.size() - pos) + " left");
  }
  uint32_t u32(const std::string& what) {
    need(4, what);
    uint32_t v;
    std::memcpy(&v, data.data() + pos, 4);
    pos += 4;
    return v;
  }
  uint64_t u64(const std::string& what) {
    need(8, what);
    uint64_t v;
    std::memcpy(&v, data.data() + pos, 8);
    pos += 8;
    return v;
  }
  std::string_view bytes(uint64_t n, const std::string& what) {
    if (n > data.size() - pos) need(n, what);
    std::string_view s(data.data() + pos, n);
    pos += n;
    return s;
  }
};


// A section's content: built in memory, or (the constants) streamed from the tensors that hold
// them, so that the weights are not copied into one more buffer of hundreds of MB on the way.
struct Section {
  std::string name;
  std::string content;
  const ir::BlobLayout* blob = nullptr;  // when set, the content is this layout's data

  size_t size() const { return blob ? blob->size : content.size(); }
  // Calls f(data, n) on consecutive pieces that together make up the content.
  template <typename F>
  void for_each_piece(F&& f) const {
    if (!blob) {
      f(content.data(), content.size());
      return;
    }
    static constexpr char kZeros[64] = {};
    size_t at = 0;
    for (const ir::BlobLayout::Entry& e : blob->entries) {
      while (at < e.offset) {  // alignment padding
        size_t n = std::min(e.offset - at, sizeof kZeros);
        f(kZeros, n);
        at += n;
      }
      f(static_cast<const char*>(e.value.raw()), e.value.nbytes());
      at += e.value.nbytes();
    }
  }
};

}  // namespace

void save_artifact(const CompiledModel& model, const std::string& path) {
  std::vector<Section> sections;
  nlohmann::json meta;
  meta["writer"] = std::string("switchyard ") + SWITCHYARD_VERSION;
  meta["format_version"] = kArtifactFormatVersion;
  meta["backends"] = nlohmann::json::array();
  for (const auto& [name, _] : model.modules) meta["backends"].push_back(name);
  meta["native"] = model.native != nullptr;
  // The target is read back from its string, and the weights are packed again for it at load: the
  // string must give back this very target, and the native kernels must be the model's target's.
  SY_CHECK(target::parse(model.target.str(), target::Target{}) == model.target) << "target string not lossless: " << model.target.str();
  SY_CHECK(!model.native || model.native->target() == model.target) << "the native kernels' target differs from the model's";
  meta["target"] = model.target.str();
  if (model.native && model.target.kind == target::Kind::Cpu) meta["weight_block"] = topi::weight_block(model.target);
  sections.push_back({"meta", meta.dump()});
  ir::PrintOptions po;
  ir::BlobLayout weights;
  po.blob = &weights;
  sections.push_back({"graph", ir::print_module(model.module, po)});
  sections.push_back({"constants", "", &weights});
  for (const auto& [name, mod] : model.modules) sections.push_back({kModulePrefix + name, mod->save()});
  if (model.native) sections.push_back({kNativeLibrary, model.native->library_bytes()});

  // The file checksum covers the header and every section's name, size and checksum; each
  // section's checksum covers its content (one pass over the content before writing it).
  std::string head(kMagic, sizeof kMagic);
  put_u32(head, kArtifactFormatVersion);
  put_u32(head, static_cast<uint32_t>(sections.size()));
  std::vector<std::string> headers;
  std::string covered = head;
  for (const Section& sec : sections) {
    Checksum sum(sec.size());
    sec.for_each_piece([&](const char* p, size_t n) { sum.update(p, n); });
    std::string h;
    put_u32(h, static_cast<uint32_t>(sec.name.size()));
    h += sec.name;
    put_u64(h, sec.size());
    put_u64(h, sum.finish());
    covered += h;
    headers.push_back(std::move(h));
  }
  std::string trailer;
  put_u64(trailer, checksum(covered.data(), covered.size()));

  const std::string tmp = temporary_name(path);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(path + ": cannot write the artifact");
    auto write = [&f](const char* p, size_t n) { f.write(p, static_cast<std::streamsize>(n)); };
    write(head.data(), head.size());
    for (size_t i = 0; i < sections.size(); ++i) {
      write(headers[i].data(), headers[i].size());
      sections[i].for_each_piece(write);
    }
    write(trailer.data(), trailer.size());
    if (!f) throw Error(path + ": write failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(path + ": cannot move the artifact into place: " + ec.message());
  }
}

CompiledModel load_artifact(const std::string& path, const std::vector<const backends::Backend*>& available) {
  // Mapped, not read: the sections (hundreds of MB of weights) are checked and parsed in place.
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": cannot open the artifact: " + ec.message());
  std::optional<MappedFile> file;
  try {
    file.emplace(path, static_cast<size_t>(file_size), "the artifact");
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return load_artifact_bytes(file->view(), path, available);
}

CompiledModel load_artifact_bytes(std::string_view data, const std::string& path,
                                  const std::vector<const backends::Backend*>& available) {
  Reader r{data, path};
  if (data.size() < sizeof kMagic || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
    throw Error(path + ": not a Switchyard artifact (bad magic bytes)");
  r.pos = sizeof kMagic;
  uint32_t version = r.u32("the format version");
  if (version != kArtifactFormatVersion)
    throw Error(path + ": artifact format version " + std::to_string(version) + ", but this switchyard (" +
                SWITCHYARD_VERSION + ") reads version " + std::to_string(kArtifactFormatVersion) +
                "; recompile the model");
  r.need(4 + 8, "the section count and trailing checksum");
  uint32_t count = r.u32("the section count");
  std::string covered(data.substr(0, r.pos));
  std::map<std::string, std::string_view> sections;
  for (uint32_t i = 0; i < count; ++i) {
    std::string where = "section " + std::to_string(i + 1) + " of " + std::to_string(count);
    size_t start = r.pos;
    uint32_t name_len = r.u32(where + " name length");
    if (name_len > 256)
      throw Error(path + ": corrupted artifact: " + where + " has a name of " + std::to_string(name_len) + " bytes");
    std::string_view name = r.bytes(name_len, where + " name");
    std::string sname(name);
    uint64_t size = r.u64("section '" + sname + "' size");
    uint64_t sum = r.u64("section '" + sname + "' checksum");
    covered.append(data.substr(start, r.pos - start));
    std::string_view content = r.bytes(size, "section '" + sname + "'");
    if (checksum(content.data(), content.size()) != sum)
      throw Error(path + ": corrupted artifact: checksum of section '" + sname + "' does not match");
    sections[sname] = content;
  }
  r.need(8, "the trailing checksum");
  if (r.pos + 8 != data.size())
    throw Error(path + ": corrupted artifact: " + std::to_string(data.size() - r.pos - 8) + " unexpected trailing bytes");
  uint64_t stored_total;
  std::memcpy(&stored_total, data.data() + r.pos, 8);
  if (checksum(covered.data(), covered.size()) != stored_total)
    throw Error(path + ": corrupted artifact: the header checksum does not match");
  for (const char* needed : {"meta", "graph", "constants"})
    if (!sections.count(needed)) throw Error(path + ": corrupted artifact: no '" + needed + "' section");

  // The target first: code for features this CPU lacks would die of SIGILL in its first kernel.
  CompiledModel cm;
  try {
    nlohmann::json meta = nlohmann::json::parse(sections["meta"]);
    cm.target = target::parse(meta.at("target").get<std::string>(), target::Target{});
    // The packed-weight layout the kernels were lowered for, against what the target gives now.
    if (meta.contains("weight_block") && (cm.target.kind != target::Kind::Cpu ||
                                          meta.at("weight_block").get<int>() != topi::weight_block(cm.target)))
      throw Error("its kernels read weights in blocks of " + std::to_string(meta.at("weight_block").get<int>()) +
                  ", which its target does not give");
  } catch (const std::exception& e) {
    throw Error(path + ": corrupted artifact: meta: " + e.what());
  }
  if (std::string why = target::cannot_run_here(cm.target, "its kernels"); !why.empty())
    throw Error(path + ": cannot run on this CPU: " + why);
  LongLivedTensors model_lifetime;  // what is built from here on lives as long as the loaded model
  Result<ir::Module> parsed = ir::parse_module(std::string(sections["graph"]), sections["constants"]);
  if (!parsed.is_ok()) throw Error(path + ": corrupted artifact: graph: " + parsed.status().message());
  cm.module = std::move(parsed.value());
  Status st = ir::verify(cm.module);
  if (!st.is_ok()) throw Error(path + ": corrupted artifact: graph: " + st.message());
  for (auto& [backend, fns] : partition::extern_functions(cm.module)) {
    auto it = sections.find(kModulePrefix + backend);
    if (it == sections.end()) throw Error(path + ": corrupted artifact: no module for backend '" + backend + "'");
    const backends::Backend* b = nullptr;
    for (const backends::Backend* x : available)
      if (x->name() == backend) b = x;
    if (!b) throw Error(path + ": the artifact needs backend '" + backend + "', which this build does not include");
    cm.modules[backend] = b->load(std::string(it->second), fns);
    for (const auto& f : fns) cm.backend_of[f.symbol] = backend;
  }
  auto lib = sections.find(kNativeLibrary);
  if (lib != sections.end()) cm.native = native::load_native(cm.module, std::string(lib->second), cm.target);
  return cm;
}

bool looks_like_artifact(const std::string& path) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".sya") == 0) return true;
  std::ifstream f(path, std::ios::binary);
  char head[sizeof kMagic] = {};
  f.read(head, sizeof head);
  return f && std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

}  // namespace sy::runtime
