#include "te/lower.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tir/arith.h"
#include "tir/functor.h"
#include "tir/printer.h"
#include "tir/simplify.h"

namespace sy::te {

namespace {

using tir::Buffer;
using tir::ExprKind;
using tir::Stmt;

struct Region {
  std::vector<Expr> min;  // in terms of the consumer's enclosing loop variables
  Shape extent;
};

class Lowerer {
 public:
  Lowerer(Schedule& sch, const std::string& fname) : sch_(sch), fname_(fname) {}

  tir::PrimFunc run(const std::vector<Tensor>& args) {
    tir::PrimFunc f;
    f.name = fname_;
    std::unordered_set<const Stage*> arg_stages;
    for (const auto& t : args) {
      Stage* st = sch_.find(t.op().get());
      if (!st && t.op()->kind == OpKind::Placeholder) {
        // An input the outputs do not read (e.g. an op whose value is a constant for its
        // attributes): still a parameter of the function, so that the calling convention holds.
        f.params.push_back(tir::buffer(t.name(), t.dtype(), t.shape()));
        continue;
      }
      if (!st) throw Error("lower " + fname_ + ": argument " + t.name() + " is not part of the schedule");
      if (!arg_stages.insert(st).second) throw Error("lower " + fname_ + ": argument " + t.name() + " is given twice");
      if (st->attach() != AttachKind::Root)
        throw Error("lower " + fname_ + ": argument " + t.name() + " is inlined or computed at another stage");
      Buffer b = tir::buffer(t.name(), t.dtype(), t.shape());
      buffers_[st] = b;
      f.params.push_back(b);
    }
    for (const auto& t : sch_.outputs())
      if (!arg_stages.count(sch_.find(t.op().get())))
        throw Error("lower " + fname_ + ": output " + t.name() + " is not among the arguments");
    std::vector<Buffer> intermediates;
    std::vector<Stmt> body;
    for (Stage* st : sch_.stages()) {
      if (st->op()->kind == OpKind::Placeholder) {
        if (!arg_stages.count(st)) throw Error("lower " + fname_ + ": placeholder " + st->name() + " is not among the arguments");
        continue;
      }
      if (st->attach() != AttachKind::Root) continue;
      if (!buffers_.count(st)) {
        Buffer b = tir::buffer(st->name(), st->op()->dtype, st->op()->shape);
        buffers_[st] = b;
        intermediates.push_back(b);
      }
      body.push_back(emit(st));
    }
    Stmt s = tir::seq(body);
    for (auto it = intermediates.rbegin(); it != intermediates.rend(); ++it) s = tir::allocate(*it, s);
    f.body = s;
    return f;
  }

 private:
  Stage* stage_of(const tir::Producer& p) {
    Stage* st = sch_.find(static_cast<const OperationNode*>(p.get()));
    SY_CHECK(st) << "tensor " << p->producer_name() << " has no stage";
    return st;
  }

  // Replaces reads of inlined stages by their bodies.
  Expr expand_inline(const Expr& e) {
    return tir::mutate_expr(e, [&](const Expr& x) -> Expr {
      if (x->kind != ExprKind::TensorRead) return x;
      Stage* st = stage_of(x->producer);
      if (st->attach() != AttachKind::Inline) return x;
      const Operation& op = st->op();
      tir::VarMap m;
      for (size_t d = 0; d < op->axes.size(); ++d) m[op->axes[d].var.get()] = x->operands[d];
      return expand_inline(tir::substitute(op->body, m));
    });
  }

  // Replaces reads of realized stages by loads from their buffers (offset by their region).
  Expr resolve_reads(const Expr& e) {
    return tir::mutate_expr(e, [&](const Expr& x) -> Expr {
      if (x->kind != ExprKind::TensorRead) return x;
      Stage* st = stage_of(x->producer);
      auto b = buffers_.find(st);
      if (b == buffers_.end())
        throw Error("lower " + fname_ + ": " + st->name() + " is read outside the loops it is computed in");
      std::vector<Expr> idx = x->operands;
      auto r = regions_.find(st);
      if (r != regions_.end())
        for (size_t d = 0; d < idx.size(); ++d) idx[d] = tir::simplify(idx[d] - r->second.min[d]);
      return tir::load(b->second, idx);
    });
  }

  Stmt emit(Stage* st) {
    if (st->op()->kind == OpKind::Extern) return emit_extern(st);
    return emit_compute(st);
  }

