# cmake -DBUILD_DIR=<build> -DPREFIX=<prefix> -P install_into.cmake: `cmake --install` of the
# build into a fresh prefix (emptied first, so that no header of an earlier install remains).
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} COMMAND_ERROR_IS_FATAL ANY)
