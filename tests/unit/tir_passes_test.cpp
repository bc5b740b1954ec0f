// Loop-IR passes one at a time: arithmetic, simplify, loop partition, remove no-op, guard
// hoisting, vectorize legalization, unrolling, accumulator promotion, and the verifier.
#include <gtest/gtest.h>

#include "tir/arith.h"
#include "tir/hoist_guards.h"
#include "tir/loop_partition.h"
#include "tir/printer.h"
#include "tir/promote_accumulators.h"
#include "tir/remove_no_op.h"
#include "tir/simplify.h"
#include "tir/vectorize.h"
#include "tir/verifier.h"

using namespace sy;
using namespace sy::tir;

namespace {
RangeMap range(const Expr& v, int64_t lo, int64_t hi) { return {{v.get(), {int_imm(lo), int_imm(hi)}}}; }
int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST(TirArith, LinearFormsCancelAndIntervalsBound) {
  Expr i = var("i"), j = var("j");
  EXPECT_EQ(print_expr(simplify((i * 8 + j + 3) - (i * 8 + 1))), "j + 2");
  EXPECT_EQ(print_expr(simplify(i * 4 - i * 4)), "0");
  RangeMap r = range(j, 0, 7);
  r[i.get()] = {int_imm(0), int_imm(3)};
  auto b = const_bounds(i * 8 + j, r);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->first, 0);
  EXPECT_EQ(b->second, 31);
  EXPECT_TRUE(can_prove(i * 8 + j < 32, r));
  EXPECT_FALSE(can_prove(i * 8 + j < 31, r));
  // Symbolic ends: only j ranges; i stays a point.
  auto iv = interval_of(i * 8 + j * 2, range(j, 0, 3));
  ASSERT_TRUE(iv);
  EXPECT_EQ(print_expr(iv->min), "i * 8");
  EXPECT_EQ(print_expr(iv->max), "i * 8 + 6");
  EXPECT_EQ(floor_div(-7, 2), -4);
  EXPECT_EQ(floor_mod(-7, 2), 1);
}

TEST(TirSimplify, FoldsDivModMinMaxAndComparisons) {
  Expr i = var("i"), j = var("j");
  RangeMap r = range(j, 0, 7);
  EXPECT_EQ(print_expr(simplify((i * 8 + j) / 8, r)), "i");
  EXPECT_EQ(print_expr(simplify((i * 8 + j) % 8, r)), "j");
  EXPECT_EQ(print_expr(simplify(min(j, int_imm(9)), r)), "j");
  EXPECT_EQ(print_expr(simplify(j < 8, r)), "true");
  EXPECT_EQ(print_expr(simplify(j >= 8, r)), "false");
  EXPECT_EQ(print_expr(simplify(int_imm(-7) / 2)), "-4");
  // A flattened axis split back into rows and columns and re-flattened: (p / 14) * 14 + p % 14 == p,
  // also scaled and with other terms; mismatched divisors stay.
  Expr p = var("p");
  EXPECT_EQ(print_expr(simplify((p / 14) * 14 + p % 14)), "p");
  EXPECT_EQ(print_expr(simplify(i * 196 + (p / 14) * 56 + (p % 14) * 4 + 1)), "i * 196 + p * 4 + 1");
  EXPECT_EQ(print_expr(simplify((p / 14) * 28 + p % 14)), "p / 14 * 28 + p % 14");
  EXPECT_EQ(print_expr(simplify(float_imm(1.5) * float_imm(2.0))), "3.0f");
  EXPECT_EQ(print_expr(simplify(select(int_imm(1, DType::boolean), i, j))), "i");
}

