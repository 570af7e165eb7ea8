// Linked into every executable of a sanitized build (GENBENCH_SANITIZE). Open MPI and the
// libraries under it (hwloc, PMIx, libevent, its dlopen'ed mca_* plugins) keep allocations for
// the life of the process, often in plugins already unloaded when LeakSanitizer reports, so
// their stacks cannot be attributed: leak checking is off by default in the MPI binaries (the
// config fuzzer turns it on, ASAN_OPTIONS=detect_leaks=1). Address errors and UBSan stay on.
extern "C" const char* __asan_default_options() { return "detect_leaks=0:protect_shadow_gap=0"; }
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libmpi\nleak:libopen-pal\nleak:libopen-rte\nleak:libhwloc\nleak:libpmix\nleak:libevent\n"
         "leak:mca_\nleak:libhdf5\n";
}
