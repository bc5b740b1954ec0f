// Applying tuning records to a compile.
#include "records_option.h"

#include "support/error.h"
#include "target/host.h"

namespace sy::cli {

std::unique_ptr<RecordsUse> use_records(const std::string& path, native::CompileOptions& o, bool placement) {
  if (path.empty()) return nullptr;
  auto r = std::make_unique<RecordsUse>();
  r->path = path;
  std::vector<tune::Record> rs;
  size_t placements = 0;
  for (tune::Record& x : tune::read_records(path)) {
    if (x.op == "placement") ++placements;  // measured placement's (runtime/placement_records.h)
    else rs.push_back(std::move(x));
  }
  // Measured placement makes the file, or adds to it, when it holds no tuning records yet.
  if (rs.empty() && (placement || placements)) return nullptr;
  if (rs.empty()) throw Error(path + ": no tuning records (missing or empty file; make one with `switchyard tune`)");
  const target::Target& t = o.target ? *o.target : target::host();
  r->applicable = tune::select_records(rs, t, tune::current_validators());
  r->refused = tune::check_records(r->applicable, path, t);
  o.chooser = tune::records_chooser(r->applicable);
  return r;
}

std::string records_summary(const native::Compiled& nc, const RecordsUse& r) {
  int by_record = 0, by_priority = 0;
  for (const strategy::Choice& c : nc.choices) {
    if (c.implementation.empty()) continue;
    (c.from_record ? by_record : by_priority)++;
  }
  std::string s = "records (" + r.path + "): " + std::to_string(by_record) + " kernels chosen by records, " +
                  std::to_string(by_priority) + " by priority (no record for their workload)";
  if (!r.refused.empty()) s += "\n" + r.refused;
  return s;
}

}  // namespace sy::cli
