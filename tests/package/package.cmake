# The package test: install this build into a prefix inside the build tree,
# run the installed kiln tool, configure and build tests/package/consumer (an
# outside project using find_package(kiln), kiln::kiln and kiln::kernels, and
# a C program using kiln::c, and kiln_add_kernels for consumer_aot) against that
# prefix, run the programs (consumer_aot on emu), and check that consumer_aot
# links no LLVM.
#
# Included from tests/CMakeLists.txt it registers the test; run with
# `cmake -P` it is the test's driver.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME package.consumer
           COMMAND ${CMAKE_COMMAND}
                   -DKILN_BUILD_DIR=${CMAKE_BINARY_DIR}
                   -DKILN_WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/package
                   -DKILN_CONSUMER_DIR=${CMAKE_CURRENT_LIST_DIR}/consumer
                   -DKILN_CONFIG=$<CONFIG>
                   "-DKILN_GENERATOR=${CMAKE_GENERATOR}"
                   -DKILN_CXX_COMPILER=${CMAKE_CXX_COMPILER}
                   -DKILN_NO_LLVM_SCRIPT=${PROJECT_SOURCE_DIR}/tests/aot/no_llvm.cmake
                   "-DKILN_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}"
                   -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(package.consumer PROPERTIES LABELS package TIMEOUT 600)
  return()
endif()

# Runs one step; on failure prints its output and fails the test.
function(package_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "package: ${what} failed (${result}):\n${output}")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

set(prefix ${KILN_WORK_DIR}/prefix)
set(consumer_build ${KILN_WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${prefix} ${consumer_build})

set(config_args "")
set(build_type_args "")
if(KILN_CONFIG)
  set(config_args --config ${KILN_CONFIG})
  set(build_type_args -DCMAKE_BUILD_TYPE=${KILN_CONFIG})
endif()
set(launcher_args "")
if(KILN_CXX_COMPILER_LAUNCHER)
  set(launcher_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${KILN_CXX_COMPILER_LAUNCHER}")
endif()

package_step("cmake --install ${KILN_BUILD_DIR}"
             ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${prefix} ${config_args})
# The installed tool runs from the prefix (it finds libLLVM through its RPATH).
package_step("running ${prefix}/bin/kiln" ${prefix}/bin/kiln run vector_add --n 1000 --device cpu --check)
if(NOT step_output MATCHES "check: relative error [^\n]* ok\n")
  message(FATAL_ERROR "package: the installed kiln printed:\n${step_output}")
endif()
package_step("configuring the consumer project"
             ${CMAKE_COMMAND} -S ${KILN_CONSUMER_DIR} -B ${consumer_build} -G ${KILN_GENERATOR}
             -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
             -DCMAKE_CXX_COMPILER=${KILN_CXX_COMPILER} ${launcher_args} ${build_type_args})

# The consumer must have found the installed package, not some other kiln.
file(STRINGS ${consumer_build}/CMakeCache.txt kiln_dir REGEX "^kiln_DIR:")
string(REGEX REPLACE "^kiln_DIR:[A-Z]+=" "" kiln_dir "${kiln_dir}")
file(REAL_PATH "${kiln_dir}" kiln_dir)
file(REAL_PATH "${prefix}" real_prefix)
string(FIND "${kiln_dir}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "package: the consumer found kiln at ${kiln_dir}, not under the install prefix ${real_prefix}")
endif()

package_step("building the consumer project" ${CMAKE_COMMAND} --build ${consumer_build} ${config_args})

set(consumer ${consumer_build}/consumer)
if(NOT EXISTS ${consumer})
  set(consumer ${consumer_build}/${KILN_CONFIG}/consumer)
endif()
package_step("running the consumer" ${consumer})
string(STRIP "${step_output}" step_output)
message(STATUS "${step_output}")

set(c_consumer ${consumer_build}/c_consumer)
if(NOT EXISTS ${c_consumer})
  set(c_consumer ${consumer_build}/${KILN_CONFIG}/c_consumer)
endif()
package_step("running the C consumer" ${c_consumer})
if(NOT step_output MATCHES "c_consumer: vector_add of 1000 floats through the C API, 0 mismatches\n")
  message(FATAL_ERROR "package: the C consumer printed:\n${step_output}")
endif()
message(STATUS "${step_output}")
set(consumer_aot ${consumer_build}/consumer_aot)
if(NOT EXISTS ${consumer_aot})
  set(consumer_aot ${consumer_build}/${KILN_CONFIG}/consumer_aot)
endif()
package_step("running the ahead-of-time consumer on emu" ${consumer_aot} emu)
string(STRIP "${step_output}" step_output)
message(STATUS "${step_output}")
package_step("checking that consumer_aot links no LLVM"
             ${CMAKE_COMMAND} -DKILN_BINARY=${consumer_aot} -DKILN_LAUNCHER=kiln_kernels::saxpy -P ${KILN_NO_LLVM_SCRIPT})
