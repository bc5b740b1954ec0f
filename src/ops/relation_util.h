// Helpers shared by the op type relations: argument/attribute access, error messages that name
// the op, numpy broadcasting, axis checks and convolution/pooling output sizes.
#pragma once
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/type.h"
#include "ops/op.h"
#include "support/error.h"

namespace sy::ops {

using TypeList = std::vector<ir::Type>;

// A relation that also receives the op's IR name (for messages).
using NamedRelation =
    std::function<ir::Type(const std::string& op, const TypeList& args, const ir::Attrs& attrs)>;

// Registers `rel` for `code`; the wrapper re-checks the argument count, so relations may index
// args[0..min_args) freely even when called outside ir::call.
void define_op(OpRegistry& r, OpCode code, int min_args, int max_args, NamedRelation rel);

// "[1, 2, 3]" (attribute lists, printed as in the IR).
std::string list_str(const std::vector<int64_t>& v);

// Throws sy::Error("<op>: <parts...>").
template <typename... T>
[[noreturn]] void fail(const std::string& op, const T&... parts) {
  std::ostringstream os;
  os << op << ": ";
  (os << ... << parts);
  throw Error(os.str());
}

// Argument i as a tensor type; `what` names it in messages ("data", "weight").
const ir::TypeNode& tensor_arg(const std::string& op, const TypeList& args, size_t i, const char* what);

// The attrs as the struct named in op_list.def.
template <typename A>
const A& attrs_as(const std::string& op, const ir::Attrs& attrs) {
  auto* p = dynamic_cast<const A*>(&attrs);
  if (!p) fail(op, "expects attributes ", A::kName, ", got ", attrs.type_name());
  return *p;
}

// Dtype checks; `what` names the argument.
void check_same_dtype(const std::string& op, const ir::TypeNode& a, const char* a_what,
                      const ir::TypeNode& b, const char* b_what);
void check_float(const std::string& op, const ir::TypeNode& t, const char* what);
void check_numeric(const std::string& op, const ir::TypeNode& t, const char* what);  // not bool
void check_bool(const std::string& op, const ir::TypeNode& t, const char* what);
void check_index_dtype(const std::string& op, const ir::TypeNode& t, const char* what);  // int32/int64
void check_rank(const std::string& op, const ir::TypeNode& t, const char* what, size_t rank);
void check_min_rank(const std::string& op, const ir::TypeNode& t, const char* what, size_t rank);

// An axis attribute must lie in [0, rank).
void check_axis(const std::string& op, const char* attr, int64_t axis, size_t rank);
// An attribute list must have exactly n entries.
void check_len(const std::string& op, const char* attr, const std::vector<int64_t>& v, size_t n);
void check_all_positive(const std::string& op, const char* attr, const std::vector<int64_t>& v);
void check_all_non_negative(const std::string& op, const char* attr, const std::vector<int64_t>& v);

// Shape arithmetic on attribute values a model controls: throws instead of overflowing.
int64_t checked_add(const std::string& op, int64_t a, int64_t b);
int64_t checked_mul(const std::string& op, int64_t a, int64_t b);
int64_t checked_numel(const std::string& op, const Shape& s);

// Numpy (multidirectional) broadcasting; `a_what`/`b_what` name the operands in the error.
Shape broadcast_shapes(const std::string& op, const Shape& a, const char* a_what, const Shape& b,
                       const char* b_what);

// Output extent of a convolution along one axis (ONNX Conv); throws if it would be < 1.
int64_t conv_out_dim(const std::string& op, const char* axis_name, int64_t in, int64_t kernel,
                     int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation);
// Output extent of a pooling window along one axis (ONNX pools, incl. ceil_mode: the last
// window must start inside the input or the begin padding).
int64_t pool_out_dim(const std::string& op, const char* axis_name, int64_t in, int64_t kernel,
                     int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation, bool ceil_mode);

}  // namespace sy::ops