  Stmt emit_extern(Stage* st) {
    const Operation& op = st->op();
    std::vector<Buffer> bufs;
    for (const auto& in : op->extern_inputs) {
      Stage* is = sch_.find(in.get());
      SY_CHECK(is) << "extern input without a stage";
      if (is->attach() != AttachKind::Root)
        throw Error("lower " + fname_ + ": " + is->name() + " is passed to extern stage " + op->name +
                    " and so must be computed whole (not inlined or computed at another stage)");
      bufs.push_back(buffers_.at(is));
    }
    bufs.push_back(buffers_.at(st));
    return tir::extern_call(op->extern_func, bufs, op->extern_args, op->extern_stateful);
  }

  Stmt emit_compute(Stage* st) {
    const Operation& op = st->op();
    const size_t nd = op->axes.size();
    const auto& roots = st->roots();
    const auto& leaves = st->leaves();
    const Region* region = regions_.count(st) ? &regions_.at(st) : nullptr;

    // Extents of every axis, from the root extents (the region's for compute_at stages).
    std::unordered_map<const AxisNode*, int64_t> ext;
    for (size_t d = 0; d < roots.size(); ++d)
      ext[roots[d].get()] = d < nd ? (region ? region->extent[d] : op->shape[d]) : roots[d]->extent;
    for (const auto& r : st->relations()) {
      if (r.kind == AxisRelation::Split) {
        const int64_t e = ext.at(r.parent.get()), f = std::min(r.factor, e);
        ext[r.outer.get()] = (e + f - 1) / f;
        ext[r.inner.get()] = f;
      } else {
        ext[r.parent.get()] = ext.at(r.outer.get()) * ext.at(r.inner.get());
      }
    }
    // Values of every axis in terms of the leaf loop variables; tail predicates of splits.
    std::unordered_map<const AxisNode*, Expr> val;
    for (const auto& l : leaves) val[l.get()] = l->var;
    std::vector<Expr> data_preds, reduce_preds;
    const auto& rels = st->relations();
    for (auto it = rels.rbegin(); it != rels.rend(); ++it) {
      if (it->kind == AxisRelation::Split) {
        const int64_t e = ext.at(it->parent.get()), f = ext.at(it->inner.get());
        Expr v = val.at(it->outer.get()) * tir::int_imm(f) + val.at(it->inner.get());
        val[it->parent.get()] = v;
        if (e % f != 0) (it->parent->reduce ? reduce_preds : data_preds).push_back(v < tir::int_imm(e));
      } else {
        const Expr& v = val.at(it->parent.get());
        const int64_t ie = ext.at(it->inner.get());
        // With an axis of extent 1 the other one is v itself, not v % ie: the mod would hide that
        // a tile of v is a tile of the axis from bound inference (dense's flattened (1, S) rows).
        const bool outer_one = ext.at(it->outer.get()) == 1, inner_one = ie == 1;
        val[it->outer.get()] = outer_one ? tir::int_imm(0) : v / tir::int_imm(ie);
        val[it->inner.get()] = inner_one ? tir::int_imm(0) : outer_one ? v : v % tir::int_imm(ie);
      }
    }
    tir::VarMap vm;
    std::vector<Expr> store_idx;
    for (size_t d = 0; d < nd; ++d) {
      Expr rel = tir::simplify(val.at(roots[d].get()));
      store_idx.push_back(rel);
      Expr abs_idx = region ? tir::simplify(region->min[d] + rel) : rel;
      vm[op->axes[d].var.get()] = abs_idx;
      if (region) {
        data_preds.push_back(abs_idx < tir::int_imm(op->shape[d]));
        data_preds.push_back(abs_idx >= tir::int_imm(0));
      }
    }
    for (size_t r = nd; r < roots.size(); ++r) vm[op->reduce_axes()[r - nd].var.get()] = tir::simplify(val.at(roots[r].get()));

    Expr body = expand_inline(op->body);
    Expr src = tir::substitute(op->is_reduction() ? body->operands[0] : body, vm);

    // Stages computed at each leaf, with their regions (inferred consumers first: a stage computed
    // at the same loop may read an earlier one).
    std::vector<std::vector<Stage*>> attached(leaves.size());
    for (Stage* p : sch_.stages()) {
      if (p->attach() != AttachKind::At || p->attach_stage() != st) continue;
      auto pos = std::find(leaves.begin(), leaves.end(), p->attach_axis());
      if (pos == leaves.end())
        throw Error("lower " + fname_ + ": " + p->name() + " is computed at a loop of " + st->name() + " that is no longer a loop (split or fused later)");
      attached[static_cast<size_t>(pos - leaves.begin())].push_back(p);
    }
    // Innermost attach points first: a stage computed at an outer loop may be read by stages
    // computed at inner loops, whose regions then vary with the loops in between.
    std::vector<Stage*> inner_stages;
    for (size_t k = leaves.size(); k-- > 0;) {
      tir::RangeMap inner;
      for (size_t j = k + 1; j < leaves.size(); ++j)
        inner[leaves[j]->var.get()] = {tir::int_imm(0), tir::int_imm(ext.at(leaves[j].get()) - 1)};
      std::vector<ReadSource> sources = {{st, src, inner}};
      for (Stage* q : inner_stages) {
        ReadSource rs = region_source(q);
        rs.ranges.insert(inner.begin(), inner.end());
        sources.push_back(std::move(rs));
      }
      for (size_t i = attached[k].size(); i-- > 0;) {
        Stage* p = attached[k][i];
        regions_[p] = infer_region(p, sources);
        buffers_[p] = tir::buffer(p->name(), p->op()->dtype, regions_[p].extent);
        ReadSource rs = region_source(p);
        rs.ranges.insert(inner.begin(), inner.end());
        sources.push_back(std::move(rs));
        inner_stages.push_back(p);
      }
    }

    const Buffer& out = buffers_.at(st);
    Expr value = resolve_reads(src);
    auto guard = [](const std::vector<Expr>& preds, Stmt s) {
      Expr c;
      for (const auto& p : preds) c = c ? tir::logical_and(c, p) : p;
      return c ? tir::if_then_else(c, s) : s;
    };
    Stmt update;
    int r0 = -1;
    if (op->is_reduction()) {
      Expr cur = tir::load(out, store_idx);
      switch (body->reduce_kind) {
        case tir::ReduceKind::Sum: value = cur + value; break;
        case tir::ReduceKind::Max: value = tir::max(cur, value); break;
        case tir::ReduceKind::Min: value = tir::min(cur, value); break;
      }
      std::vector<Expr> preds = data_preds;
      preds.insert(preds.end(), reduce_preds.begin(), reduce_preds.end());
      update = guard(preds, tir::store(out, store_idx, value));
      for (size_t k = 0; k < leaves.size() && r0 < 0; ++k)
        if (leaves[k]->reduce) r0 = static_cast<int>(k);
    } else {
      update = guard(data_preds, tir::store(out, store_idx, value));
    }
    Stmt nest = update;
    for (size_t k = leaves.size(); k-- > 0;) {
      if (!attached[k].empty()) {
        std::vector<Stmt> parts;
        for (Stage* p : attached[k]) parts.push_back(emit(p));
        parts.push_back(nest);
        nest = tir::seq(parts);
        for (auto it = attached[k].rbegin(); it != attached[k].rend(); ++it) nest = tir::allocate(buffers_.at(*it), nest);
      }
      nest = loop(leaves[k], ext, nest);
      if (static_cast<int>(k) == r0) {
        Stmt init = guard(data_preds, tir::store(out, store_idx, tir::reduce_identity(body->reduce_kind, op->dtype)));
        for (size_t j = leaves.size(); j-- > k + 1;)
          if (!leaves[j]->reduce) init = loop(leaves[j], ext, init);
        nest = tir::seq({init, nest});
      }
    }
    return nest;
  }

