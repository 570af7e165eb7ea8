#pragma once
#include <memory>
#include <string>

#include "comm/comm.h"

namespace genbench::test {

void init_comm(int* argc, char*** argv);  // keeps argc/argv; MPI starts on the first comm()
void finalize_comm();
const Comm& comm();

// A fresh temporary directory, removed at exit.
std::string temp_dir();
std::string source_dir();
// True when a CUDA device is visible (GPU tests GTEST_SKIP otherwise).
bool have_gpu();

}  // namespace genbench::test
