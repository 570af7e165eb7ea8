#include "kernels/layer/common/composed_layer.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/strings.h"

namespace genbench::layer {

namespace {
const std::string kNone;

// Times of `reps` calls of c.run() on the backend's clock, the median.
double median_alone(Backend& b, Case& c, int reps) {
  auto timer = b.make_timer();
  c.run();  // untimed: the first call after the others ran
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    timer->start();
    c.run();
    timer->stop();
    t.push_back(timer->seconds() / c.iterations_per_run());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

const std::string& LayerImpls::impl(const std::string& op) const {
  for (const auto& [o, i] : by_op)
    if (o == op) return i;
  return kNone;
}

std::string can_compose(const Point& p, const Context& ctx, const LayerImpls& impls) {
  for (const auto& part : layer_parts(LayerShape::from(p), impls.backend == BackendKind::cuda)) {
    const std::string& name = impls.impl(part.op);
    if (name.empty())
      return strprintf("%s: this layer has no %s implementation to run it", part.name.c_str(), part.op.c_str());
    const Implementation* im = Registry::instance().find(part.op, name, impls.backend);
    if (!im)
      return strprintf("%s: no %s implementation '%s' on this backend", part.name.c_str(), part.op.c_str(),
                       name.c_str());
    const std::string why = im->can_implement(point_of(im->op(), name, part.axes), ctx);
    if (!why.empty()) return part.name + " (" + part.op + "/" + name + "): " + why;
  }
  return "";
}

ComposedLayer::ComposedLayer(const Point& p, Context& ctx, const LayerImpls& impls) : backend_(ctx.backend) {
  for (auto& spec : layer_parts(LayerShape::from(p), impls.backend == BackendKind::cuda)) {
    const std::string& name = impls.impl(spec.op);
    const Implementation* im = Registry::instance().find(spec.op, name, impls.backend);
    if (!im) throw Error("layer part " + spec.name + ": no implementation " + name);
    Context part_ctx{ctx.backend, ctx.comm, ctx.seed + 1000 * (parts_.size() + 1)};
    auto c = im->prepare(point_of(im->op(), name, spec.axes), part_ctx);
    parts_.push_back(Part{std::move(spec), std::move(c)});
  }
  variant_ = "back to back";
}

void ComposedLayer::run_parts() {
  static const int order[] = {0, 1, 2, 3, 4, 0, 5, 6, 7};
  for (const int i : order) parts_[static_cast<std::size_t>(i)].impl->run();
}

Validation ComposedLayer::validate() {
  Validation v;
  v.tolerance = 1;
  std::string failed;
  for (auto& part : parts_) {
    const Validation pv = part.impl->validate();
    // the layer's error: the worst part's error over its own tolerance
    const double rel = pv.tolerance > 0 ? pv.error / pv.tolerance : (pv.error > 0 ? INFINITY : 0.0);
    v.error = std::max(v.error, rel);
    if (!pv.ok) {
      v.ok = false;
      failed += (failed.empty() ? "" : "; ") + part.spec.name + ": " + pv.detail;
    }
  }
  v.detail =
      v.ok ? strprintf("every part validated (%zu parts; worst error %.3g of its tolerance)", parts_.size(), v.error)
           : "failed: " + failed;
  return v;
}

std::string ComposedLayer::variant() const { return variant_; }

std::vector<std::pair<std::string, double>> ComposedLayer::extra_metrics() {
  std::vector<std::pair<std::string, double>> out;
  double sum = 0;
  for (auto& part : parts_) {
    const double t = median_alone(backend_, *part.impl, 7);
    sum += part.spec.count * t;
    out.emplace_back("t_" + part.spec.name + "_s", t);
  }
  out.insert(out.begin(), {"parts_alone_s", sum});
  return out;
}

}  // namespace genbench::layer