// An unrolled tile's offset inside a block that the coefficients' gcd divides: (8i + 3) / 16 is
// (8i) / 16 for every i (8i + 3 never crosses a multiple of 16 that 8i does not), so the copies of
// an unrolled loop over 8 channels of a 16-channel group index one input channel alike. Offsets
// that reach the next multiple of the gcd, or divisors it does not divide, stay.
TEST(TirSimplify, TileOffsetsBelowTheGcdLeaveTheQuotient) {
  Expr i = var("i"), j = var("j");
  EXPECT_EQ(print_expr(simplify((i * 8 + 3) / 16)), "i * 8 / 16");
  EXPECT_EQ(print_expr(simplify((i * 8 + 3) % 16)), "i * 8 % 16 + 3");
  EXPECT_EQ(print_expr(simplify((i * 8 + j * 4 + 2) / 16)), "(i * 8 + j * 4) / 16");
  EXPECT_EQ(print_expr(simplify((i * 8 + 8) / 16)), "(i * 8 + 8) / 16");
  EXPECT_EQ(print_expr(simplify((i * 8 + 3) / 12)), "(i * 8 + 3) / 12");
  // The rule holds for floor division whatever the sign: checked on constants folded both ways.
  for (int64_t v = -40; v <= 40; ++v)
    for (int64_t b = 0; b < 8; ++b) {
      Expr x = int_imm(v);
      EXPECT_EQ(print_expr(simplify((x * 8 + b) / 16)), print_expr(simplify((x * 8) / 16))) << v << " " << b;
      EXPECT_EQ(print_expr(simplify((x * 8 + b) % 16)), print_expr(simplify((x * 8) % 16 + b))) << v << " " << b;
    }
}

// A reshape of a contiguous slice: i * 56 + l (l a vector lane below 56) divided by a plane (3136)
// and an image (451584) of 56-wide rows leaves l out of the quotient and alone in the remainder.
// Every value of small ranges checked against C's division; without the ranges (l could be 56 or
// negative) nothing changes.
TEST(TirSimplify, LanesBelowTheRowGcdLeaveTheQuotient) {
  Expr i = var("i"), l = var("l"), k = var("k");
  RangeMap r = range(l, 0, 55);
  r[i.get()] = {int_imm(0), int_imm(64511)};
  EXPECT_EQ(print_expr(simplify((i * 56 + l) / 3136, r)), "i / 56");
  EXPECT_EQ(print_expr(simplify((i * 56 + l) / 451584 * 451584, r)), "i / 8064 * 451584");
  EXPECT_EQ(print_expr(simplify((i * 56 + l) % 3136, r)), "i % 56 * 56 + l");
  EXPECT_EQ(print_expr(simplify((i * 56 + l) / 3136)), "(i * 56 + l) / 3136");
  EXPECT_EQ(print_expr(simplify((i * 56 + l) / 3136, range(l, 0, 56))), "(i * 56 + l) / 3136");
  // Exhaustive: i in [0, 40), k in [0, 3), l in [0, 5]: x = i*24 + k*6 + l + 1 by every divisor.
  for (int64_t c : {2, 3, 6, 12, 24, 48, 72, 7}) {
    RangeMap rr = range(l, 0, 4);
    rr[i.get()] = {int_imm(0), int_imm(39)};
    rr[k.get()] = {int_imm(0), int_imm(2)};
    const Expr x = i * 24 + k * 6 + l + 1;
    const Expr q = simplify(x / c, rr), m = simplify(x % c, rr);
    for (int64_t vi = 0; vi < 40; ++vi)
      for (int64_t vk = 0; vk < 3; ++vk)
        for (int64_t vl = 0; vl < 5; ++vl) {
          RangeMap at = range(i, vi, vi);
          at[k.get()] = {int_imm(vk), int_imm(vk)};
          at[l.get()] = {int_imm(vl), int_imm(vl)};
          const int64_t xv = vi * 24 + vk * 6 + vl + 1;
          auto qb = const_bounds(q, at), mb = const_bounds(m, at);
          ASSERT_TRUE(qb && mb) << print_expr(q) << " " << print_expr(m);
          ASSERT_EQ(qb->first, xv / c) << print_expr(q) << " at " << vi << "," << vk << "," << vl;
          ASSERT_EQ(mb->first, xv % c) << print_expr(m) << " at " << vi << "," << vk << "," << vl;
        }
  }
}

