// Tensor expressions: placeholders, computes (an index function over output axes, optionally one
// top-level reduction: sum, max, min over reduce axes) and extern stages (an opaque call).
//
//   Tensor A = placeholder({M, K}, DType::f32, "A"), B = placeholder({K, N}, DType::f32, "B");
//   IterVar k = reduce_axis(K, "k");
//   Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k.var) * B(k.var, j), {k}); }, "C");
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tir/expr.h"

namespace sy::te {

using tir::Expr;
using tir::IterVar;

enum class OpKind { Placeholder, Compute, Extern };

class Tensor;
struct OperationNode;
using Operation = std::shared_ptr<const OperationNode>;

struct OperationNode : tir::ProducerNode {
  OpKind kind = OpKind::Placeholder;
  std::string name;
  Shape shape;
  DType dtype = DType::f32;
  std::vector<IterVar> axes;  // Compute: one data-parallel axis per output dimension
  Expr body;                  // Compute: the value at axes; a Reduce only at the top
  std::vector<Operation> extern_inputs;  // Extern: tensors passed (in order) before the output
  std::string extern_func;               // Extern: C symbol, called as func(inputs..., output, args...)
  std::vector<Expr> extern_args;         // Extern: scalar arguments after the buffers
  bool extern_stateful = false;          // Extern: a stateful site (see stateful_extern_op)

  const std::string& producer_name() const override { return name; }
  const Shape& producer_shape() const override { return shape; }
  DType producer_dtype() const override { return dtype; }
  // The reduce axes of a compute whose body is a reduction (empty otherwise).
  const std::vector<IterVar>& reduce_axes() const;
  bool is_reduction() const { return body && body->kind == tir::ExprKind::Reduce; }
  // Operations this one reads, each once, in order of first use.
  std::vector<Operation> inputs() const;
};

// A handle on the (single) output of an operation; call it with indices to read an element.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Operation op) : op_(std::move(op)) {}
  const Operation& op() const { return op_; }
  const std::string& name() const { return op_->name; }
  const Shape& shape() const { return op_->shape; }
  DType dtype() const { return op_->dtype; }
  size_t ndim() const { return op_->shape.size(); }

  Expr operator()(std::vector<Expr> indices) const;
  template <typename... I>
  Expr operator()(I... indices) const { return (*this)(std::vector<Expr>{to_expr(indices)...}); }

 private:
  static Expr to_expr(const Expr& e) { return e; }
  static Expr to_expr(int64_t v) { return tir::int_imm(v); }
  static Expr to_expr(int v) { return tir::int_imm(v); }
  Operation op_;
};

Tensor placeholder(Shape shape, DType dtype, std::string name);

// body receives one index variable per output dimension.
Tensor compute(Shape shape, const std::function<Expr(const std::vector<Expr>&)>& body, std::string name);
// Convenience: a body taking one Expr per dimension, e.g. [&](Expr i, Expr j) { ... }.
template <typename F>
  requires(!std::is_invocable_v<F, const std::vector<Expr>&>)
Tensor compute(Shape shape, F&& body, std::string name) {
  const size_t n = shape.size();
  return compute(std::move(shape), [&, n](const std::vector<Expr>& i) -> Expr {
    if constexpr (std::is_invocable_v<F>) { if (n == 0) return body(); }
    if constexpr (std::is_invocable_v<F, Expr>) { if (n == 1) return body(i[0]); }
    if constexpr (std::is_invocable_v<F, Expr, Expr>) { if (n == 2) return body(i[0], i[1]); }
    if constexpr (std::is_invocable_v<F, Expr, Expr, Expr>) { if (n == 3) return body(i[0], i[1], i[2]); }
    if constexpr (std::is_invocable_v<F, Expr, Expr, Expr, Expr>) { if (n == 4) return body(i[0], i[1], i[2], i[3]); }
    if constexpr (std::is_invocable_v<F, Expr, Expr, Expr, Expr, Expr>) { if (n == 5) return body(i[0], i[1], i[2], i[3], i[4]); }
    throw Error("te: the body of a compute takes as many indices as its shape has dimensions");
  }, std::move(name));
}

// A reduction axis [0, extent).
IterVar reduce_axis(int64_t extent, std::string name);
Expr sum(Expr source, std::vector<IterVar> axes);
Expr reduce_max(Expr source, std::vector<IterVar> axes);
Expr reduce_min(Expr source, std::vector<IterVar> axes);

// An extern stage: output = shape/dtype; generated code calls func(inputs..., output, args...)
// with one pointer per buffer (row-major, dense) and the scalar args as C scalars. func returns
// an int32_t fault code (codegen::KernelFault, 0 when none), which the kernel returns.
Tensor extern_op(std::string name, Shape shape, DType dtype, std::vector<Tensor> inputs, std::string func,
                 std::vector<Expr> args = {});
// A stateful extern stage (include/switchyard/extern_abi.h): func names a stateful extern
// (strategy::register_stateful_extern); each call site gets a state made once from the buffers'
// shapes, the constants among them and the integer attributes `attrs`, and every run calls its
// run function with the buffers (inputs..., output).
Tensor stateful_extern_op(std::string name, Shape shape, DType dtype, std::vector<Tensor> inputs, std::string func,
                          std::vector<int64_t> attrs);

}  // namespace sy::te
