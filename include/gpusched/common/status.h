// File: status.h
//
// Status and StatusOr<T>: the error vocabulary of gpusched. Every recoverable error crosses a
// boundary as a value; core code never throws. The codes are a subset of abseil's canonical
// codes, chosen so that each has one clear use:
//
//   kInvalidArgument     the caller sent something malformed (bad JSON, bad quantity, bad flag)
//   kNotFound            a named object (pod, node) is not known
//   kFailedPrecondition  the state no longer allows the operation (a bind that no longer fits);
//                        retrying without a state change will fail again
//   kResourceExhausted   a limit was hit (body size, search budget)
//   kUnavailable         a transient condition; the caller may retry the same call
//   kInternal            an invariant broke inside gpusched
//
// Thread-safety: Status and StatusOr are values; const methods may be called concurrently.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gpusched {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kFailedPrecondition,
  kResourceExhausted,
  kUnavailable,
  kInternal,
  kAborted,           // a concurrent change won (a conflict); retrying on fresh state may succeed
  kCancelled,         // the caller cancelled the operation
  kDeadlineExceeded,  // the operation ran out of time
};

// Returns the canonical name of `code`, e.g. "INVALID_ARGUMENT".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns "OK" or "<CODE>: <message>".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>". OK stays OK.
  Status WithContext(std::string_view context) const;

  bool operator==(const Status&) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
inline Status NotFoundError(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
inline Status FailedPreconditionError(std::string msg) {
  return {StatusCode::kFailedPrecondition, std::move(msg)};
}
inline Status ResourceExhaustedError(std::string msg) {
  return {StatusCode::kResourceExhausted, std::move(msg)};
}
inline Status UnavailableError(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
inline Status InternalError(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
inline Status AbortedError(std::string msg) { return {StatusCode::kAborted, std::move(msg)}; }
inline Status CancelledError(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
inline Status DeadlineExceededError(std::string msg) {
  return {StatusCode::kDeadlineExceeded, std::move(msg)};
}

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // REQUIRES: !status.ok().
  StatusOr(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  StatusOr(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace gpusched

#define GPUSCHED_STATUS_CONCAT_INNER(a, b) a##b
#define GPUSCHED_STATUS_CONCAT(a, b) GPUSCHED_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define GPUSCHED_RETURN_IF_ERROR(expr)               \
  do {                                               \
    ::gpusched::Status gpusched_status_ = (expr);    \
    if (!gpusched_status_.ok()) return gpusched_status_; \
  } while (0)

// Evaluates `rexpr` (a StatusOr<T>); on error returns its Status, else moves the value into `lhs`.
#define GPUSCHED_ASSIGN_OR_RETURN(lhs, rexpr) \
  GPUSCHED_ASSIGN_OR_RETURN_IMPL(GPUSCHED_STATUS_CONCAT(gpusched_statusor_, __LINE__), lhs, rexpr)
#define GPUSCHED_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()
