# `cmake --install` of this project: every family's headers and the smem_cookbook CMake package,
# so that a consumer writes
#
#   find_package(smem_cookbook CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE smem::gemm smem::transpose)
#
# and includes <gemm/gemm.cuh>, as in this tree. The families are the ones recipes/ defined with
# smem_add_family() (the global property SMEM_FAMILIES): a new family needs no line here.
include(CMakePackageConfigHelpers)

set(SMEM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/smem_cookbook)
get_property(smem_families GLOBAL PROPERTY SMEM_FAMILIES)

set(SMEM_FIND_CCCL "")  # the config's line that finds CCCL, when a family links it
foreach(family IN LISTS smem_families)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/recipes/${family}/
          DESTINATION ${SMEM_INSTALL_INCLUDEDIR}/${family}
          FILES_MATCHING PATTERN "*.cuh")
  install(TARGETS smem_${family} EXPORT smem_cookbook_targets)
  get_target_property(libs smem_${family} INTERFACE_LINK_LIBRARIES)
  if("CCCL::CCCL" IN_LIST libs)
    # CCCL (CUB, Thrust, libcu++) ships with the CUDA Toolkit; its package lies beside the libraries.
    set(SMEM_FIND_CCCL "find_dependency(CCCL CONFIG HINTS \"\${CUDAToolkit_LIBRARY_DIR}/cmake/cccl\")")
  endif()
endforeach()

# The family headers' step-table macro (recipes/smem_steps.cuh), one level above the families.
install(FILES ${PROJECT_SOURCE_DIR}/recipes/smem_steps.cuh DESTINATION ${SMEM_INSTALL_INCLUDEDIR})
# The Hopper core (recipes/sm90/), beside the families: their Hopper kits include "../sm90/sm90.cuh".
install(DIRECTORY ${PROJECT_SOURCE_DIR}/recipes/sm90/ DESTINATION ${SMEM_INSTALL_INCLUDEDIR}/sm90
        FILES_MATCHING PATTERN "*.cuh")

install(EXPORT smem_cookbook_targets NAMESPACE smem:: DESTINATION ${SMEM_INSTALL_CMAKEDIR}
        FILE smem_cookbook-targets.cmake)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/smem_cookbook-config.cmake.in
                              ${PROJECT_BINARY_DIR}/smem_cookbook-config.cmake
                              INSTALL_DESTINATION ${SMEM_INSTALL_CMAKEDIR})
# Headers only: the same package serves any architecture.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/smem_cookbook-config-version.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/smem_cookbook-config.cmake
              ${PROJECT_BINARY_DIR}/smem_cookbook-config-version.cmake
        DESTINATION ${SMEM_INSTALL_CMAKEDIR})
