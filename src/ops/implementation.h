#pragma once
// The contract every implementation (one folder under kernels/<op>/<impl>/) fulfils:
//   can_implement(point, context) -> "" or the reason it cannot run here
//   prepare(point, context)       -> a Case holding inputs and outputs for that point
//   Case::validate()              -> compare against a higher-precision reference
//   Case::run()                   -> one timed iteration (asynchronous on device backends)
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
  // Extension slot for backend-wide resources (NCCL communicator, library handles).
  void* backend_resources = nullptr;
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
  // Measurements beyond the timed run() (named as in Op::extra_columns()), read once after the
  // timed iterations on every rank; the result file keeps rank 0's.
  virtual std::vector<std::pair<std::string, double>> extra_metrics() { return {}; }
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  virtual const Op& op() const = 0;
  virtual BackendKind backend() const = 0;
  virtual std::string description() const = 0;
  virtual std::string can_implement(const Point& p, const Context& ctx) const = 0;
  virtual std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const = 0;
};

// Implementations, looked up by (op, name, backend). One name can exist for several backends
// (the attention reference runs on host and on cuda).
class Registry {
 public:
  static Registry& instance();
  void add(std::unique_ptr<Implementation> impl);
  const Implementation* find(const std::string& op, const std::string& name, BackendKind b) const;
  std::vector<const Implementation*> for_op(const std::string& op) const;
  std::vector<std::string> names(const std::string& op) const;  // distinct, in registration order
  const std::vector<std::unique_ptr<Implementation>>& all() const { return impls_; }

 private:
  std::vector<std::unique_ptr<Implementation>> impls_;
};

// Defined in kernels/registry.cpp: one line per implementation.
void register_implementations(Registry& r);

}  // namespace genbench
