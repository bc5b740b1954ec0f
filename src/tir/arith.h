// Integer arithmetic on index expressions: structural equality, linear forms, intervals, proofs.
#pragma once
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tir/expr.h"

namespace sy::tir {

bool expr_equal(const Expr& a, const Expr& b);

// sum(coeff * term) + constant over integer terms (variables or non-linear sub-expressions).
struct LinearForm {
  DType dtype = kIndexType;
  std::vector<std::pair<Expr, int64_t>> terms;  // in order of first appearance
  int64_t constant = 0;
};
LinearForm linear_form(const Expr& e);
Expr from_linear_form(const LinearForm& f);

// An inclusive integer range [min, max] whose ends are expressions (constants when known).
struct Interval {
  Expr min, max;
};
using RangeMap = std::unordered_map<const ExprNode*, Interval>;

// The range of integer e when the variables in ranges vary over their intervals (others are
// fixed). nullopt when no bound can be given.
std::optional<Interval> interval_of(const Expr& e, const RangeMap& ranges);
// Constant bounds of e, if interval_of gives constant ends.
std::optional<std::pair<int64_t, int64_t>> const_bounds(const Expr& e, const RangeMap& ranges);
// Whether the bool expression cond holds for every value of the ranged variables.
bool can_prove(const Expr& cond, const RangeMap& ranges);

// Floor division and modulo on integers.
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

}  // namespace sy::tir
