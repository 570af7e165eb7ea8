#include "ops/implementation.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

namespace genbench {

namespace {

// The twin of an implementation whose build lacks what it needs: listed, never runnable.
class Unavailable final : public Implementation {
 public:
  std::string can_implement(const Point&, const Context&) const override {
    return "'" + name() + "' is not in this build (it needs " + info().missing + ")";
  }
  std::unique_ptr<Case> prepare(const Point&, Context&) const override { return nullptr; }
};

}  // namespace

const ImplementationInfo& Implementation::info() const {
  static const ImplementationInfo none;
  return info_ ? *info_ : none;
}

const Op& Implementation::op() const {
  const Op* o = find_op(info().op);
  if (!o) throw std::logic_error("implementation '" + info().name + "' names an unknown op '" + info().op + "'");
  return *o;
}

std::string tuning_value(const Point& p, const Op& op, const std::string& axis, const char* env) {
  const std::size_t i = op.axis_index(axis);
  std::string v = "auto";
  if (i < p.values.size())
    if (const auto* s = std::get_if<std::string>(&p.values[i])) v = *s;
  if (v == "auto" && env)
    if (const char* e = std::getenv(env); e && *e) v = e;
  return v;
}

AxisSpec tuning_axis(std::string name, std::vector<std::string> choices, std::string help) {
  choices.insert(choices.begin(), "auto");
  Axes v;
  v.choice(std::move(name), std::move(choices)).default_("auto").help(std::move(help));
  AxisSpec a = v.done().front();
  a.tuning = true;
  return a;
}

Registry& Registry::instance() {
  static Registry r;
  return r;
}

void Registry::add(ImplementationInfo info, ImplementationFactory make) {
  if (make) info.missing.clear();  // built: nothing missing
  Entry e;
  e.info = std::make_unique<ImplementationInfo>(std::move(info));
  e.impl = make ? make() : std::make_unique<Unavailable>();
  e.impl->info_ = e.info.get();
  // Kept in (op, backend, name) order, whatever order the registrations ran in.
  const auto key = [](const Entry& x) {
    return std::make_tuple(x.info->op, static_cast<int>(x.info->backend), x.info->name);
  };
  entries_.insert(std::upper_bound(entries_.begin(), entries_.end(), e,
                                   [&](const Entry& a, const Entry& b) { return key(a) < key(b); }),
                  std::move(e));
}

ImplementationRegistrar::ImplementationRegistrar(ImplementationInfo info, ImplementationFactory make) {
  Registry::instance().add(std::move(info), make);
}

const Implementation* Registry::find(const std::string& op, const std::string& name, BackendKind b) const {
  // One entry per key: a build has either the implementation or its twin.
  for (const auto& e : entries_)
    if (e.info->op == op && e.info->name == name && e.info->backend == b) return e.impl.get();
  return nullptr;
}

std::vector<const Implementation*> Registry::for_op(const std::string& op) const {
  std::vector<const Implementation*> v;
  for (const auto& e : entries_)
    if (e.info->op == op) v.push_back(e.impl.get());
  return v;
}

std::vector<std::string> Registry::names(const std::string& op) const {
  std::vector<std::string> v;
  for (const auto* i : for_op(op))
    if (std::find(v.begin(), v.end(), i->name()) == v.end()) v.push_back(i->name());
  return v;
}

std::vector<const Implementation*> Registry::all() const {
  std::vector<const Implementation*> v;
  for (const auto& e : entries_) v.push_back(e.impl.get());
  return v;
}

std::vector<AxisSpec> Registry::tuning_axes(const std::string& op) const {
  std::vector<AxisSpec> v;
  for (const auto* i : for_op(op))
    for (const auto& a : i->info().tuning)
      if (std::none_of(v.begin(), v.end(), [&](const AxisSpec& x) { return x.name == a.name; })) v.push_back(a);
  return v;
}

}  // namespace genbench
