#pragma once
// CPU emulation: CUDA runtime checks have nothing to check.
#define GENBENCH_CHECK_CUDA(call) ((void)0)
#define GENBENCH_CHECK_LAUNCH() ((void)0)
