#include "core/error.h"

#include <sstream>

namespace genbench {

ProcessIdentity& process_identity() {
  static ProcessIdentity id;
  return id;
}

void throw_call_error(const char* call, const std::string& detail, const char* file, int line) {
  std::ostringstream os;
  const auto& id = process_identity();
  os << call << " failed";
  if (!detail.empty()) os << ": " << detail;
  os << " (" << file << ":" << line;
  if (id.rank >= 0) os << ", rank " << id.rank << " on " << id.host;
  os << ")";
  throw Error(os.str());
}

}  // namespace genbench
