// The axis builder (ops/axes.h): each axis filled once, checked by done().
#include "ops/axes.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/strings.h"

namespace genbench {

Axes::Axes(std::size_t count) : specs_(count), filled_(count, 0), defaulted_(count, false) {}

Axes::Axes(std::vector<AxisSpec> from)
    : specs_(std::move(from)), filled_(specs_.size(), 1), defaulted_(specs_.size(), true) {}

AxisSpec& Axes::at(const std::string& name) {
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (filled_[i] && specs_[i].name == name) return specs_[i];
  throw std::logic_error("no axis " + name + " declared");
}

std::vector<AxisSpec> Axes::done() const {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const AxisSpec& a = specs_[i];
    if (filled_[i] == 0) throw std::logic_error(strprintf("axis #%zu is not declared", i));
    const std::string what = "axis " + a.name;
    if (filled_[i] > 1) throw std::logic_error(strprintf("axis #%zu (%s) is declared twice", i, a.name.c_str()));
    if (a.name.empty()) throw std::logic_error(strprintf("axis #%zu has no name", i));
    for (std::size_t j = 0; j < i; ++j)
      if (specs_[j].name == a.name) throw std::logic_error(what + " is declared twice");
    if (a.help.empty()) throw std::logic_error(what + " has no help");
    if (!defaulted_[i]) throw std::logic_error(what + " has no default");
    switch (a.type) {
      case AxisType::integer:
      case AxisType::size: {
        const std::int64_t d = std::get<std::int64_t>(a.default_value);
        if (a.min > a.max) throw std::logic_error(what + ": min is above max");
        if (d < a.min || d > a.max)
          throw std::logic_error(strprintf("%s: default %lld is outside [%lld, %lld]", what.c_str(),
                                           static_cast<long long>(d), static_cast<long long>(a.min),
                                           static_cast<long long>(a.max)));
        if (!a.allowed.empty() && std::find(a.allowed.begin(), a.allowed.end(), d) == a.allowed.end())
          throw std::logic_error(what + ": the default is not among its allowed values");
        break;
      }
      case AxisType::choice: {
        if (a.choices.empty()) throw std::logic_error(what + " has no choices");
        const std::string& d = std::get<std::string>(a.default_value);
        if (std::find(a.choices.begin(), a.choices.end(), d) == a.choices.end())
          throw std::logic_error(what + ": default '" + d + "' is not one of its choices");
        if (!a.unit.empty()) throw std::logic_error(what + ": a choice axis has no unit");
        break;
      }
      case AxisType::boolean:
        if (!a.unit.empty()) throw std::logic_error(what + ": a boolean axis has no unit");
        break;
      case AxisType::real: break;
    }
  }
  return specs_;
}

}  // namespace genbench
