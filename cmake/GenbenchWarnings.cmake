# Warnings for every genbench target (host C++ and CUDA host code). GENBENCH_WARNINGS_AS_ERRORS
# (the dev preset; scripts/test.sh, which CI runs) makes them errors in C++ translation units
# (the CUDA backend's host files too). CUDA translation units report their warnings; with
# GENBENCH_CUDA_WARNINGS_AS_ERRORS as well (off by default) nvcc's -Werror=all-warnings makes them
# errors. It is off because nvcc's own generated host code trips the host compiler: on gcc 12 with
# nvcc 13.0 every .cu file including backend.h fails -Wparentheses on a pointer-to-member
# declaration nvcc rewrites with parentheses (seen 2026-12-02). ptxas's performance notes
# (serialized wgmma, spills) are info lines it does not catch: tests/kernels/ptxas_report.py.
# -Wno-missing-field-initializers: aggregates here are initialised by their leading members on
# purpose (ImplementationInfo, AxisSpec, records in tests), the rest keeping their defaults.
option(GENBENCH_CUDA_WARNINGS_AS_ERRORS "With GENBENCH_WARNINGS_AS_ERRORS, also nvcc's -Werror=all-warnings" OFF)
add_library(genbench_warnings INTERFACE)
target_compile_options(genbench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion
    -Wno-missing-field-initializers>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-missing-field-initializers --expt-relaxed-constexpr>)
if(GENBENCH_WARNINGS_AS_ERRORS)
  target_compile_options(genbench_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  if(GENBENCH_CUDA_WARNINGS_AS_ERRORS)
    target_compile_options(genbench_warnings INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  endif()
endif()

# Sanitizer build for host code (ASan + UBSan), used by the "asan" preset.
option(GENBENCH_SANITIZE "Build host code with AddressSanitizer and UBSan" OFF)
if(GENBENCH_SANITIZE)
  target_compile_options(genbench_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(genbench_warnings INTERFACE -fsanitize=address,undefined)
  # Sanitizer defaults for Open MPI (cmake/sanitizer_defaults.cpp), in every executable.
  target_sources(genbench_warnings INTERFACE
    $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:${CMAKE_CURRENT_LIST_DIR}/sanitizer_defaults.cpp>)
endif()
