// Placement records: measured placement's measurements of a region, kept in a tuning records
// file (records of op "placement", one per candidate: the backend, "native", and "split" with the
// nodes it keeps native as knobs, and "other:NAME" for each other backend asked for it), so that
// placing the same model again measures nothing.
//
// A region's key is a hash of its structure (the region alone as a module, printed without
// constant data), its backend, the thread count and whether splits were searched; records apply
// only for the same target key and validators, as tuning records do (tune/records.h).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "target/target.h"
#include "tune/records.h"

namespace sy::runtime {

// What the records say of one region.
struct StoredPlacement {
  std::optional<double> backend_ms, native_ms, split_ms;  // the ok candidates' times
  double backend_error = 0;                               // the backend's relative error
  std::string backend_failure;                            // when the backend's record is not ok
  std::vector<int> split_native;  // positions, in the region's node order, that the split keeps native
  bool searched = false;          // a split record is there (ok, or cut: no split was better)
  // Other backends on the region (records "other:NAME"): the times of those that ran it right.
  std::map<std::string, double> others;
};

class PlacementRecords {
 public:
  // Reads `path` (missing: none) and keeps the placement records that apply to target t.
  PlacementRecords(const std::string& path, const target::Target& t);

  static std::string key(const ir::Module& region, const std::string& backend, int threads, bool split);
  std::optional<StoredPlacement> find(const std::string& key) const;
  // The end-to-end check's stored winner (a record "winner:NAME" under the model's key) and the
  // candidates' times (records "measured" and "alone:NAME"; native is "alone:native").
  struct EndToEnd {
    std::string winner;
    std::map<std::string, double> ms;
  };
  std::optional<EndToEnd> end_to_end(const std::string& key) const;

  // One candidate's outcome; nodes = the region's node count (a split record must match it).
  void add(const std::string& key, const std::string& description, const std::string& candidate, double ms,
           tune::Outcome outcome, const std::string& message, double error, const std::vector<int>& split_native,
           int threads);
  // Appends what was added to the file (nothing when no path was given).
  void save();

  size_t found = 0, added = 0;

 private:
  std::string path_;
  target::Target target_;
  std::map<std::string, std::string> validators_;
  std::map<std::string, std::vector<tune::Record>> by_key_;
  std::vector<tune::Record> new_;
};

}  // namespace sy::runtime
