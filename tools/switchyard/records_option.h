// --records FILE of compile and run: the best record per kernel chooses its implementation and
// knobs; records for another target or build are refused with a message, never applied.
#pragma once
#include <memory>
#include <string>

#include "native/compile.h"
#include "tune/records.h"

namespace sy::cli {

struct RecordsUse {
  std::string path;
  tune::SelectedRecords applicable;
  std::string refused;  // what was refused, one line ("" if nothing)
};

// Reads path (if not empty) and sets o.chooser; sy::Error if the file is unreadable, malformed,
// or has records of which none apply to o's target. A file with only placement records, or (with
// `placement`: measured placement will write it) none, gives nullptr: no kernel is chosen by records.
std::unique_ptr<RecordsUse> use_records(const std::string& path, native::CompileOptions& o, bool placement = false);

// "records: 23 kernels chosen by records, 4 by priority (no record for their workload)".
std::string records_summary(const native::Compiled& nc, const RecordsUse& r);

}  // namespace sy::cli
