#include "backend/cuda/nccl_comm.h"

#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "backend/cuda/check.h"
#include "comm/comm.h"
#include "core/watchdog.h"

namespace genbench {

namespace {

struct CommCache {
  std::map<std::pair<const Comm*, int>, ncclComm_t> comms;  // (ranks, CTA limit; 0 = default)
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

ncclComm_t nccl_comm_for(const Comm& comm) { return nccl_comm_for(comm, 0); }

ncclComm_t nccl_comm_for(const Comm& comm, int ctas) {
  auto& m = cache().comms;
  if (auto it = m.find({&comm, ctas}); it != m.end()) return it->second;
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
  if (ctas > 0) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.minCTAs = ctas;
    config.maxCTAs = ctas;
    GENBENCH_CHECK_NCCL(ncclCommInitRankConfig(&c, comm.size(), id, comm.rank(), &config));
  } else {
    GENBENCH_CHECK_NCCL(ncclCommInitRank(&c, comm.size(), id, comm.rank()));
  }
  m.emplace(std::make_pair(&comm, ctas), c);
  // On a job abort (watchdog deadline or a fatal error on this rank) abort the communicators
  // first, so a rank stuck inside an NCCL kernel returns before the process is ended.
  static const int hook = add_abort_hook("ncclCommAbort", [] {
    auto& all = cache().comms;
    for (auto& [k, cm] : all) ncclCommAbort(cm);
    all.clear();
  });
  (void)hook;
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
