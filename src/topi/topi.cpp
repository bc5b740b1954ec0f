// The op implementation registry and the default injective schedule.
#include "topi/topi.h"

#include <cstdlib>
#include <sstream>

#include "ops/op.h"
#include "support/error.h"

namespace sy::topi {

void Registry::add(ops::OpCode op, OpImpl impl) {
  if (impl.name.empty()) impl.name = ops::op_name(op);
  for (const OpImpl& i : impls[op])
    SY_CHECK(i.name != impl.name) << "topi: " << impl.name << " registered twice for " << ops::op_name(op);
  impls[op].push_back(std::move(impl));
}

void Registry::add_extern(const std::string& symbol, void* fn) { externs[symbol] = fn; }

namespace {
const Registry& registry() {
  static const Registry* r = [] {
    auto* x = new Registry;
    register_elementwise(*x);
    register_transform(*x);
    register_reduce(*x);
    register_nn(*x);
    return x;
  }();
  return *r;
}
}  // namespace

const std::vector<OpImpl>& implementations(ops::OpCode op) {
  static const std::vector<OpImpl> none;
  auto it = registry().impls.find(op);
  return it == registry().impls.end() ? none : it->second;
}

const OpImpl* find_default(const ir::CallNode& call, const target::Target& t) {
  const OpImpl* best = nullptr;
  int best_p = 0;
  for (const OpImpl& i : implementations(call.op)) {
    if (i.why_not && !i.why_not(call, t).empty()) continue;
    const int p = i.priority ? i.priority(call, t) : kDefaultPriority;
    if (!best || p > best_p || (p == best_p && i.name < best->name)) {
      best = &i;
      best_p = p;
    }
  }
  return best;
}

const ExternTable& extern_table() { return registry().externs; }

// One vector: the conv and dense micro-kernels hold a block of outputs per register, and a
// register tile spans several blocks.
int weight_block(const target::Target& t) { return t.vector_lanes(); }

std::optional<KeptLayout> kept_layout_of(const ir::FunctionNode& fn) {
  auto it = fn.attrs.find(kKeptLayoutAttr);
  if (it == fn.attrs.end()) return std::nullopt;
  KeptLayout k;
  std::istringstream in(it->second);
  std::string word;
  if (!(in >> k.layout)) throw Error(std::string(kKeptLayoutAttr) + ": no layout in '" + it->second + "'");
  while (in >> word) {
    if (word == "out") {
      k.result = true;
    } else if (word.rfind("in=", 0) == 0) {
      std::istringstream ps(word.substr(3));
      std::string p;
      while (std::getline(ps, p, ',')) {
        char* end = nullptr;
        const long v = std::strtol(p.c_str(), &end, 10);
        if (p.empty() || *end || v < 0 || v >= static_cast<long>(fn.params.size()))
          throw Error(std::string(kKeptLayoutAttr) + ": bad parameter '" + p + "' in '" + it->second + "'");
        k.params.push_back(static_cast<int>(v));
      }
    } else {
      throw Error(std::string(kKeptLayoutAttr) + ": unexpected '" + word + "' in '" + it->second + "'");
    }
  }
  return k;
}

te::Tensor nchw_view(const te::Tensor& stored) {
  SY_CHECK(stored.ndim() == 4) << "nchw_view of a " << stored.ndim() << "-d tensor";
  const Shape& s = stored.shape();
  return te::compute({s[0], s[3], s[1], s[2]}, [&](te::Expr n, te::Expr c, te::Expr h, te::Expr w) { return stored(n, h, w, c); },
                     "nchw_view");
}

te::Tensor nhwc_store(const te::Tensor& logical) {
  SY_CHECK(logical.ndim() == 4) << "nhwc_store of a " << logical.ndim() << "-d tensor";
  const Shape& s = logical.shape();
  return te::compute({s[0], s[2], s[3], s[1]}, [&](te::Expr n, te::Expr h, te::Expr w, te::Expr c) { return logical(n, c, h, w); },
                     kNhwcStoreStage);
}

std::string blocked_layout(int64_t block) { return "nChw" + std::to_string(block) + "c"; }

int64_t blocked_layout_block(const std::string& layout) {
  if (layout.size() < 6 || layout.rfind("nChw", 0) != 0 || layout.back() != 'c') return 0;
  const std::string digits = layout.substr(4, layout.size() - 5);
  if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoll(digits);
}

te::Tensor blocked_view(const te::Tensor& stored) {
  SY_CHECK(stored.ndim() == 5) << "blocked_view of a " << stored.ndim() << "-d tensor";
  const Shape& s = stored.shape();
  const int64_t B = s[4];
  return te::compute({s[0], s[1] * B, s[2], s[3]},
                     [&](te::Expr n, te::Expr c, te::Expr h, te::Expr w) { return stored({n, c / B, h, w, c % B}); },
                     "nchwc_view");
}

te::Tensor blocked_store(const te::Tensor& logical, int64_t block) {
  SY_CHECK(logical.ndim() == 4 && block > 0 && logical.shape()[1] % block == 0)
      << "blocked_store of a " << logical.ndim() << "-d tensor by " << block;
  const Shape& s = logical.shape();
  return te::compute({s[0], s[1] / block, s[2], s[3], block},
                     [&](const std::vector<te::Expr>& i) { return logical(i[0], i[1] * block + i[4], i[2], i[3]); },
                     kBlockedStoreStage);
}

std::string kept_layout_str(const KeptLayout& k) {
  std::string s = k.layout;
  if (!k.params.empty()) {
    s += " in=";
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(k.params[i]);
    }
  }
  if (k.result) s += " out";
  return s;
}

}  // namespace sy::topi
