#pragma once
// The contract every implementation (one folder under kernels/<op>/<impl>/) fulfils:
//   can_implement(point, context) -> "" or the reason it cannot run here
//   prepare(point, context)       -> a Case holding inputs and outputs for that point
//   Case::validate()              -> compare against a higher-precision reference
//   Case::run()                   -> one timed iteration (asynchronous on device backends)
// and how it registers itself, from its own folder (kernels/<op>/<impl>/register.cpp):
//   GENBENCH_REGISTER_IMPLEMENTATION(info, factory)
// where the factory is nullptr in a build that lacks what the implementation needs (the CUDA
// backend, cuDNN): the same descriptor then registers a twin that is listed and never runs.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "ops/op.h"
#include "sweep/point.h"

namespace genbench {

class Comm;

struct Context {
  Backend& backend;
  const Comm& comm;
  std::uint64_t seed;  // fresh per point; same on every rank
};

struct Validation {
  bool ok = true;
  double error = 0;      // the implementation's error measure (relative, or wrong elements)
  double tolerance = 0;  // the bound it was held to
  std::string detail;    // what was compared and how
};

class Case {
 public:
  virtual ~Case() = default;
  virtual Validation validate() = 0;
  virtual void run() = 0;
  // Which variant ran (tile configuration, cuBLASLt algorithm...), recorded per point.
  virtual std::string variant() const { return ""; }
  // Iterations one run() performs (mode=graph replays K captured iterations per run()); the
  // runner divides each timed sample by it, so samples are always per iteration.
  virtual int iterations_per_run() const { return 1; }
  // Measurements beyond the timed run(), one for every extra column of the op (named as the
  // column, NaN where it does not apply to the point), read once after the timed iterations on
  // every rank; the result file keeps rank 0's. A name the op does not declare, or one left
  // out, fails the point (ops/op_columns.h).
  virtual std::vector<std::pair<std::string, double>> extra_metrics() { return {}; }
  // What the implementation chose for each of its own tuning axes (ImplementationInfo::tuning;
  // axis name -> value), every one of them and no other, recorded in the points table's
  // "<axis>_chosen" columns.
  virtual std::vector<std::pair<std::string, std::string>> chosen() const { return {}; }
};

// What identifies an implementation, declared once in its folder.
struct ImplementationInfo {
  std::string op;    // the op's name
  std::string name;  // the name configs use ("fa3", "cublaslt")
  BackendKind backend = BackendKind::host;
  std::string description;  // one line for `genbench list`
  // Tuning switches (AxisSpec::tuning, choice axes with default "auto"): they become axes of
  // the op, so they are in `genbench list`, the config's fingerprint and the points table.
  std::vector<AxisSpec> tuning;
  // What a build without the factory lacks ("the CUDA backend", "cuDNN"); set by the macros.
  std::string missing;
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  const std::string& name() const { return info().name; }
  BackendKind backend() const { return info().backend; }
  const std::string& description() const { return info().description; }
  const Op& op() const;
  const ImplementationInfo& info() const;
  virtual std::string can_implement(const Point& p, const Context& ctx) const = 0;
  virtual std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const = 0;

 private:
  friend class Registry;
  const ImplementationInfo* info_ = nullptr;
};

using ImplementationFactory = std::unique_ptr<Implementation> (*)();

// The value a point gives a tuning axis of its op: the axis's value, or where that is "auto"
// and the documented environment alias `env` is set (A/B scripts; docs/config.md), the alias's
// value; "auto" when neither chooses. An op without that axis gives "auto".
std::string tuning_value(const Point& p, const Op& op, const std::string& axis, const char* env = nullptr);
// A choice tuning axis: {"auto", choices...} with default "auto".
AxisSpec tuning_axis(std::string name, std::vector<std::string> choices, std::string help);

// Implementations, looked up by (op, name, backend). One name can exist for several backends
// (the attention reference runs on host and on cuda).
class Registry {
 public:
  static Registry& instance();
  // make == nullptr: the twin of a build that lacks info.missing.
  void add(ImplementationInfo info, ImplementationFactory make);
  const Implementation* find(const std::string& op, const std::string& name, BackendKind b) const;
  std::vector<const Implementation*> for_op(const std::string& op) const;
  std::vector<std::string> names(const std::string& op) const;  // distinct, in registration order
  std::vector<const Implementation*> all() const;
  // The tuning axes of an op's implementations, in registration order.
  std::vector<AxisSpec> tuning_axes(const std::string& op) const;

 private:
  struct Entry {
    std::unique_ptr<ImplementationInfo> info;
    std::unique_ptr<Implementation> impl;
  };
  std::vector<Entry> entries_;
};

struct ImplementationRegistrar {
  ImplementationRegistrar(ImplementationInfo info, ImplementationFactory make);
};

#define GENBENCH_CAT2(a, b) a##b
#define GENBENCH_CAT(a, b) GENBENCH_CAT2(a, b)
// In kernels/<op>/<impl>/register.cpp: registers the implementation described by `info` (an
// ImplementationInfo expression) made by `factory` (a function returning
// std::unique_ptr<Implementation>, or nullptr).
#define GENBENCH_REGISTER_IMPLEMENTATION(info, factory)                                                      \
  namespace {                                                                                                \
  const ::genbench::ImplementationRegistrar GENBENCH_CAT(genbench_impl_registrar_, __LINE__)(info, factory); \
  }

// Factories defined only in builds with the CUDA backend (cuDNN): declare with
// GENBENCH_CUDA_FACTORY_DECL(make_x) and pass GENBENCH_CUDA_FACTORY(make_x), which is nullptr in
// a build without it; GENBENCH_CUDA_MISSING names what such a build lacks.
#ifdef GENBENCH_HAVE_CUDA
#define GENBENCH_CUDA_FACTORY_DECL(f) std::unique_ptr<::genbench::Implementation> f()
#define GENBENCH_CUDA_FACTORY(f) (&f)
#else
#define GENBENCH_CUDA_FACTORY_DECL(f) static_assert(true, "")
#define GENBENCH_CUDA_FACTORY(f) (static_cast<::genbench::ImplementationFactory>(nullptr))
#endif
#if defined(GENBENCH_HAVE_CUDA) && defined(GENBENCH_HAVE_CUDNN)
#define GENBENCH_CUDNN_FACTORY_DECL(f) std::unique_ptr<::genbench::Implementation> f()
#define GENBENCH_CUDNN_FACTORY(f) (&f)
#else
#define GENBENCH_CUDNN_FACTORY_DECL(f) static_assert(true, "")
#define GENBENCH_CUDNN_FACTORY(f) (static_cast<::genbench::ImplementationFactory>(nullptr))
#endif
#ifdef GENBENCH_HAVE_CUDA
#define GENBENCH_CUDNN_MISSING "cuDNN (this build found no cuDNN 9)"
#else
#define GENBENCH_CUDNN_MISSING "the CUDA backend and cuDNN"
#endif
#define GENBENCH_CUDA_MISSING "the CUDA backend"

}  // namespace genbench
