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
if(SMEM_WARNINGS_AS_ERRORS)
  add_compile_options(
    "$<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Werror>"
    "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:--Werror=all-warnings>")
endif()
