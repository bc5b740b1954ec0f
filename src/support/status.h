// Status and Result<T>: the error channel of the public API (no exceptions cross it).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "support/error.h"

namespace sy {

class Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string msg) { Status s; s.msg_ = std::move(msg); s.failed_ = true; return s; }
  bool is_ok() const { return !failed_; }
  explicit operator bool() const { return is_ok(); }
  const std::string& message() const { return msg_; }

 private:
  std::string msg_;
  bool failed_ = false;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status st) : v_(std::move(st)) { SY_CHECK(!std::get<Status>(v_).is_ok()); }  // NOLINT
  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() { SY_CHECK(is_ok()) << status().message(); return std::get<0>(v_); }
  const T& value() const { SY_CHECK(is_ok()) << status().message(); return std::get<0>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

// Runs fn, converting a user Error or an InternalError into a failed Status.
template <typename Fn>
auto catch_errors(Fn&& fn) -> Result<decltype(fn())> {
  try {
    return fn();
  } catch (const Error& e) {
    return Status::error(e.what());
  } catch (const InternalError& e) {
    return Status::error(e.what());
  }
}

}  // namespace sy
