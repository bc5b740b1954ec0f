#include "ir/type.h"

#include <sstream>

#include "support/error.h"

namespace sy::ir {

Type tensor_type(Shape shape, DType dtype) {
  auto t = std::make_shared<TypeNode>();
  t->kind = TypeKind::Tensor;
  t->shape = std::move(shape);
  t->dtype = dtype;
  return t;
}

Type tuple_type(std::vector<Type> fields) {
  auto t = std::make_shared<TypeNode>();
  t->kind = TypeKind::Tuple;
  t->fields = std::move(fields);
  return t;
}

Type func_type(std::vector<Type> params, Type ret) {
  auto t = std::make_shared<TypeNode>();
  t->kind = TypeKind::Func;
  t->fields = std::move(params);
  t->ret = std::move(ret);
  return t;
}

bool is_tensor(const Type& t) { return t && t->kind == TypeKind::Tensor; }

const TypeNode& as_tensor(const Type& t) {
  SY_CHECK(is_tensor(t)) << "expected a tensor type, got " << (t ? type_str(t) : "null");
  return *t;
}

bool type_equal(const Type& a, const Type& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case TypeKind::Tensor: return a->dtype == b->dtype && a->shape == b->shape;
    case TypeKind::Tuple:
    case TypeKind::Func:
      if (a->fields.size() != b->fields.size()) return false;
      for (size_t i = 0; i < a->fields.size(); ++i)
        if (!type_equal(a->fields[i], b->fields[i])) return false;
      return a->kind == TypeKind::Tuple || type_equal(a->ret, b->ret);
  }
  return false;
}

size_t type_hash(const Type& t) {
  if (!t) return 0;
  size_t h = static_cast<size_t>(t->kind) * 0x9e3779b97f4a7c15ULL;
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (t->kind == TypeKind::Tensor) {
    mix(static_cast<size_t>(t->dtype));
    for (int64_t d : t->shape) mix(static_cast<size_t>(d));
  } else {
    for (auto& f : t->fields) mix(type_hash(f));
    if (t->ret) mix(type_hash(t->ret));
  }
  return h;
}

std::string type_str(const Type& t) {
  if (!t) return "?";
  std::ostringstream os;
  switch (t->kind) {
    case TypeKind::Tensor:
      os << "Tensor[" << shape_str(t->shape) << ", " << dtype_name(t->dtype) << "]";
      break;
    case TypeKind::Tuple:
      os << "(";
      for (size_t i = 0; i < t->fields.size(); ++i) os << (i ? ", " : "") << type_str(t->fields[i]);
      if (t->fields.size() == 1) os << ",";
      os << ")";
      break;
    case TypeKind::Func:
      os << "fn(";
      for (size_t i = 0; i < t->fields.size(); ++i) os << (i ? ", " : "") << type_str(t->fields[i]);
      os << ") -> " << type_str(t->ret);
      break;
  }
  return os.str();
}

}  // namespace sy::ir
