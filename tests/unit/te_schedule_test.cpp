// Tensor expressions and schedules: construction, the primitives' checks, the trace, lowering errors.
#include <gtest/gtest.h>

#include "te/lower.h"
#include "tir/printer.h"

using namespace sy;
using te::Expr;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}
}  // namespace

TEST(TeTensor, ComputeReadsAndReductions) {
  te::Tensor A = te::placeholder({3, 4}, DType::f32, "A");
  auto k = te::reduce_axis(4, "k");
  te::Tensor R = te::compute({3}, [&](Expr i) { return te::reduce_min(A(i, k.var), {k}); }, "R");
  EXPECT_TRUE(R.op()->is_reduction());
  EXPECT_EQ(R.op()->reduce_axes().size(), 1u);
  ASSERT_EQ(R.op()->inputs().size(), 1u);
  EXPECT_EQ(R.op()->inputs()[0], A.op());
  EXPECT_EQ(tir::print_expr(R.op()->body), "min(A(i, k), over [k:4])");
  EXPECT_EQ(R.dtype(), DType::f32);
  EXPECT_NE(error_of([&] { A(1); }).find("A indexed with 1 indices, tensor has rank 2"), std::string::npos);
  EXPECT_NE(error_of([&] {
              te::compute({3}, [&](Expr i) { return te::sum(A(i, k.var), {k}) * 2.0f; }, "bad");
            }).find("a reduction must be the whole body"),
            std::string::npos);
  EXPECT_NE(error_of([&] { te::compute({3}, [&](Expr i) { return A(i, 0) + tir::int_imm(1); }, "mixed"); })
                .find("different dtypes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { te::extern_op("E", {3}, DType::f32, {A}, "not an identifier"); }).find("C identifier"),
            std::string::npos);
}

TEST(TeSchedule, PrimitivesAreCheckedAndTraced) {
  te::Tensor A = te::placeholder({16, 16}, DType::f32, "A");
  te::Tensor B = te::compute({16, 16}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
  te::Tensor C = te::compute({16, 16}, [&](Expr i, Expr j) { return B(j, i) + 1.0f; }, "C");
  te::Schedule s({C});
  auto& c = s[C];
  auto [io, ii] = c.split(c.axis(0), 4);
  EXPECT_NE(error_of([&] { c.split(c.axis(0), 2); }).find("is not a current loop"), std::string::npos);
  // Captured by copy: clang 14 cannot capture structured bindings (C++20, clang 16).
  EXPECT_NE(error_of([&, io = io] { c.fuse(io, c.axis(1)); }).find("not adjacent"), std::string::npos);
  EXPECT_NE(error_of([&, ii = ii] { c.split(ii, 0); }).find("non-positive factor"), std::string::npos);
  c.reorder({c.axis(1), io, ii});
  EXPECT_EQ(c.leaves()[0], c.axis(1));
  EXPECT_EQ(c.leaves()[2], ii);
  auto f = c.fuse(c.axis(1), io);
  c.parallel(f);
  EXPECT_NE(error_of([&] { s[A].axis(0); }).find("A has 0 axes, no axis 0"), std::string::npos);
  EXPECT_NE(error_of([&] { s[A].compute_inline(); }).find("not a compute stage"), std::string::npos);
  EXPECT_NE(error_of([&] { c.compute_inline(); }).find("an output of the schedule"), std::string::npos);
  s[B].compute_inline();
  EXPECT_EQ(s.trace(), (std::vector<std::string>{"split C i 4", "reorder C j i.outer i.inner", "fuse C j i.outer",
                                                  "parallel C j.i.outer.fused", "compute_inline B"}));
  tir::PrimFunc fn = te::lower(s, {A, C}, "traced");
  EXPECT_NE(tir::print_func(fn).find("parallel for j.i.outer.fused in [0, 64)"), std::string::npos) << tir::print_func(fn);
}

TEST(TeSchedule, CacheWriteRulesAndReductionPrimitives) {
  te::Tensor A = te::placeholder({8, 8}, DType::f32, "A");
  auto k = te::reduce_axis(8, "k");
  te::Tensor S = te::compute({8}, [&](Expr i) { return te::sum(A(i, k.var), {k}); }, "S");
  te::Schedule s({S});
  EXPECT_NE(error_of([&] { s[S].parallel(s[S].reduce_axis(0)); }).find("reduce axis"), std::string::npos);
  EXPECT_NE(error_of([&] { s[S].compute_inline(); }).find("a reduction"), std::string::npos);
  EXPECT_NE(error_of([&] { s[S].fuse(s[S].axis(0), s[S].reduce_axis(0)); }).find("reduce axis with a data-parallel"),
            std::string::npos);
  s[S].split(s[S].axis(0), 2);
  EXPECT_NE(error_of([&] { s.cache_write(S); }).find("must come before"), std::string::npos);
}

TEST(TeLower, ArgumentsAndPlacementErrors) {
  te::Tensor A = te::placeholder({8}, DType::f32, "A");
  te::Tensor B = te::compute({8}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  te::Tensor C = te::compute({8}, [&](Expr i) { return B(i) * B(7 - i); }, "C");
  {
    te::Schedule s({C});
    EXPECT_NE(error_of([&] { te::lower(s, {C}, "f"); }).find("placeholder A is not among the arguments"), std::string::npos);
    EXPECT_NE(error_of([&] { te::lower(s, {A}, "f"); }).find("output C is not among the arguments"), std::string::npos);
  }
  {
    // B computed inside C's split loop but also read at the other end of C: the region is all of B.
    te::Schedule s({C});
    auto [o, in] = s[C].split(s[C].axis(0), 4);
    s[B].compute_at(s[C], o);
    tir::PrimFunc f = te::lower(s, {A, C}, "f");
    EXPECT_NE(tir::print_func(f).find("allocate B: float32[8]"), std::string::npos) << tir::print_func(f);
  }
  {
    // compute_at a loop that a later split removed.
    te::Schedule s({C});
    s[B].compute_at(s[C], s[C].axis(0));
    s[C].split(s[C].axis(0), 2);
    EXPECT_NE(error_of([&] { te::lower(s, {A, C}, "f"); }).find("no longer a loop"), std::string::npos);
  }
  {
    // Nested parallel loops.
    te::Schedule s({C});
    s[C].parallel(s[C].axis(0));
    s[B].compute_at(s[C], s[C].axis(0));
    s[B].parallel(s[B].axis(0));
    EXPECT_NE(error_of([&] { te::lower(s, {A, C}, "f"); }).find("nests a parallel loop"), std::string::npos);
  }
}

TEST(TeLower, PlaceholderArgumentTheOutputsDoNotRead) {
  // A function parameter the outputs never read (an op whose value is constant for its
  // attributes) stays a parameter, in its position.
  te::Tensor A = te::placeholder({8}, DType::f32, "A");
  te::Tensor B = te::compute({8}, [&](Expr) { return tir::const_of(DType::f32, 1.0); }, "B");
  te::Schedule s({B});
  tir::PrimFunc f = te::lower(s, {A, B}, "f");
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(f.params[0]->name, "A");
  EXPECT_EQ(f.params[1]->name, "B");
}

TEST(TeLower, DumpsTheIrAfterNamedPasses) {
  te::Tensor A = te::placeholder({10}, DType::f32, "A");
  te::Tensor B = te::compute({10}, [&](Expr i) { return A(i) * 3.0f; }, "B");
  te::Schedule s({B});
  s[B].split(s[B].axis(0), 4);
  te::LowerOptions lo;
  lo.passes.dump_after = {"lower", "loop_partition"};
  std::vector<std::string> seen;
  std::string first;
  lo.passes.dump = [&](const std::string& pass, const std::string& text) {
    seen.push_back(pass);
    if (first.empty()) first = text;
  };
  te::lower(s, {A, B}, "dumped", lo);
  EXPECT_EQ(seen, (std::vector<std::string>{"lower", "loop_partition", "loop_partition"}));
  EXPECT_NE(first.find("if i.outer * 4 + i.inner < 10"), std::string::npos) << first;
}

TEST(TeSchedule, ComputeRootUndoesPlacement) {
  te::Tensor A = te::placeholder({8}, DType::f32, "A");
  te::Tensor B = te::compute({8}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  te::Tensor C = te::compute({8}, [&](Expr i) { return B(i) * 2.0f; }, "C");
  te::Schedule s({C});
  s[B].compute_inline();
  EXPECT_EQ(tir::print_func(te::lower(s, {A, C}, "f")).find("allocate B"), std::string::npos);
  s[B].compute_at(s[C], s[C].axis(0));
  EXPECT_NE(tir::print_func(te::lower(s, {A, C}, "f")).find("allocate B: float32[1]"), std::string::npos);
  s[B].compute_root();
  EXPECT_NE(tir::print_func(te::lower(s, {A, C}, "f")).find("allocate B: float32[8]"), std::string::npos);
  EXPECT_EQ(s.trace().back(), "compute_root B");
  EXPECT_THROW(s[A].compute_root(), Error);
}
