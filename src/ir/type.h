// Types of IR values: tensors with static shapes, tuples, and function types.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "support/dtype.h"
#include "support/tensor.h"

namespace sy::ir {

enum class TypeKind { Tensor, Tuple, Func };

struct TypeNode;
using Type = std::shared_ptr<const TypeNode>;

struct TypeNode {
  TypeKind kind;
  // Tensor
  Shape shape;
  DType dtype = DType::f32;
  // Tuple: fields; Func: params
  std::vector<Type> fields;
  // Func: result
  Type ret;
};

Type tensor_type(Shape shape, DType dtype);
Type tuple_type(std::vector<Type> fields);
Type func_type(std::vector<Type> params, Type ret);

bool is_tensor(const Type& t);
// Checked accessors: the caller knows the type is a tensor (else internal error).
const TypeNode& as_tensor(const Type& t);

bool type_equal(const Type& a, const Type& b);
size_t type_hash(const Type& t);
// Text form as printed in the IR: Tensor[(1, 3), float32], (Tensor[..], Tensor[..]), fn(..) -> ..
std::string type_str(const Type& t);

}  // namespace sy::ir
