// vaeconv/core/status.hpp — the result of every public entry point.
//
// Nothing in vaeconv throws across the API: a call either succeeds (Status::ok()) or refuses with
// a code that says which kind of input was wrong and a message that names the offending value.
#pragma once
#include <string>
#include <utility>

namespace vaeconv {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // a value that makes no sense (negative size, null pointer, ...)
  kUnsupported = 2,      // a well-formed problem this library does not implement
  kMisaligned = 3,       // a pointer or stride that breaks the 16-byte access contract
  kOverlap = 4,          // the output overlaps an input
  kOverflow = 5,         // a size whose products do not fit the index types
  kRuntimeError = 6,     // the GPU runtime reported an error
};

inline const char* to_string(StatusCode c) {
  switch (c) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kMisaligned: return "misaligned";
    case StatusCode::kOverlap: return "overlapping buffers";
    case StatusCode::kOverflow: return "size overflow";
    case StatusCode::kRuntimeError: return "runtime error";
  }
  return "unknown";
}

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const {
    return ok() ? std::string("ok") : std::string(vaeconv::to_string(code_)) + ": " + message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Returns early from the enclosing function when a Status is not ok.
#define VAECONV_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::vaeconv::Status vaeconv_status_ = (expr); \
    if (!vaeconv_status_.ok()) return vaeconv_status_; \
  } while (0)

}  // namespace vaeconv
