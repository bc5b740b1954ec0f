// Applying tuning records to a compile.
#include "records_option.h"

#include "support/error.h"
#include "target/host.h"

namespace sy::cli {

std::unique_ptr<RecordsUse> use_records(const std::string& path, native::CompileOptions& o) {
  if (path.empty()) return nullptr;
  auto r = std::make_unique<RecordsUse>();
  r->path = path;
  std::vector<tune::Record> rs = tune::read_records(path);
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
