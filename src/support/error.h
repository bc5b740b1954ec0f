// User-facing errors (bad model, bad input, bad artifact) and internal checks (compiler bugs).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace sy {

// A problem with what the user gave us. Caught at the API boundary and turned into a Status;
// the message must name the problem precisely (which node, which input, what was expected).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// A bug in Switchyard itself: an invariant that must hold whatever the input.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg) : std::logic_error(msg) {}
};

namespace detail {
class CheckFailer {
 public:
  CheckFailer(const char* file, int line, const char* cond) {
    os_ << "internal error at " << file << ":" << line << ": check '" << cond << "' failed";
  }
  template <typename T>
  CheckFailer& operator<<(const T& v) {
    if (!has_msg_) { os_ << ": "; has_msg_ = true; }
    os_ << v;
    return *this;
  }
  [[noreturn]] ~CheckFailer() noexcept(false) { throw InternalError(os_.str()); }

 private:
  std::ostringstream os_;
  bool has_msg_ = false;
};
}  // namespace detail

}  // namespace sy

// SY_CHECK(cond) << "context";  -- internal invariant; throws InternalError.
#define SY_CHECK(cond) \
  if (cond) {          \
  } else               \
    ::sy::detail::CheckFailer(__FILE__, __LINE__, #cond)
