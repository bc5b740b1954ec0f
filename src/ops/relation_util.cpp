// Helpers shared by the op type relations (see relation_util.h).
#include "ops/relation_util.h"

#include <algorithm>

namespace sy::ops {

void define_op(OpRegistry& r, OpCode code, int min_args, int max_args, NamedRelation rel) {
  // The registry is still being filled here (get() would refuse it), so take the name alone.
  std::string name = r.name(code);
  r.set_signature(code, min_args, max_args,
                  [name, min_args, max_args, rel = std::move(rel)](const TypeList& args, const ir::Attrs& attrs) {
                    int n = static_cast<int>(args.size());
                    if (n < min_args || (max_args >= 0 && n > max_args)) {
                      if (max_args < 0) fail(name, "expects at least ", min_args, " inputs, got ", n);
                      if (min_args == max_args) fail(name, "expects ", min_args, " inputs, got ", n);
                      fail(name, "expects ", min_args, " to ", max_args, " inputs, got ", n);
                    }
                    return rel(name, args, attrs);
                  });
}

std::string list_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

const ir::TypeNode& tensor_arg(const std::string& op, const TypeList& args, size_t i, const char* what) {
  SY_CHECK(i < args.size()) << op << ": relation reads input " << i << " of " << args.size();
  const ir::Type& t = args[i];
  if (!ir::is_tensor(t))
    fail(op, "input ", i, " (", what, ") must be a tensor, got ", t ? ir::type_str(t) : "no type");
  return *t;
}

void check_same_dtype(const std::string& op, const ir::TypeNode& a, const char* a_what,
                      const ir::TypeNode& b, const char* b_what) {
  if (a.dtype != b.dtype)
    fail(op, a_what, " has dtype ", dtype_name(a.dtype), " but ", b_what, " has dtype ", dtype_name(b.dtype));
}

void check_float(const std::string& op, const ir::TypeNode& t, const char* what) {
  if (!is_float(t.dtype)) fail(op, what, " must be float32 or float64, got ", dtype_name(t.dtype));
}

void check_numeric(const std::string& op, const ir::TypeNode& t, const char* what) {
  if (t.dtype == DType::boolean) fail(op, what, " must be numeric, got bool");
}

void check_bool(const std::string& op, const ir::TypeNode& t, const char* what) {
  if (t.dtype != DType::boolean) fail(op, what, " must be bool, got ", dtype_name(t.dtype));
}

void check_index_dtype(const std::string& op, const ir::TypeNode& t, const char* what) {
  if (t.dtype != DType::i32 && t.dtype != DType::i64)
    fail(op, what, " must be int32 or int64, got ", dtype_name(t.dtype));
}

void check_rank(const std::string& op, const ir::TypeNode& t, const char* what, size_t rank) {
  if (t.shape.size() != rank)
    fail(op, what, " must be ", rank, "-d, got shape ", shape_str(t.shape));
}

void check_min_rank(const std::string& op, const ir::TypeNode& t, const char* what, size_t rank) {
  if (t.shape.size() < rank)
    fail(op, what, " must have rank >= ", rank, ", got shape ", shape_str(t.shape));
}

void check_axis(const std::string& op, const char* attr, int64_t axis, size_t rank) {
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    fail(op, attr, "=", axis, " out of range for rank ", rank, " (expected 0..", static_cast<int64_t>(rank) - 1,
         ")");
}

void check_len(const std::string& op, const char* attr, const std::vector<int64_t>& v, size_t n) {
  if (v.size() != n) fail(op, attr, " must have ", n, " entries, got ", list_str(v));
}

void check_all_positive(const std::string& op, const char* attr, const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x <= 0) fail(op, attr, " entries must be positive, got ", list_str(v));
}

void check_all_non_negative(const std::string& op, const char* attr, const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x < 0) fail(op, attr, " entries must be non-negative, got ", list_str(v));
}

int64_t checked_add(const std::string& op, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(op, "size arithmetic overflows int64 (", a, " + ", b, ")");
  return r;
}

int64_t checked_mul(const std::string& op, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(op, "size arithmetic overflows int64 (", a, " * ", b, ")");
  return r;
}

int64_t checked_numel(const std::string& op, const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n = checked_mul(op, n, d);
  return n;
}

Shape broadcast_shapes(const std::string& op, const Shape& a, const char* a_what, const Shape& b,
                       const char* b_what) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      fail(op, "cannot broadcast ", a_what, " of shape ", shape_str(a), " with ", b_what, " of shape ",
           shape_str(b));
  }
  return out;
}

int64_t conv_out_dim(const std::string& op, const char* axis_name, int64_t in, int64_t kernel,
                     int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation) {
  int64_t padded = checked_add(op, checked_add(op, in, pad_begin), pad_end);
  int64_t window = checked_add(op, checked_mul(op, dilation, kernel - 1), 1);
  int64_t span = padded - window;
  if (span < 0)
    fail(op, "dilated kernel ", axis_name, " ", window, " exceeds padded input ", axis_name, " ", padded);
  return span / stride + 1;
}

int64_t pool_out_dim(const std::string& op, const char* axis_name, int64_t in, int64_t kernel,
                     int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation, bool ceil_mode) {
  int64_t padded = checked_add(op, checked_add(op, in, pad_begin), pad_end);
  int64_t window = checked_add(op, checked_mul(op, dilation, kernel - 1), 1);
  int64_t span = padded - window;
  if (span < 0)
    fail(op, "dilated kernel ", axis_name, " ", window, " exceeds padded input ", axis_name, " ", padded);
  if (!ceil_mode) return span / stride + 1;
  int64_t out = span / stride + (span % stride != 0) + 1;
  // A window that would start entirely in the end padding is dropped.
  if (checked_mul(op, out - 1, stride) >= in + pad_begin) --out;
  return out;
}

}  // namespace sy::ops
