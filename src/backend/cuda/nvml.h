#pragma once
// NVML, loaded at run time (dlopen of libnvidia-ml.so.1) so the binary runs where the library
// is absent: then every sample comes back with valid == false.
#include <string>

#include "backend/backend.h"

namespace genbench {

class NvmlDevice {
 public:
  // pci_bus_id as cudaDeviceGetPCIBusId writes it ("0000:18:00.0").
  explicit NvmlDevice(const std::string& pci_bus_id);
  bool available() const { return handle_ != nullptr; }
  DeviceState sample() const;

 private:
  void* handle_ = nullptr;  // nvmlDevice_t
};

}  // namespace genbench
