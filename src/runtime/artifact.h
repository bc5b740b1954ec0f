// The .sya artifact: one file holding a partitioned model (graph and constants) and every
// backend's serialized runtime module, with a format version and checksums.
//
// Layout (little-endian):
//   "SWYDART\0"  u32 format_version  u32 section_count
//   section_count x { u32 name_len, name, u64 size, u64 checksum(content), content }
//   u64 checksum(header and every section's name, size and checksum)
// Sections: "meta" (JSON: writer version, backends, the target string the code was built for),"graph" (IR text of the partitioned module,
// large constants as blob(OFFSET)), "constants" (their bytes, each constant once),
// "module:<backend>" (RuntimeModule::save bytes; weights are not repeated there), and for the
// native path "native:library" (the generated kernels' shared library; the graph is then the
// fused module, from which the execution plan is recomputed at load).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "runtime/compiled_model.h"

namespace sy::runtime {

// 2: the meta section holds the target; native weights are packed in the target's vector width.
inline constexpr uint32_t kArtifactFormatVersion = 2;

// Writes atomically (a temporary file renamed into place). Throws sy::Error on I/O failure.
void save_artifact(const CompiledModel& model, const std::string& path);

// Reads, verifies and loads an artifact; each backend module is rebuilt with Backend::load from
// the backends in `available`. Throws sy::Error naming the problem: not an artifact, written by
// an incompatible format version, truncated, corrupted (checksum), a backend not built in, or
// code built for CPU features this CPU lacks (naming them).
CompiledModel load_artifact(const std::string& path, const std::vector<const backends::Backend*>& available);
// The same for the artifact's bytes (which must outlive the call); `path` prefixes the messages.
CompiledModel load_artifact_bytes(std::string_view data, const std::string& path,
                                  const std::vector<const backends::Backend*>& available);

bool looks_like_artifact(const std::string& path);  // by extension (.sya) or magic

}  // namespace sy::runtime
