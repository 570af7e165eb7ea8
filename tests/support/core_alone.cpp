// seams.core_alone: a program linked against genbench_core alone, without genbench_kernels or
// genbench_ops. It links only while nothing in src/ calls into kernels/ (the runner's ceilings
// among them), and it checks that such a program has no implementations and no ceiling sources:
// those come from kernels/ alone, through the registries.
#include <cstdio>

#include "backend/backend.h"
#include "backend/ceilings.h"
#include "ops/implementation.h"
#include "runner/runner.h"

int main() {
  using namespace genbench;
  int failures = 0;
  const auto expect = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "core_alone: %s\n", what);
      ++failures;
    }
  };
  // The whole runner is linked in: run_benchmarks reaches every phase, ceilings included.
  int (*volatile run)(const Config&, const RunOptions&, const Comm&) = &run_benchmarks;
  expect(run != nullptr, "run_benchmarks is not linked");
  expect(Registry::instance().all().empty(), "implementations are registered without genbench_kernels");
  expect(CeilingRegistry::instance().all().empty(), "ceiling sources are registered without genbench_kernels");
  expect(all_ops().empty(), "ops are registered without genbench_ops");
  auto host = make_host_backend({});
  std::vector<std::string> why;
  expect(measure_ceilings(*host, &why).empty() && why.empty(), "the host backend measured ceilings");
  if (failures == 0) std::printf("core_alone: genbench_core links and runs without kernels/ and ops/\n");
  return failures == 0 ? 0 : 1;
}
