#include "backend/ceilings.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace genbench {

CeilingRegistry& CeilingRegistry::instance() {
  static CeilingRegistry r;
  return r;
}

void CeilingRegistry::add(CeilingSourceInfo info, CeilingMeasure measure) {
  if (info.name.empty()) throw std::logic_error("a ceiling source without a name");
  const auto key = [](const Source& s) { return std::make_tuple(static_cast<int>(s.info.backend), s.info.name); };
  auto src = std::make_unique<Source>();
  if (measure) info.missing.clear();  // built: nothing missing
  src->info = std::move(info);
  src->measure = measure;
  for (const auto& s : sources_)
    if (key(*s) == key(*src))
      throw std::logic_error("ceiling source '" + src->info.name + "' registered twice for the " +
                             backend_name(src->info.backend) + " backend");
  const auto at = std::upper_bound(sources_.begin(), sources_.end(), src,
                                   [&](const auto& a, const auto& b) { return key(*a) < key(*b); });
  sources_.insert(at, std::move(src));
}

std::vector<const CeilingRegistry::Source*> CeilingRegistry::all() const {
  std::vector<const Source*> v;
  for (const auto& s : sources_) v.push_back(s.get());
  return v;
}

std::vector<const CeilingRegistry::Source*> CeilingRegistry::runnable(BackendKind b) const {
  std::vector<const Source*> v;
  for (const auto& s : sources_)
    if (s->info.backend == b && s->measure) v.push_back(s.get());
  return v;
}

CeilingRegistrar::CeilingRegistrar(CeilingSourceInfo info, CeilingMeasure measure) {
  CeilingRegistry::instance().add(std::move(info), measure);
}

std::vector<Ceiling> measure_ceilings(Backend& b, const CeilingRegistry& reg, std::vector<std::string>* failures) {
  std::vector<Ceiling> out;
  for (const auto* s : reg.runnable(b.kind())) {
    try {
      for (auto& c : s->measure(b)) out.push_back(std::move(c));
    } catch (const std::exception& e) {
      if (failures) failures->push_back(s->info.name + ": " + e.what());
    }
  }
  return out;
}

std::vector<Ceiling> measure_ceilings(Backend& b, std::vector<std::string>* failures) {
  return measure_ceilings(b, CeilingRegistry::instance(), failures);
}

}  // namespace genbench