// topi's float -> integer conversion (NaN -> 0, saturated through int64) of a value clipped
// into int32's range converts through int32, NaN made 0 by max and min (no select on data); a
// value that may leave int32's range keeps the saturating form.
TEST(TirSimplify, AClippedFloatConvertsThroughInt32) {
  auto float_to_int = [](const Expr& v) {
    const double two63 = 9223372036854775808.0;
    Expr i = select(v < float_imm(-two63), int_imm(INT64_MIN), select(v >= float_imm(two63), int_imm(INT64_MAX), cast(DType::i64, v)));
    return cast(DType::u8, select(call("isnan", DType::boolean, {v}), int_imm(0), i));
  };
  Expr x = var("x", DType::f32);
  Expr clipped = min(float_imm(255.0), max(float_imm(0.0), x));
  EXPECT_EQ(print_expr(simplify(float_to_int(clipped))),
            "uint8(int32(max(min(255.0f, max(0.0f, x)), 0.0f)))");
  EXPECT_EQ(print_expr(simplify(float_to_int(min(float_imm(127.0), max(float_imm(-128.0), x))))),
            "uint8(int32(max(min(127.0f, max(-128.0f, x)), 0.0f) + min(min(127.0f, max(-128.0f, x)), 0.0f)))");
  for (const Expr& wide : {x, min(float_imm(3e9), max(float_imm(0.0), x)), max(float_imm(0.0), x)})
    EXPECT_NE(print_expr(simplify(float_to_int(wide))).find("isnan"), std::string::npos) << print_expr(wide);
  // Another select of the same shape whose arms v can reach stays.
  Expr reachable = select(call("isnan", DType::boolean, {clipped}), int_imm(0),
                          select(clipped < float_imm(10.0), int_imm(7), select(clipped >= float_imm(1e10), int_imm(8), cast(DType::i64, clipped))));
  EXPECT_NE(print_expr(simplify(reachable)).find("isnan"), std::string::npos);
}

TEST(TirSimplify, ANarrowIntegerCastGoesWhereTheValueFitsIt) {
  Expr x = var("x", DType::f32);
  auto through_int32 = [](const Expr& v) { return cast(DType::i32, max(v, float_imm(0.0)) + min(v, float_imm(0.0))); };
  Expr byte = through_int32(min(float_imm(255.0), max(float_imm(0.0), x)));
  EXPECT_EQ(print_expr(simplify(cast(DType::f32, cast(DType::u8, byte)))),
            "float32(int32(max(min(255.0f, max(0.0f, x)), 0.0f) + min(min(255.0f, max(0.0f, x)), 0.0f)))");
  Expr nonneg = cast(DType::i32, max(min(float_imm(255.0), max(float_imm(0.0), x)), float_imm(0.0)));
  EXPECT_EQ(print_expr(simplify(cast(DType::f32, cast(DType::u8, nonneg)))), "float32(int32(max(min(255.0f, max(0.0f, x)), 0.0f)))");
  // The byte stays where it is stored, where the value can leave its range, and where NaN could
  // reach the conversion (int32(NaN) is INT32_MIN on x86; uint8 of that is 0).
  EXPECT_EQ(simplify(cast(DType::u8, byte))->dtype, DType::u8);
  for (const Expr& v : {through_int32(min(float_imm(256.0), max(float_imm(0.0), x))), through_int32(min(float_imm(255.0), max(float_imm(-1.0), x))),
                        cast(DType::i32, min(float_imm(255.0), max(float_imm(0.0), x))), var("i", DType::i32)})
    EXPECT_NE(print_expr(simplify(cast(DType::f32, cast(DType::u8, v)))).find("uint8("), std::string::npos) << print_expr(v);
  // Integers: a uint8 b widened to int32 fits int16; an int8 c does not fit uint8.
  Expr b = var("b", DType::u8), c = var("c", DType::i8);
  EXPECT_EQ(print_expr(simplify(cast(DType::i32, cast(DType::i16, cast(DType::i32, b))))), "int32(b)");
  EXPECT_EQ(print_expr(simplify(cast(DType::i32, cast(DType::u8, cast(DType::i32, c))))), "int32(uint8(int32(c)))");
  EXPECT_EQ(print_expr(simplify(cast(DType::i32, cast(DType::u8, cast(DType::i16, c))))), "int32(uint8(int16(c)))");
}