  static Stmt loop(const Axis& a, const std::unordered_map<const AxisNode*, int64_t>& ext, Stmt body) {
    return tir::for_loop(a->var, tir::int_imm(0), tir::int_imm(ext.at(a.get())), a->kind, std::move(body));
  }

  // Reads that a region must cover: an expression (a stage's body) whose ranged variables vary.
  struct ReadSource {
    Stage* reader;
    Expr expr;
    tir::RangeMap ranges;
  };

  // The body of a compute_at stage over its whole region, with fresh ranged index variables.
  ReadSource region_source(Stage* p) {
    const Operation& op = p->op();
    const Region& r = regions_.at(p);
    tir::VarMap m;
    tir::RangeMap ranges;
    for (size_t d = 0; d < op->axes.size(); ++d) {
      Expr v = tir::var(op->axes[d].var->name);
      ranges[v.get()] = {tir::int_imm(0), tir::int_imm(r.extent[d] - 1)};
      m[op->axes[d].var.get()] = r.min[d] + v;
    }
    for (const auto& iv : op->reduce_axes()) ranges[iv.var.get()] = {tir::int_imm(0), tir::int_imm(iv.extent - 1)};
    Expr body = expand_inline(op->body);
    if (op->is_reduction()) body = body->operands[0];
    return {p, tir::substitute(body, m), ranges};
  }

