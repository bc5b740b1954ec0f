// The ONNX Einsum converter: the equation becomes transposes, reshapes, sums and matmuls, as a
// library would run it (operands contracted two at a time, left to right; every contraction one
// batched matmul). Attention written as einsum (MaxViT's "bhid,bhjd->bhij") is then the same
// matmul the native kernels and backends already compute.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "frontends/onnx/converters.h"
#include "ops/op.h"

namespace sy::onnx {

namespace {

using ops::OpCode;
using Outs = std::vector<ir::Expr>;
using Labels = std::vector<int>;  // one per axis: a letter's code, or kEllipsis + k for broadcast axis k

constexpr int kEllipsis = 1000;

struct Operand {
  ir::Expr value;
  Labels labels;
};

Shape shape_of(const Operand& o) { return ir::shape_of(o.value); }

int64_t index_of(const Labels& ls, int l) {
  return static_cast<int64_t>(std::find(ls.begin(), ls.end(), l) - ls.begin());
}

bool has(const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); }

// One term of the equation ("bhid", "...ij") as labels for an operand of `rank` axes; the
// ellipsis takes the axes the letters leave, right-aligned against `ellipsis_rank` axes.
Labels parse_term(const NodeContext& c, const std::string& term, int64_t rank, int64_t* ellipsis_rank_seen,
                  std::optional<int64_t> ellipsis_rank) {
  Labels out;
  const size_t dots = term.find("...");
  if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos)
    c.fail("equation term '" + term + "' has more than one ellipsis");
  const std::string letters = dots == std::string::npos ? term : term.substr(0, dots) + term.substr(dots + 3);
  for (char ch : letters)
    if (!std::isalpha(static_cast<unsigned char>(ch))) c.fail("equation term '" + term + "' has '" + std::string(1, ch) + "', not a letter");
  int64_t n_ellipsis = 0;
  if (dots != std::string::npos) {
    n_ellipsis = ellipsis_rank ? *ellipsis_rank : rank - static_cast<int64_t>(letters.size());
    if (n_ellipsis < 0) c.fail("equation term '" + term + "' has more letters than its operand's " + std::to_string(rank) + " axes");
    if (ellipsis_rank_seen) *ellipsis_rank_seen = std::max(*ellipsis_rank_seen, n_ellipsis);
  } else if (!ellipsis_rank && static_cast<int64_t>(letters.size()) != rank) {
    c.fail("equation term '" + term + "' names " + std::to_string(letters.size()) + " axes, its operand has " +
           std::to_string(rank));
  }
  for (size_t i = 0; i < term.size();) {
    if (term.compare(i, 3, "...") == 0) {
      const int64_t total = ellipsis_rank ? *ellipsis_rank : n_ellipsis;
      // Broadcast axes are labelled from the right, so an operand with fewer of them shares the
      // last ones (numpy alignment); the final renumbering happens once the widest is known.
      for (int64_t k = 0; k < total; ++k) out.push_back(kEllipsis + static_cast<int>(total - 1 - k));
      i += 3;
    } else {
      out.push_back(static_cast<unsigned char>(term[i]));
      ++i;
    }
  }
  return out;
}

// Sums the axes at `axes` away.
Operand sum_out(NodeContext& c, Operand o, std::vector<int64_t> axes) {
  if (axes.empty()) return o;
  std::sort(axes.begin(), axes.end());
  ops::ReduceAttrs a;
  a.axes = axes;
  a.keepdims = false;
  o.value = c.op(OpCode::ReduceSum, {o.value}, a);
  for (size_t k = axes.size(); k-- > 0;) o.labels.erase(o.labels.begin() + axes[k]);
  return o;
}

// A label repeated in one operand ("ii"): its diagonal, by a mask of the identity and a sum.
Operand take_diagonals(NodeContext& c, Operand o) {
  for (size_t i = 0; i < o.labels.size(); ++i)
    for (size_t j = i + 1; j < o.labels.size(); ++j) {
      if (o.labels[i] != o.labels[j]) continue;
      const Shape s = shape_of(o);
      if (s[i] != s[j]) c.fail("einsum label repeated on axes of sizes " + std::to_string(s[i]) + " and " + std::to_string(s[j]));
      Shape ms(s.size(), 1);
      ms[i] = ms[j] = s[i];
      Tensor eye(ir::dtype_of(o.value), ms);
      dispatch_dtype(eye.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t k = 0; k < s[i]; ++k) eye.data<T>()[k * s[i] + k] = T(1);
      });
      o.value = c.op(OpCode::Mul, {o.value, ir::constant(eye)});
      o = sum_out(c, std::move(o), {static_cast<int64_t>(j)});
      return take_diagonals(c, std::move(o));
    }
  return o;
}

// Sums the labels of o that no other operand and not the output name.
Operand sum_private(NodeContext& c, Operand o, const Labels& needed) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < o.labels.size(); ++i)
    if (!has(needed, o.labels[i])) axes.push_back(static_cast<int64_t>(i));
  return sum_out(c, std::move(o), axes);
}

int64_t product(const Shape& s, const std::vector<int64_t>& axes) {
  int64_t p = 1;
  for (int64_t a : axes) p *= s[static_cast<size_t>(a)];
  return p;
}

