// libFuzzer target for the config parser: any byte string must either parse or be rejected with
// a UsageError; anything else (a crash, a sanitizer report, another exception, a hang) is a bug.
// Built with clang only (the asan preset); run for a bounded time by ctest (fuzz.config).
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const genbench::Config cfg = genbench::parse_config(text, "fuzz.yaml");
    (void)cfg.fingerprint();
  } catch (const genbench::UsageError&) {
    // rejected with a message: fine
  }
  return 0;
}
