// Input preparation for `switchyard run`: file inputs are checked, the rest are random.
#include "api/inputs.h"

#include <sstream>

#include "support/error.h"
#include "support/npy.h"
#include "support/random_tensor.h"

namespace sy::api {

std::pair<std::string, std::string> parse_input_file(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("--input '" + text + "': expected NAME=FILE.npy");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<PreparedInput> prepare_inputs(const ir::Module& m, const std::map<std::string, std::string>& files,
                                          uint64_t seed) {
  const auto& params = m.main().params;
  std::ostringstream names;
  for (size_t i = 0; i < params.size(); ++i) names << (i ? ", " : "") << params[i]->as<ir::VarNode>()->name;
  for (const auto& [name, path] : files) {
    bool known = false;
    for (const auto& p : params) known = known || p->as<ir::VarNode>()->name == name;
    if (!known)
      throw Error("unknown input '" + name + "' (the model's inputs: " +
                  (params.empty() ? std::string("none") : names.str()) + ")");
  }
  std::vector<PreparedInput> out;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto* v = params[i]->as<ir::VarNode>();
    if (!ir::is_tensor(v->type))
      throw Error("input '" + v->name + "' has type " + ir::type_str(v->type) + "; only tensor inputs can be given");
    const auto& want = ir::as_tensor(v->type);
    auto it = files.find(v->name);
    if (it == files.end()) {
      out.push_back({v->name, "random", random_tensor(want.shape, want.dtype, seed + i)});
      continue;
    }
    Tensor t = npy::read_file(it->second);
    if (t.dtype() != want.dtype) {
      std::string hint = is_float(want.dtype) && is_float(t.dtype())
                             ? " (convert with arr.astype('" + std::string(dtype_name(want.dtype)) + "'))"
                             : "";
      throw Error("input '" + v->name + "': " + it->second + " has dtype " + std::string(dtype_name(t.dtype())) +
                  ", the model expects " + std::string(dtype_name(want.dtype)) + hint);
    }
    if (t.shape() != want.shape)
      throw Error("input '" + v->name + "': " + it->second + " has shape " + shape_str(t.shape()) +
                  ", the model expects " + shape_str(want.shape));
    out.push_back({v->name, it->second, t});
  }
  return out;
}

}  // namespace sy::api