TEST(TirSimplify, LoopsOfOneIterationAndDecidedBranches) {
  Expr i = var("i"), j = var("j");
  Buffer b = buffer("B", DType::f32, {16});
  Stmt s = for_loop(i, int_imm(0), int_imm(1), ForKind::Serial,
                    for_loop(j, int_imm(0), int_imm(8), ForKind::Serial,
                             if_then_else(i * 8 + j < 8, store(b, {i * 8 + j}, float_imm(1.0)))));
  EXPECT_EQ(print_stmt(simplify(s)), "for j in [0, 8) {\n  B[j] = 1.0f\n}\n");
}

TEST(TirLoopPartition, SplitsTheTailOffAGuardedLoop) {
  Expr o = var("o"), in = var("in");
  Buffer b = buffer("B", DType::f32, {30});
  Stmt s = for_loop(o, int_imm(0), int_imm(4), ForKind::Parallel,
                    for_loop(in, int_imm(0), int_imm(8), ForKind::Vectorized,
                             if_then_else(o * 8 + in < 30, store(b, {o * 8 + in}, float_imm(0.0)))));
  Stmt p = simplify(loop_partition(s));
  // The tail is a one-iteration piece of the parallel loop, still a loop: the code generators
  // share the whole loop's iterations out over the pieces (as a loop of its own the tail ran on
  // the first thread, after its share of the rest).
  EXPECT_EQ(print_stmt(p), R"(parallel for o in [0, 3) {
  vectorized for in in [0, 8) {
    B[o * 8 + in] = 0.0f
  }
}
parallel for o in [3, 4) {
  vectorized for in in [0, 8) {
    if in < 6 {
      B[in + 24] = 0.0f
    }
  }
}
)");
  // A second round partitions the remaining tail loop itself.
  EXPECT_EQ(print_stmt(simplify(loop_partition(p))), R"(parallel for o in [0, 3) {
  vectorized for in in [0, 8) {
    B[o * 8 + in] = 0.0f
  }
}
parallel for o in [3, 4) {
  vectorized for in in [0, 6) {
    B[in + 24] = 0.0f
  }
}
)");
  // A serial loop's one iteration is its body.
  Stmt serial = for_loop(o, int_imm(3), int_imm(1), ForKind::Serial, store(b, {o}, float_imm(0.0)));
  EXPECT_EQ(print_stmt(simplify(serial)), "B[3] = 0.0f\n");
}

TEST(TirLoopPartition, PeelsAPadsEdgesOffASelectInTheStoredValue) {
  // B[l] = A[clamp(l - 1)] inside [1, 17), else 0: the middle loop loses the select and the clamp
  // (a contiguous copy); the edges keep them.
  Expr l = var("l");
  Buffer a = buffer("A", DType::f32, {16}), b = buffer("B", DType::f32, {18});
  Expr inside = logical_and(l >= 1, l < 17);
  Expr src = load(a, {min(max(l - 1, int_imm(0)), int_imm(15))});
  Stmt s = for_loop(l, int_imm(0), int_imm(18), ForKind::Serial, store(b, {l}, select(inside, src, float_imm(0.0))));
  std::string text = print_stmt(simplify(loop_partition(s)));
  EXPECT_NE(text.find("for l in [1, 17) {\n  B[l] = A[l - 1]\n}"), std::string::npos) << text;
  EXPECT_EQ(text.find("for l in [0, 18)"), std::string::npos) << text;
}

