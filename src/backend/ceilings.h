#pragma once
// Device ceilings: what one rank's device reaches on simple kernels, measured at the start of a
// run and stored in /ceilings (docs/hdf5-schema.md). Points report their rate as a fraction of
// the ceiling their op names (Op::ceiling(), ops/ceiling.h).
//
// The measurements are registered like implementations, from their own folders
// (kernels/ceilings/<name>/register.cpp), keyed by backend:
//   GENBENCH_CUDA_CEILINGS_DECL(measure_copy);  // defined in the folder's cuda_*.cpp
//   GENBENCH_REGISTER_CEILINGS((CeilingSourceInfo{"copy", BackendKind::cuda, "one line",
//                               GENBENCH_CUDA_CEILINGS_MISSING}), GENBENCH_CUDA_CEILINGS(measure_copy))
// measure_ceilings() runs every source registered for the backend; a backend with none (the host)
// has no ceilings. Nothing here depends on kernels/.
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ops/ceiling.h"

namespace genbench {

struct Ceiling {
  int rank = 0;
  std::string name;  // a CeilingId's name: "copy_GBps", "gemm_bf16_tflops", ...
  double value = 0;
  std::string unit;    // the CeilingId's unit: "GB/s", "TFLOP/s"
  std::string detail;  // how it was measured

  // The row of a measured ceiling (rank 0 until the runner sets it).
  static Ceiling of(const CeilingId& id, double value, std::string detail) {
    return {0, id.name, value, id.unit, std::move(detail)};
  }
};

// Measures some ceilings on a backend's device; throws on a device error.
using CeilingMeasure = std::vector<Ceiling> (*)(Backend& b);

// What identifies a source of ceilings, declared once in its folder.
struct CeilingSourceInfo {
  std::string name;  // "copy", "gemm"
  BackendKind backend = BackendKind::cuda;
  std::string description;  // one line for `genbench list`: what it measures and how
  std::string missing;      // what a build without the measurement lacks (GENBENCH_CUDA_CEILINGS_MISSING)
};

class CeilingRegistry {
 public:
  struct Source {
    CeilingSourceInfo info;
    CeilingMeasure measure = nullptr;  // nullptr: listed, not in this build
  };
  static CeilingRegistry& instance();
  // measure == nullptr: the source's build lacks info.missing. A second source of the same
  // (name, backend) is an error (std::logic_error).
  void add(CeilingSourceInfo info, CeilingMeasure measure);
  // In (backend, name) order.
  std::vector<const Source*> all() const;
  // The sources of backend b that this build can run.
  std::vector<const Source*> runnable(BackendKind b) const;

 private:
  std::vector<std::unique_ptr<Source>> sources_;
};

struct CeilingRegistrar {
  CeilingRegistrar(CeilingSourceInfo info, CeilingMeasure measure);
};

// Every ceiling this rank's backend has, from every runnable source of its kind in registry
// order. A source that throws leaves its ceilings out; `failures` gets "name: why" for it.
std::vector<Ceiling> measure_ceilings(Backend& b, const CeilingRegistry& reg, std::vector<std::string>* failures);
std::vector<Ceiling> measure_ceilings(Backend& b, std::vector<std::string>* failures = nullptr);

#define GENBENCH_CEILINGS_CAT2(a, b) a##b
#define GENBENCH_CEILINGS_CAT(a, b) GENBENCH_CEILINGS_CAT2(a, b)
#define GENBENCH_REGISTER_CEILINGS(info, measure)                                                                  \
  namespace {                                                                                                      \
  const ::genbench::CeilingRegistrar GENBENCH_CEILINGS_CAT(genbench_ceilings_registrar_, __LINE__)(info, measure); \
  }

// A measurement defined only in builds with the CUDA backend: declare it with
// GENBENCH_CUDA_CEILINGS_DECL(f) and pass GENBENCH_CUDA_CEILINGS(f), nullptr in a build without.
#ifdef GENBENCH_HAVE_CUDA
#define GENBENCH_CUDA_CEILINGS_DECL(f) std::vector<::genbench::Ceiling> f(::genbench::Backend&)
#define GENBENCH_CUDA_CEILINGS(f) (&f)
#else
#define GENBENCH_CUDA_CEILINGS_DECL(f) static_assert(true, "")
#define GENBENCH_CUDA_CEILINGS(f) (static_cast<::genbench::CeilingMeasure>(nullptr))
#endif
#define GENBENCH_CUDA_CEILINGS_MISSING "the CUDA backend"

}  // namespace genbench
