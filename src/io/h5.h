#pragma once
// Thin RAII and helpers over the HDF5 C API, used by the result file writer and reader.
#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace genbench::h5 {

// Owns one HDF5 identifier and closes it with the matching H5*close.
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer c) : id_(id), close_(c) {}
  Id(Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Id& operator=(Id&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

// Throws genbench::Error naming the HDF5 call and file when id/status is negative.
hid_t check(hid_t id, const char* what, const std::string& path);

void set_attr(hid_t loc, const char* name, const std::string& value);
void set_attr(hid_t loc, const char* name, std::int64_t value);
void set_attr(hid_t loc, const char* name, double value);
void set_attr(hid_t loc, const char* name, const std::vector<std::string>& values);
bool has_attr(hid_t loc, const char* name);
std::string get_attr_string(hid_t loc, const char* name);
std::int64_t get_attr_int(hid_t loc, const char* name);
// A one-dimensional attribute of variable-length strings (set_attr's vector form); empty when
// it is missing or of another type.
std::vector<std::string> get_attr_strings(hid_t loc, const char* name);
// The names of a group's members (datasets and subgroups), in the file's order.
std::vector<std::string> member_names(hid_t group);

// A compound row type built column by column, and a packed row buffer for it.
class Compound {
 public:
  enum class Kind { i64, f64, str };
  struct Column {
    std::string name;
    Kind kind;
    std::size_t offset;
    std::size_t size;
    std::string unit;
  };
  std::size_t add(const std::string& name, Kind kind, std::size_t str_len = 0, const std::string& unit = "");
  // Pads the row so that the next column (or the row's end) starts at a multiple of `a` bytes.
  void align(std::size_t a) { size_ = (size_ + a - 1) / a * a; }
  std::size_t index(const std::string& name) const;
  const std::vector<Column>& columns() const { return cols_; }
  std::size_t size() const { return size_; }
  Id type() const;  // creates the HDF5 compound type

 private:
  std::vector<Column> cols_;
  std::size_t size_ = 0;
};

class Row {
 public:
  explicit Row(const Compound& c) : c_(&c), buf_(c.size(), 0) {}
  void set(std::size_t col, std::int64_t v) { std::memcpy(&buf_[c_->columns()[col].offset], &v, 8); }
  void set(std::size_t col, double v) { std::memcpy(&buf_[c_->columns()[col].offset], &v, 8); }
  void set(std::size_t col, const std::string& v) {
    const auto& cc = c_->columns()[col];
    std::memset(&buf_[cc.offset], 0, cc.size);
    std::memcpy(&buf_[cc.offset], v.data(), std::min(v.size(), cc.size - 1));
  }
  const unsigned char* data() const { return buf_.data(); }

 private:
  const Compound* c_;
  std::vector<unsigned char> buf_;
};

}  // namespace genbench::h5
