#include "backend/backend.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strings.h"

namespace genbench {

const char* backend_name(BackendKind k) { return k == BackendKind::cuda ? "cuda" : "host"; }

const std::vector<DeviceInfoField>& device_info_fields() {
  using D = DeviceInfo;
  auto i = [](const char* n, const char* u, const char* m, int D::*f) {
    return DeviceInfoField{n, u, m, 0, f, nullptr, nullptr};
  };
  auto l = [](const char* n, const char* u, const char* m, std::int64_t D::*f) {
    return DeviceInfoField{n, u, m, 0, nullptr, f, nullptr};
  };
  auto s = [](const char* n, std::size_t len, const char* m, std::string D::*f) {
    return DeviceInfoField{n, "", m, len, nullptr, nullptr, f};
  };
  static const std::vector<DeviceInfoField> fields{
      i("rank", "", "MPI rank (COMM_WORLD)", &D::rank),
      i("local_rank", "", "rank among the ranks of its node", &D::local_rank),
      s("host", 64, "node name", &D::host),
      s("backend", 16, "cuda or host", &D::backend),
      i("device_index", "", "CUDA device ordinal the rank uses; -1 on the host backend", &D::device_index),
      s("name", 96, "device name (host: CPU model)", &D::name),
      s("uuid", 64, "device UUID (cuda)", &D::uuid),
      s("pci_bus_id", 32, "PCI bus id of the device (cuda)", &D::pci_bus_id),
      i("sm_count", "", "multiprocessors (host: logical CPUs)", &D::sm_count),
      i("cc_major", "", "compute capability, major (cuda)", &D::cc_major),
      i("cc_minor", "", "compute capability, minor (cuda)", &D::cc_minor),
      l("memory_bytes", "B", "device memory (host: physical memory)", &D::memory_bytes),
      l("l2_bytes", "B", "L2 cache size", &D::l2_bytes),
      s("driver_version", 32, "CUDA driver version", &D::driver_version),
      s("runtime_version", 32, "CUDA runtime version", &D::runtime_version),
      s("nccl_version", 32, "NCCL version", &D::nccl_version),
      s("cublas_version", 32, "cuBLAS(Lt) version", &D::cublas_version),
      s("cudnn_version", 32, "cuDNN version", &D::cudnn_version),
      s("mpi_version", 96, "MPI library version string", &D::mpi_version),
      s("hdf5_version", 32, "HDF5 library version", &D::hdf5_version),
  };
  return fields;
}

std::string to_json(const DeviceInfo& d) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& f : device_info_fields()) {
    if (f.as_int) j[f.name] = d.*f.as_int;
    else if (f.as_i64) j[f.name] = d.*f.as_i64;
    else j[f.name] = d.*f.as_str;
  }
  return j.dump();
}

DeviceInfo device_info_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(std::string("device info: not JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error("device info: not a JSON object");
  DeviceInfo d;
  for (const auto& f : device_info_fields()) {
    const auto it = j.find(f.name);
    if (it == j.end()) throw Error(std::string("device info: field '") + f.name + "' missing");
    if (f.as_str ? !it->is_string() : !it->is_number_integer())
      throw Error(std::string("device info: field '") + f.name + "' has the wrong type");
    if (f.as_int) d.*f.as_int = it->get<int>();
    else if (f.as_i64) d.*f.as_i64 = it->get<std::int64_t>();
    else d.*f.as_str = it->get<std::string>();
  }
  return d;
}

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
