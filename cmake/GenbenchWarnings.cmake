# Warnings for every genbench target (host C++ and CUDA). GENBENCH_WARNINGS_AS_ERRORS (the dev
# preset; scripts/test.sh, which CI runs) makes them errors: -Werror in C++ translation units (the
# CUDA backend's host files too), nvcc's -Werror=all-warnings in CUDA ones (its own diagnostics
# and the host compiler's on the host side). CUDA translation units leave out one host-compiler
# warning, -Wparentheses: the host code nvcc generates trips it on gcc 12 with nvcc 13.0 in every
# .cu file that includes backend.h (a pointer-to-member declaration nvcc rewrites with
# parentheses), which no source here can avoid; C++ translation units keep it. ptxas's
# performance notes (serialized wgmma, spills) are info lines no -Werror catches:
# tests/kernels/ptxas_report.py.
# -Wno-missing-field-initializers: aggregates here are initialised by their leading members on
# purpose (ImplementationInfo, AxisSpec, records in tests), the rest keeping their defaults.
add_library(genbench_warnings INTERFACE)
target_compile_options(genbench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion
    -Wno-missing-field-initializers>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-missing-field-initializers,-Wno-parentheses
    --expt-relaxed-constexpr>)
if(GENBENCH_WARNINGS_AS_ERRORS)
  target_compile_options(genbench_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
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
