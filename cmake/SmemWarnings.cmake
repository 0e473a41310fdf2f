# Compiler warnings for this project's own programs: tests, benchmarks, the tuner, the copy tests
# and the docs programs. Included from the top-level CMakeLists.txt before its subdirectories, so
# every target defined in this source tree gets them and a consumer's targets never do (the
# family targets are INTERFACE libraries and carry no warning flags).
#
#   host code (g++, and g++ behind nvcc via -Xcompiler): -Wall -Wextra
#   nvcc's own front end: its default warnings (declared but never referenced, unreachable
#     code, narrowing, ...) and --Wreorder
#   SMEM_WARNINGS_AS_ERRORS (ON in the ci preset): -Werror for g++; nvcc's
#     -Werror=all-warnings, which makes its own, ptxas', nvlink's and the host compiler's
#     warnings errors
option(SMEM_WARNINGS "Compile this project's programs with warnings (-Wall -Wextra)" ${PROJECT_IS_TOP_LEVEL})
option(SMEM_WARNINGS_AS_ERRORS "Treat compiler warnings as errors (the ci preset sets it)" OFF)

if(SMEM_WARNINGS)
  add_compile_options(
    "$<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall;-Wextra>"
    "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:-Xcompiler=-Wall,-Wextra;--Wreorder>")
endif()
# Warnings that are printed but do not fail the build: one line each, naming where it comes from.
# Each is a known warning in code being rewritten; remove its line with the fix.
set(smem_warnings_not_errors
  stringop-truncation  # recipes/gemm/sgemm_13_autotuned.cuh, device_name(): strncpy(names[dev], p.name, 255)
)

if(SMEM_WARNINGS_AS_ERRORS)
  add_compile_options(
    "$<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Werror>"
    "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:--Werror=all-warnings>")
  foreach(w IN LISTS smem_warnings_not_errors)
    # GCC's warnings: for g++, and for nvcc when its host compiler is the same g++.
    add_compile_options("$<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-error=${w}>"
                        "$<$<AND:$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>,$<CXX_COMPILER_ID:GNU>>:-Xcompiler=-Wno-error=${w}>")
  endforeach()
endif()