  // The region of producer p that its readers (the consumer's loops inside the attach point and the
  // stages computed at the same point) need.
  Region infer_region(Stage* p, const std::vector<ReadSource>& sources) {
    const size_t nd = p->op()->shape.size();
    std::vector<std::optional<tir::Interval>> box(nd);
    auto fail = [&](const std::string& why) {
      return Error("lower " + fname_ + ": cannot infer the region of " + p->name() + " computed at " +
                   p->attach_stage()->name() + ": " + why);
    };
    // Every reader must be one of the sources.
    for (Stage* r : sch_.stages()) {
      if (r->attach() == AttachKind::Inline || r == p) continue;
      bool reads = false;
      std::function<void(const Operation&)> scan = [&](const Operation& op) {
        for (const auto& in : op->inputs()) {
          Stage* is = sch_.find(in.get());
          if (is == p) reads = true;
          else if (is && is->attach() == AttachKind::Inline) scan(is->op());
        }
      };
      scan(r->op());
      if (!reads) continue;
      bool listed = false;
      for (const auto& s : sources) listed |= s.reader == r;
      if (!listed) throw fail(r->name() + " reads it outside that loop");
    }
    // Per dimension: the union of the read intervals, or the whole dimension when the reads have
    // no bound or lie at positions that do not differ by a constant.
    bool any = false;
    std::vector<bool> whole(nd, false);
    for (size_t d = 0; d < nd; ++d) whole[d] = p->covers(d);
    for (const auto& s : sources) {
      tir::visit_expr(s.expr, [&](const Expr& x) {
        if (x->kind != ExprKind::TensorRead || stage_of(x->producer) != p) return;
        any = true;
        for (size_t d = 0; d < nd; ++d) {
          if (whole[d]) continue;
          // Simplified first: a fused axis split back into its parts ((m / S) * S + m % S) is m again.
          auto iv = tir::interval_of(tir::simplify(x->operands[d]), s.ranges);
          if (!iv) {
            whole[d] = true;
            continue;
          }
          if (!box[d]) {
            box[d] = iv;
            continue;
          }
          auto lo = tir::const_bounds(tir::simplify(iv->min - box[d]->min), {});
          auto hi = tir::const_bounds(tir::simplify(iv->max - box[d]->max), {});
          if (!lo || !hi) {
            whole[d] = true;
            continue;
          }
          if (lo->first < 0) box[d]->min = iv->min;
          if (hi->first > 0) box[d]->max = iv->max;
        }
      });
    }
    if (!any) throw fail("no stage computed in that loop reads it");
    Region r;
    for (size_t d = 0; d < nd; ++d) {
      const int64_t dim = p->op()->shape[d];
      if (whole[d]) {
        r.min.push_back(tir::int_imm(0));
        r.extent.push_back(dim);
        continue;
      }
      Expr lo = tir::simplify(box[d]->min), hi = tir::simplify(box[d]->max);
      int64_t e = 0, c = 0;
      if (!tir::is_int_const(tir::simplify(hi - lo + tir::int_imm(1)), &e)) e = dim;  // e.g. a data-dependent window
      // Reads outside the tensor are never made (tails are guarded): clip the region to it.
      if (e >= dim) {
        lo = tir::int_imm(0);
        e = dim;
      } else if (tir::is_int_const(lo, &c) && c < 0) {
        e = std::min(e + c, dim);
        lo = tir::int_imm(0);
      } else if (tir::is_int_const(lo, &c) && c + e > dim) {
        e = dim - c;
      }
      r.min.push_back(lo);
      r.extent.push_back(e);
    }
    return r;
  }

  Schedule& sch_;
  std::string fname_;
  std::unordered_map<const Stage*, Buffer> buffers_;
  std::unordered_map<const Stage*, Region> regions_;
};

bool has_nested_parallel(const Stmt& s, bool inside) {
  if (!s) return false;
  bool here = s->kind == tir::StmtKind::For && s->for_kind == tir::ForKind::Parallel;
  if (here && inside) return true;
  inside |= here;
  if (has_nested_parallel(s->body, inside) || has_nested_parallel(s->else_body, inside)) return true;
  for (const auto& c : s->seq)
    if (has_nested_parallel(c, inside)) return true;
  return false;
}

}  // namespace

tir::PrimFunc lower(Schedule& sch, const std::vector<Tensor>& args, const std::string& name, const LowerOptions& opts) {
  tir::PrimFunc f = Lowerer(sch, name).run(args);
  if (has_nested_parallel(f.body, false))
    throw Error("lower " + name + ": the schedule nests a parallel loop inside another parallel loop");
  if (opts.run_passes) f = tir::run_default_passes(std::move(f), opts.passes);
  return f;
}

}  // namespace sy::te
