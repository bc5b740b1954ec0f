// Scalar expressions of the loop IR (shared with tensor expressions): immutable, shared nodes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/dtype.h"
#include "support/error.h"
#include "support/tensor.h"

namespace sy::tir {

enum class ExprKind {
  IntImm, FloatImm, Var,
  Add, Sub, Mul, Div, Mod, Min, Max,  // Div/Mod: floor semantics on integers, true division on floats
  EQ, NE, LT, LE, GT, GE, And, Or, Not,
  Select,       // operands: cond, true value, false value
  Cast,         // operands: value; dtype is the target
  Call,         // pure math intrinsic `name` (exp, log, sqrt, tanh, ...) on operands
  Load,         // buffer[operands...] (one index per dimension)
  TensorRead,   // tensor expressions only: producer(operands...); replaced by Load when lowered
  Reduce,       // tensor expressions only: combine operands[0] over reduce axes
};

enum class ReduceKind { Sum, Max, Min };

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

// A memory region of dense row-major elements. Identity is the node; the name is for printing.
struct BufferNode {
  BufferNode(std::string n, DType t, Shape s) : name(std::move(n)), dtype(t), shape(std::move(s)) {}
  const std::string name;
  const DType dtype;
  const Shape shape;
  int64_t numel() const { return shape_numel(shape); }
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer buffer(std::string name, DType dtype, Shape shape);

// Something a TensorRead reads from (a tensor-expression operation); defined by src/te.
struct ProducerNode {
  virtual ~ProducerNode() = default;
  virtual const std::string& producer_name() const = 0;
  virtual const Shape& producer_shape() const = 0;
  virtual DType producer_dtype() const = 0;
};
using Producer = std::shared_ptr<const ProducerNode>;

// An iteration axis [0, extent) bound to a variable.
struct IterVar {
  Expr var;
  int64_t extent = 0;
};

struct ExprNode {
  ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
  ExprKind kind;
  DType dtype;
  int64_t int_value = 0;       // IntImm
  double float_value = 0;      // FloatImm
  std::string name;            // Var, Call
  std::vector<Expr> operands;  // children, in order
  Buffer buffer;               // Load
  Producer producer;           // TensorRead
  ReduceKind reduce_kind = ReduceKind::Sum;  // Reduce
  std::vector<IterVar> reduce_axes;          // Reduce

  bool is(ExprKind k) const { return kind == k; }
  bool is_const() const { return kind == ExprKind::IntImm || kind == ExprKind::FloatImm; }
};

// The index type of loops and subscripts.
inline constexpr DType kIndexType = DType::i64;

// ---- builders (dtype mismatches between operands are user errors: sy::Error) ----
Expr int_imm(int64_t v, DType t = kIndexType);
Expr float_imm(double v, DType t = DType::f32);
Expr const_of(DType t, double v);  // an immediate of type t holding v
Expr var(std::string name, DType t = kIndexType);
Expr binary(ExprKind k, Expr a, Expr b);  // arithmetic, min/max, comparisons, and/or
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr cond, Expr t, Expr f);
Expr cast(DType t, Expr v);
Expr logical_not(Expr a);
Expr call(std::string name, DType t, std::vector<Expr> args);
Expr load(Buffer b, std::vector<Expr> indices);
Expr tensor_read(Producer p, std::vector<Expr> indices);
Expr reduce(ReduceKind k, Expr source, std::vector<IterVar> axes);
// The identity of a reduction (0 for sum, lowest value for max, highest for min) in dtype t.
Expr reduce_identity(ReduceKind k, DType t);
// Rebuilds e with new operands (same kind, payload and dtype); returns e itself if unchanged.
Expr with_operands(const Expr& e, std::vector<Expr> operands);

bool is_int_const(const Expr& e, int64_t* value = nullptr);
bool is_comparison(ExprKind k);
const char* expr_kind_name(ExprKind k);

// Operators: an int/double on one side takes the dtype of the other side.
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator-(Expr a);
// Not operators (== and && on shared pointers must keep their usual meaning).
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);

#define SY_TIR_SCALAR_OPS(OP)                                                        \
  inline Expr operator OP(Expr a, int64_t b) { return a OP const_of(a->dtype, double(b)); } \
  inline Expr operator OP(int64_t a, Expr b) { return const_of(b->dtype, double(a)) OP b; } \
  inline Expr operator OP(Expr a, int b) { return a OP int64_t(b); }                 \
  inline Expr operator OP(int a, Expr b) { return int64_t(a) OP b; }                 \
  inline Expr operator OP(Expr a, double b) { return a OP const_of(a->dtype, b); }   \
  inline Expr operator OP(double a, Expr b) { return const_of(b->dtype, a) OP b; }
SY_TIR_SCALAR_OPS(+)
SY_TIR_SCALAR_OPS(-)
SY_TIR_SCALAR_OPS(*)
SY_TIR_SCALAR_OPS(/)
SY_TIR_SCALAR_OPS(%)
SY_TIR_SCALAR_OPS(<)
SY_TIR_SCALAR_OPS(<=)
SY_TIR_SCALAR_OPS(>)
SY_TIR_SCALAR_OPS(>=)
#undef SY_TIR_SCALAR_OPS

// Common math intrinsics (float operands).
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr tanh(Expr x);
Expr abs(Expr x);

}  // namespace sy::tir
