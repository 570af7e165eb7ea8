#include "backend/cuda/nccl_comm.h"

#include <cstring>
#include <map>
#include <string>

#include "backend/cuda/check.h"
#include "comm/comm.h"

namespace genbench {

namespace {

struct CommCache {
  std::map<const Comm*, ncclComm_t> comms;
  ~CommCache() {
    // Process exit: peers may be gone already, so nothing that waits for them.
    for (auto& [k, c] : comms) ncclCommAbort(c);
  }
};

CommCache& cache() {
  static CommCache c;
  return c;
}

}  // namespace

ncclComm_t nccl_comm_for(const Comm& comm) {
  auto& m = cache().comms;
  if (auto it = m.find(&comm); it != m.end()) return it->second;
  ncclUniqueId id{};
  std::string blob;
  if (comm.is_root()) {
    GENBENCH_CHECK_NCCL(ncclGetUniqueId(&id));
    blob.assign(reinterpret_cast<const char*>(&id), sizeof(id));
  }
  comm.broadcast(blob, 0);
  if (blob.size() != sizeof(id)) throw Error("NCCL bootstrap: the unique id did not arrive intact");
  std::memcpy(&id, blob.data(), sizeof(id));
  ncclComm_t c = nullptr;
  GENBENCH_CHECK_NCCL(ncclCommInitRank(&c, comm.size(), id, comm.rank()));
  m.emplace(&comm, c);
  return c;
}

void release_nccl_comms() {
  auto& m = cache().comms;
  for (auto& [k, c] : m) ncclCommDestroy(c);
  m.clear();
}

int nccl_version_code() {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

}  // namespace genbench
