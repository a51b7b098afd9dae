# Installs kiln's headers, libraries and the kiln tool, and exports them as
# the CMake package `kiln` (find_package(kiln) then link kiln::kiln, and
# kiln::kernels for the sample kernel library; kiln::c is the C API,
# libkiln_c.so; kiln::tool is the tool).
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

foreach(component ir dsl lowering runtime stdlib kernels aot)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${component}/include/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.def")
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/capi/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

install(TARGETS kiln_ir kiln_lowering kiln_runtime_core kiln_runtime kiln_dsl kiln_stdlib kiln kiln_kernels kiln_c kiln_tool kiln_aot kiln_aot_generator
        EXPORT kilnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The installed tool and C library find the shared libLLVM where the build found it.
set_target_properties(kiln_tool PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE EXPORT_NAME tool)
set_target_properties(kiln_c PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)

install(EXPORT kilnTargets
        NAMESPACE kiln::
        FILE kilnTargets.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/kiln_add_kernels.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR})
