#pragma once
// One error path for the whole tool: every failed call throws genbench::Error carrying the
// call, the source location and (once the communicator is up) the rank and host.
#include <stdexcept>
#include <string>

namespace genbench {

// Identity of this process, filled in by the communicator so that errors can name it.
struct ProcessIdentity {
  int rank = -1;
  std::string host;
};
ProcessIdentity& process_identity();

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A configuration or user-input error: reported as one line, exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// An implementation that cannot run a point, found out only when preparing it (a vendor
// library with no engine for the shape): the point is recorded as unsupported, with the reason.
class Unsupported : public Error {
 public:
  using Error::Error;
};

// The run was interrupted by a signal; the output is consistent and resumable.
class Interrupted : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_call_error(const char* call, const std::string& detail, const char* file, int line);

}  // namespace genbench

#define GENBENCH_CHECK(cond, msg)                                                \
  do {                                                                           \
    if (!(cond)) ::genbench::throw_call_error(#cond, (msg), __FILE__, __LINE__); \
  } while (0)
