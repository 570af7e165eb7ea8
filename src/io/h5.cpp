#include "io/h5.h"

#include "core/error.h"

namespace genbench::h5 {

hid_t check(hid_t id, const char* what, const std::string& path) {
  if (id < 0) throw Error(std::string("HDF5 ") + what + " failed on " + path);
  return id;
}

namespace {
Id scalar_space() { return Id(H5Screate(H5S_SCALAR), H5Sclose); }

void replace_attr(hid_t loc, const char* name) {
  if (H5Aexists(loc, name) > 0) H5Adelete(loc, name);
}

Id vlen_string_type() {
  Id t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}
}  // namespace

void set_attr(hid_t loc, const char* name, const std::string& value) {
  replace_attr(loc, name);
  Id type = vlen_string_type();
  Id space = scalar_space();
  Id a(check(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT), name, "attribute"), H5Aclose);
  const char* p = value.c_str();
  check(H5Awrite(a, type, &p), name, "attribute");
}

void set_attr(hid_t loc, const char* name, std::int64_t value) {
  replace_attr(loc, name);
  Id space = scalar_space();
  Id a(check(H5Acreate2(loc, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT), name, "attribute"), H5Aclose);
  check(H5Awrite(a, H5T_NATIVE_INT64, &value), name, "attribute");
}

void set_attr(hid_t loc, const char* name, double value) {
  replace_attr(loc, name);
  Id space = scalar_space();
  Id a(check(H5Acreate2(loc, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT), name, "attribute"), H5Aclose);
  check(H5Awrite(a, H5T_NATIVE_DOUBLE, &value), name, "attribute");
}

void set_attr(hid_t loc, const char* name, const std::vector<std::string>& values) {
  replace_attr(loc, name);
  Id type = vlen_string_type();
  const hsize_t n = values.size();
  Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Id a(check(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT), name, "attribute"), H5Aclose);
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  if (n) check(H5Awrite(a, type, ptrs.data()), name, "attribute");
}

bool has_attr(hid_t loc, const char* name) { return H5Aexists(loc, name) > 0; }

std::string get_attr_string(hid_t loc, const char* name) {
  Id a(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!a.valid()) return {};
  Id ftype(H5Aget_type(a), H5Tclose);
  if (H5Tget_class(ftype) != H5T_STRING) return {};
  if (H5Tis_variable_str(ftype) > 0) {
    Id type = vlen_string_type();
    char* p = nullptr;
    if (H5Aread(a, type, &p) < 0 || !p) return {};
    std::string s(p);
    H5free_memory(p);
    return s;
  }
  const std::size_t n = H5Tget_size(ftype);
  std::string s(n, '\0');
  Id mtype(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mtype, n);
  if (H5Aread(a, mtype, s.data()) < 0) return {};
  return s.substr(0, s.find('\0'));
}

std::int64_t get_attr_int(hid_t loc, const char* name) {
  Id a(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  std::int64_t v = -1;
  if (!a.valid()) return v;
  Id ftype(H5Aget_type(a), H5Tclose);
  if (H5Tget_class(ftype) != H5T_INTEGER) return -1;
  if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0) return -1;
  return v;
}

std::vector<std::string> member_names(hid_t group) {
  std::vector<std::string> names;
  hsize_t n = 0;
  if (H5Gget_num_objs(group, &n) < 0) return names;
  for (hsize_t i = 0; i < n; ++i) {
    const ssize_t len = H5Gget_objname_by_idx(group, i, nullptr, 0);
    if (len < 0) continue;
    std::string name(static_cast<std::size_t>(len) + 1, '\0');
    H5Gget_objname_by_idx(group, i, name.data(), name.size());
    name.resize(static_cast<std::size_t>(len));
    names.push_back(std::move(name));
  }
  return names;
}

std::vector<std::string> get_attr_strings(hid_t loc, const char* name) {
  std::vector<std::string> out;
  Id a(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!a.valid()) return out;
  Id ftype(H5Aget_type(a), H5Tclose);
  if (H5Tget_class(ftype) != H5T_STRING || H5Tis_variable_str(ftype) <= 0) return out;
  Id space(H5Aget_space(a), H5Sclose);
  if (H5Sget_simple_extent_ndims(space) != 1) return out;
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n <= 0) return out;
  std::vector<char*> p(static_cast<std::size_t>(n), nullptr);
  Id type = vlen_string_type();
  if (H5Aread(a, type, p.data()) < 0) return out;
  for (char* s : p) {
    out.emplace_back(s ? s : "");
    if (s) H5free_memory(s);
  }
  return out;
}

std::size_t Compound::add(const std::string& name, Kind kind, std::size_t str_len, const std::string& unit) {
  const std::size_t sz = kind == Kind::str ? str_len : 8;
  cols_.push_back({name, kind, size_, sz, unit});
  size_ += sz;
  return cols_.size() - 1;
}

std::size_t Compound::index(const std::string& name) const {
  for (std::size_t i = 0; i < cols_.size(); ++i)
    if (cols_[i].name == name) return i;
  return static_cast<std::size_t>(-1);
}

Id Compound::type() const {
  Id t(H5Tcreate(H5T_COMPOUND, size_), H5Tclose);
  for (const auto& c : cols_) {
    if (c.kind == Kind::i64) {
      H5Tinsert(t, c.name.c_str(), c.offset, H5T_NATIVE_INT64);
    } else if (c.kind == Kind::f64) {
      H5Tinsert(t, c.name.c_str(), c.offset, H5T_NATIVE_DOUBLE);
    } else {
      Id s(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(s, c.size);
      H5Tset_strpad(s, H5T_STR_NULLTERM);
      H5Tinsert(t, c.name.c_str(), c.offset, s);
    }
  }
  return t;
}

}  // namespace genbench::h5
