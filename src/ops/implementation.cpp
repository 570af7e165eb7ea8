#include "ops/implementation.h"

#include <algorithm>

namespace genbench {

Registry& Registry::instance() {
  static Registry r = [] {
    Registry reg;
    register_implementations(reg);
    return reg;
  }();
  return r;
}

void Registry::add(std::unique_ptr<Implementation> impl) { impls_.push_back(std::move(impl)); }

const Implementation* Registry::find(const std::string& op, const std::string& name, BackendKind b) const {
  for (const auto& i : impls_)
    if (i->op().name() == op && i->name() == name && i->backend() == b) return i.get();
  return nullptr;
}

std::vector<const Implementation*> Registry::for_op(const std::string& op) const {
  std::vector<const Implementation*> v;
  for (const auto& i : impls_)
    if (i->op().name() == op) v.push_back(i.get());
  return v;
}

std::vector<std::string> Registry::names(const std::string& op) const {
  std::vector<std::string> v;
  for (const auto& i : impls_)
    if (i->op().name() == op && std::find(v.begin(), v.end(), i->name()) == v.end()) v.push_back(i->name());
  return v;
}

}  // namespace genbench