// A pad's row test on a loop that fuses 4 channels of 16 rows holds on rows 1..14 of every
// channel: no prefix or suffix makes the loop guard-free, so the loop stays one loop.
TEST(TirLoopPartition, LeavesAGuardThatRepeatsAlongTheLoopAlone) {
  Expr r = var("r"), l = var("l");
  Buffer a = buffer("A", DType::f32, {4, 14, 14}), b = buffer("B", DType::f32, {64, 16});
  Expr row = r % 16;
  Expr inside = logical_and(logical_and(row >= 1, row < 15), logical_and(l >= 1, l < 15));
  Expr src = load(a, {r / 16, min(max(row - 1, int_imm(0)), int_imm(13)), min(max(l - 1, int_imm(0)), int_imm(13))});
  Stmt s = for_loop(r, int_imm(0), int_imm(64), ForKind::Parallel,
                    for_loop(l, int_imm(0), int_imm(16), ForKind::Serial, store(b, {r, l}, select(inside, src, float_imm(0.0)))));
  std::string text = print_stmt(simplify(loop_partition(s)));
  EXPECT_EQ(count_of(text, "parallel for r"), 1) << text;
  EXPECT_NE(text.find("parallel for r in [0, 64)"), std::string::npos) << text;
  // The column test does not repeat: the inner loop is still partitioned.
  EXPECT_NE(text.find("for l in [1, 15)"), std::string::npos) << text;
}

TEST(TirRemoveNoOp, DropsSelfStoresUnusedLetsAndEmptyLoops) {
  Expr i = var("i"), x = var("x");
  Buffer b = buffer("B", DType::f32, {4}), t = buffer("T", DType::f32, {4});
  Stmt s = seq({for_loop(i, int_imm(0), int_imm(4), ForKind::Serial, store(b, {i}, load(b, {i}))),
                let_stmt(x, var("y"), store(b, {int_imm(0)}, float_imm(1.0))),
                allocate(t, store(b, {int_imm(1)}, float_imm(2.0)))});
  EXPECT_EQ(print_stmt(remove_no_op(s)), "B[0] = 1.0f\nB[1] = 2.0f\n");
}

TEST(TirHoistGuards, InvariantTermsLeaveTheLoopsTheRestStay) {
  Expr r = var("r"), j = var("j"), p = var("p");
  Buffer b = buffer("B", DType::f32, {8, 16}), n = buffer("N", DType::i64, {1});
  // A tile's row guard and a column tail on the innermost vector loop: the row term goes out
  // of both loops, the column term stays with the store.
  Stmt body = if_then_else(logical_and(r < 5, j < 13), store(b, {r, j}, float_imm(1.0)));
  Stmt s = for_loop(j, int_imm(0), int_imm(16), ForKind::Vectorized, body);
  EXPECT_EQ(print_stmt(hoist_guards(s)), "if r < 5 {\n  vectorized for j in [0, 16) {\n    if j < 13 {\n      B[r, j] = 1.0f\n    }\n  }\n}\n")
      << print_stmt(hoist_guards(s));
  // Out of every loop it does not depend on, up to the one it does.
  Stmt two = for_loop(r, int_imm(0), int_imm(8), ForKind::Serial,
                      for_loop(j, int_imm(0), int_imm(16), ForKind::Vectorized, if_then_else(p < 3, store(b, {r, j}, float_imm(1.0)))));
  EXPECT_EQ(hoist_guards(two)->kind, StmtKind::IfThenElse) << print_stmt(hoist_guards(two));
  // Not out of a parallel loop; not with an else branch; not a condition that reads memory or
  // divides by a variable (it would be evaluated where the loop might not run).
  Stmt par = for_loop(j, int_imm(0), int_imm(16), ForKind::Parallel, body);
  EXPECT_EQ(print_stmt(hoist_guards(par)), print_stmt(par));
  Stmt with_else = for_loop(j, int_imm(0), int_imm(16), ForKind::Serial,
                            if_then_else(r < 5, store(b, {r, j}, float_imm(1.0)), store(b, {r, j}, float_imm(2.0))));
  EXPECT_EQ(print_stmt(hoist_guards(with_else)), print_stmt(with_else));
  Stmt reads = for_loop(j, int_imm(0), int_imm(16), ForKind::Serial,
                        if_then_else(r < load(n, {int_imm(0)}), store(b, {r, j}, float_imm(1.0))));
  EXPECT_EQ(print_stmt(hoist_guards(reads)), print_stmt(reads));
  Stmt divides = for_loop(j, int_imm(0), int_imm(16), ForKind::Serial,
                          if_then_else(r / p < 2, store(b, {r, j}, float_imm(1.0))));
  EXPECT_EQ(print_stmt(hoist_guards(divides)), print_stmt(divides));
}

