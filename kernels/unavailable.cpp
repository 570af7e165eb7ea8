#include "kernels/registry.h"

namespace genbench {

namespace {
class Unavailable final : public Implementation {
 public:
  Unavailable(const Op& op, std::string name, std::string description)
      : op_(op), name_(std::move(name)), description_(std::move(description)) {}
  std::string name() const override { return name_; }
  const Op& op() const override { return op_; }
  BackendKind backend() const override { return BackendKind::cuda; }
  std::string description() const override { return description_ + " (not in this build: no CUDA backend)"; }
  std::string can_implement(const Point&, const Context&) const override {
    return "this build has no CUDA backend";
  }
  std::unique_ptr<Case> prepare(const Point&, Context&) const override { return nullptr; }

 private:
  const Op& op_;
  std::string name_, description_;
};
}  // namespace

std::unique_ptr<Implementation> make_unavailable(const Op& op, const std::string& name, const std::string& description) {
  return std::make_unique<Unavailable>(op, name, description);
}

}  // namespace genbench
