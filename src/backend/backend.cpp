#include "backend/backend.h"

#include "core/strings.h"

namespace genbench {

const char* backend_name(BackendKind k) { return k == BackendKind::cuda ? "cuda" : "host"; }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (owner_ && ptr_) owner_->release(ptr_, bytes_);
    owner_ = o.owner_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.owner_ = nullptr;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (owner_ && ptr_) owner_->release(ptr_, bytes_);
}

DeviceBuffer Backend::allocate(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  void* p = raw_allocate(bytes);
  if (!p)
    throw OutOfMemory(strprintf("cannot allocate %s on the %s backend (%s in use by this point)",
                                format_bytes(static_cast<double>(bytes)).c_str(), backend_name(kind()),
                                format_bytes(static_cast<double>(current_)).c_str()));
  current_ += static_cast<std::int64_t>(bytes);
  if (current_ > peak_) peak_ = current_;
  return DeviceBuffer(this, p, bytes);
}

void Backend::release(void* p, std::size_t bytes) {
  raw_free(p);
  current_ -= static_cast<std::int64_t>(bytes);
}

}  // namespace genbench