TEST(TirVectorize, IllegalVectorLoopsBecomeSerialAndUnrollExpands) {
  Expr i = var("i"), k = var("k");
  Buffer b = buffer("B", DType::f32, {4}), a = buffer("A", DType::f32, {4, 4});
  // A reduction into B[0] stays a SIMD loop (the code generator gives it a reduction clause);
  // another store to one element on every iteration does not.
  Stmt red = for_loop(k, int_imm(0), int_imm(4), ForKind::Vectorized,
                      store(b, {int_imm(0)}, load(b, {int_imm(0)}) + load(a, {int_imm(0), k})));
  EXPECT_EQ(legalize_vectorize(red)->for_kind, ForKind::Vectorized);
  auto m = match_vector_reduction(red);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, ReduceKind::Sum);
  EXPECT_EQ(print_expr(m->operand), "A[0, k]");
  Stmt last = for_loop(k, int_imm(0), int_imm(4), ForKind::Vectorized, store(b, {int_imm(0)}, load(a, {int_imm(0), k})));
  EXPECT_EQ(legalize_vectorize(last)->for_kind, ForKind::Serial);
  Stmt self = for_loop(k, int_imm(0), int_imm(4), ForKind::Vectorized,
                       store(b, {int_imm(0)}, max(load(b, {int_imm(0)}), load(b, {int_imm(1)}))));
  EXPECT_EQ(legalize_vectorize(self)->for_kind, ForKind::Serial);
  Stmt ew = for_loop(k, int_imm(0), int_imm(4), ForKind::Vectorized, store(b, {k}, load(a, {int_imm(1), k})));
  EXPECT_EQ(legalize_vectorize(ew)->for_kind, ForKind::Vectorized);
  Stmt nested = for_loop(i, int_imm(0), int_imm(4), ForKind::Vectorized, ew);
  EXPECT_EQ(legalize_vectorize(nested)->for_kind, ForKind::Serial);
  Stmt unrolled = for_loop(i, int_imm(0), int_imm(2), ForKind::Unrolled, store(b, {i}, float_imm(0.0)));
  EXPECT_EQ(print_stmt(simplify(unroll_loops(unrolled))), "B[0] = 0.0f\nB[1] = 0.0f\n");
}

TEST(TirVerifier, ReportsScopeAndLoopErrors) {
  Expr i = var("i"), j = var("j");
  Buffer p = buffer("P", DType::f32, {4}), t = buffer("T", DType::f32, {4});
  PrimFunc ok{"ok", {p}, for_loop(i, int_imm(0), int_imm(4), ForKind::Serial, store(p, {i}, float_imm(0.0)))};
  EXPECT_TRUE(verify(ok).empty());
  PrimFunc bad{"bad", {p},
               seq({store(p, {j}, float_imm(0.0)), store(t, {int_imm(0)}, float_imm(0.0)),
                    for_loop(i, int_imm(0), int_imm(2), ForKind::Parallel,
                             for_loop(j, int_imm(0), var("n"), ForKind::Parallel, store(p, {j}, float_imm(1.0))))})};
  auto errs = verify(bad);
  std::string all;
  for (const auto& e : errs) all += e + "\n";
  EXPECT_NE(all.find("variable j is used outside its scope"), std::string::npos) << all;
  EXPECT_NE(all.find("buffer T is stored outside its scope"), std::string::npos) << all;
  EXPECT_NE(all.find("parallel loop j is nested in a parallel loop"), std::string::npos) << all;
  EXPECT_NE(all.find("variable n is used outside its scope"), std::string::npos) << all;
  EXPECT_THROW(check_valid(bad), InternalError);
}

