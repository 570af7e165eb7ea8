#include "support/test_env.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "backend/backend.h"

namespace genbench::test {

namespace {
std::unique_ptr<Comm> g_comm;
int* g_argc = nullptr;
char*** g_argv = nullptr;
std::vector<std::string> g_dirs;
}  // namespace

// MPI starts on the first comm(), not here: a singleton MPI_Init costs most of a second (Open
// MPI starts its runtime), and ctest runs every test in a process of its own, most of which
// never touch MPI.
void init_comm(int* argc, char*** argv) {
  g_argc = argc;
  g_argv = argv;
}

void finalize_comm() {
  for (const auto& d : g_dirs) std::filesystem::remove_all(d);
  g_comm.reset();
}

const Comm& comm() {
  if (!g_comm) g_comm = std::make_unique<Comm>(g_argc, g_argv);
  return *g_comm;
}

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "genbench-test-XXXXXX").string();
  const char* d = mkdtemp(tmpl.data());
  g_dirs.push_back(d ? d : "");
  return d ? d : "";
}

std::string source_dir() { return GENBENCH_SOURCE_DIR; }

bool have_gpu() { return cuda_backend_built() && cuda_device_count() > 0; }

}  // namespace genbench::test