// a and b contracted over the labels they share that `keep` does not name: one matmul of
// (batch..., M, K) by (batch..., K, N), the batch axes broadcast as numpy does.
Operand contract(NodeContext& c, const Operand& a, const Operand& b, const Labels& keep) {
  Labels batch, contracted, a_only, b_only;
  for (int l : a.labels) {
    if (!has(b.labels, l)) a_only.push_back(l);
    else if (has(keep, l)) batch.push_back(l);
    else contracted.push_back(l);
  }
  for (int l : b.labels)
    if (!has(a.labels, l)) b_only.push_back(l);
  const Shape as = shape_of(a), bs = shape_of(b);
  auto axes_of = [](const Operand& o, const Labels& ls) {
    std::vector<int64_t> ax;
    for (int l : ls) ax.push_back(index_of(o.labels, l));
    return ax;
  };
  for (int l : contracted)
    if (as[index_of(a.labels, l)] != bs[index_of(b.labels, l)])
      c.fail("einsum contracts axes of sizes " + std::to_string(as[index_of(a.labels, l)]) + " and " +
             std::to_string(bs[index_of(b.labels, l)]));
  const std::vector<int64_t> ab = axes_of(a, batch), bb = axes_of(b, batch), aa = axes_of(a, a_only),
                             bo = axes_of(b, b_only), ac = axes_of(a, contracted), bc = axes_of(b, contracted);
  std::vector<int64_t> pa = ab, pb = bb;
  pa.insert(pa.end(), aa.begin(), aa.end());
  pa.insert(pa.end(), ac.begin(), ac.end());
  pb.insert(pb.end(), bc.begin(), bc.end());
  pb.insert(pb.end(), bo.begin(), bo.end());
  const int64_t M = product(as, aa), K = product(as, ac), N = product(bs, bo);
  Shape ma, mb, out_shape;
  for (size_t i = 0; i < batch.size(); ++i) {
    ma.push_back(as[static_cast<size_t>(ab[i])]);
    mb.push_back(bs[static_cast<size_t>(bb[i])]);
    out_shape.push_back(std::max(ma.back(), mb.back()));
  }
  ma.insert(ma.end(), {M, K});
  mb.insert(mb.end(), {K, N});
  for (int64_t x : aa) out_shape.push_back(as[static_cast<size_t>(x)]);
  for (int64_t x : bo) out_shape.push_back(bs[static_cast<size_t>(x)]);
  ir::Expr xa = c.reshape(c.transpose(a.value, pa), ma);
  ir::Expr xb = c.reshape(c.transpose(b.value, pb), mb);
  Operand r;
  r.value = c.reshape(c.op(OpCode::MatMul, {xa, xb}), out_shape);
  r.labels = batch;
  r.labels.insert(r.labels.end(), a_only.begin(), a_only.end());
  r.labels.insert(r.labels.end(), b_only.begin(), b_only.end());
  return r;
}

Outs convert_einsum(NodeContext& c) {
  std::string eq;
  for (char ch : c.attr_string("equation"))
    if (ch != ' ') eq += ch;
  const std::vector<ir::Expr> ins = c.variadic_inputs(1);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t p = 0;;) {
    const size_t q = lhs.find(',', p);
    terms.push_back(lhs.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  if (terms.size() != ins.size())
    c.fail("equation '" + eq + "' has " + std::to_string(terms.size()) + " operands, the node " + std::to_string(ins.size()));
  int64_t ellipsis_rank = 0;
  std::vector<Operand> ops;
  for (size_t i = 0; i < ins.size(); ++i) {
    Operand o{ins[i], parse_term(c, terms[i], static_cast<int64_t>(ir::shape_of(ins[i]).size()), &ellipsis_rank,
                                 std::nullopt)};
    if (ir::dtype_of(ins[i]) != ir::dtype_of(ins[0])) c.fail("einsum operands of different dtypes");
    ops.push_back(std::move(o));
  }
  Labels out;
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    out = parse_term(c, rhs, 0, nullptr, rhs.find("...") != std::string::npos ? ellipsis_rank : 0);
    for (size_t i = 0; i < out.size(); ++i) {
      if (std::count(out.begin(), out.end(), out[i]) > 1) c.fail("equation '" + eq + "' repeats an output letter");
      bool found = false;
      for (const Operand& o : ops) found = found || has(o.labels, out[i]);
      if (!found) c.fail("equation '" + eq + "' has an output letter no operand has");
    }
  } else {
    // Implicit output: the broadcast axes, then the letters that occur once, in alphabetical order.
    for (int64_t k = ellipsis_rank; k-- > 0;) out.push_back(kEllipsis + static_cast<int>(k));
    std::map<int, int> count;
    for (const Operand& o : ops)
      for (int l : o.labels) count[l]++;
    for (auto [l, n] : count)
      if (l < kEllipsis && n == 1) out.push_back(l);
  }

  for (Operand& o : ops) o = take_diagonals(c, std::move(o));
  // Contract left to right; an operand's labels that nothing after it needs are summed first.
  auto needed_after = [&](size_t i) {
    Labels n = out;
    for (size_t j = i + 1; j < ops.size(); ++j) n.insert(n.end(), ops[j].labels.begin(), ops[j].labels.end());
    return n;
  };
  Labels with_first = needed_after(0);
  Operand cur = sum_private(c, ops[0], with_first);
  for (size_t i = 1; i < ops.size(); ++i) {
    Labels keep = needed_after(i);
    Labels both = keep;
    both.insert(both.end(), cur.labels.begin(), cur.labels.end());
    Operand next = sum_private(c, ops[i], both);
    cur = contract(c, cur, next, keep);
  }
  cur = sum_private(c, cur, out);
  std::vector<int64_t> perm;
  for (int l : out) perm.push_back(index_of(cur.labels, l));
  return {c.transpose(cur.value, perm)};
}

}  // namespace

void register_einsum_converters(ConverterTable& t) { t.add("Einsum", 12, convert_einsum); }

}  // namespace sy::onnx