TEST(TirPromoteAccumulators, WindowsAtAnOuterLoopsOffsetLeaveTheReduction) {
  Expr i = var("i"), r = var("r"), m = var("m"), m2 = var("m");
  Buffer acc = buffer("acc", DType::f32, {4, 2, 16}), x = buffer("X", DType::f32, {128}), y = buffer("Y", DType::f32, {4, 32});
  // Tile i of a group's buffer, two vector windows, accumulated over r; then read out.
  auto update = [&](const Expr& lane, int64_t w, const Expr& at) {
    return for_loop(lane, int_imm(0), int_imm(16), ForKind::Vectorized,
                    store(acc, {at, int_imm(w), lane}, load(acc, {at, int_imm(w), lane}) + load(x, {r * 16 + lane})));
  };
  auto nest = [&](const Stmt& reduction) {
    Expr j = var("j");
    Stmt out = for_loop(j, int_imm(0), int_imm(32), ForKind::Serial, store(y, {i, j}, load(acc, {i, j / 16, j % 16})));
    return allocate(acc, for_loop(i, int_imm(0), int_imm(4), ForKind::Serial, seq({reduction, out})));
  };
  Stmt s = nest(for_loop(r, int_imm(0), int_imm(8), ForKind::Serial, seq({update(m, 0, i), update(m2, 1, i)})));
  const std::string text = print_stmt(promote_accumulators(s));
  // Two window buffers, each read before the r loop and written after it; inside, only they.
  EXPECT_EQ(count_of(text, "allocate acc_acc"), 2) << text;
  const size_t loop = text.find("for r in"), end = text.find("] = acc_acc0[");
  ASSERT_NE(loop, std::string::npos) << text;
  ASSERT_NE(end, std::string::npos) << text;
  EXPECT_EQ(text.substr(loop, end - loop).find("acc[i"), std::string::npos) << text;
  EXPECT_LT(text.find("= acc[i, 0, m]"), loop) << text;

  // Left alone: a tile at a constant offset (the C compiler keeps it in registers itself), an
  // access under a guard, windows that overlap, a buffer only read.
  Stmt constant = nest(for_loop(r, int_imm(0), int_imm(8), ForKind::Serial, seq({update(m, 0, int_imm(0)), update(m2, 1, int_imm(0))})));
  EXPECT_EQ(print_stmt(promote_accumulators(constant)), print_stmt(constant));
  Stmt guarded = nest(for_loop(r, int_imm(0), int_imm(8), ForKind::Serial, seq({update(m, 0, i), if_then_else(r < 4, update(m2, 1, i))})));
  EXPECT_EQ(print_stmt(promote_accumulators(guarded)), print_stmt(guarded));
  Stmt shifted = for_loop(m2, int_imm(0), int_imm(16), ForKind::Vectorized,
                          store(acc, {i, int_imm(0), m2}, load(acc, {i, int_imm(0), m2}) + load(acc, {i, int_imm(0), m2 + 1})));
  Stmt overlap = nest(for_loop(r, int_imm(0), int_imm(8), ForKind::Serial, seq({update(m, 0, i), shifted})));
  EXPECT_EQ(print_stmt(promote_accumulators(overlap)), print_stmt(overlap));
  Stmt read_only = nest(for_loop(r, int_imm(0), int_imm(8), ForKind::Serial,
                                 for_loop(m, int_imm(0), int_imm(16), ForKind::Vectorized, store(x, {r * 16 + m}, load(acc, {i, int_imm(0), m})))));
  EXPECT_EQ(print_stmt(promote_accumulators(read_only)), print_stmt(read_only));
}
