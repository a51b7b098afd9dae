# Compile-fail tests: each tests/compile_fail/*.cpp is a kernel with one
# mistake that the C++ compiler must reject with kiln's named check.
#
# A file starts with one or more lines `// expect: <regex>` (CMake regex
# syntax), or the driver is given the regex as KILN_EXPECT; its test builds
# the file's EXCLUDE_FROM_ALL object library and passes only if the build
# fails, the output names the file and every regex matches. A file starting
# with `// expect-compile` is a positive control: its test passes only if the
# build succeeds, proving the harness can tell the two apart.
#
# The build's output (LC_ALL=C: GCC's plain quotes) is kept in
# <build>/compile_fail/<target>.log, where book.compile_errors reads it.
#
# Included from tests/CMakeLists.txt it registers the tests; run with
# `cmake -P` it is the driver of one test.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  file(GLOB KILN_COMPILE_FAIL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
  foreach(source IN LISTS KILN_COMPILE_FAIL_SOURCES)
    get_filename_component(name ${source} NAME_WE)
    set(target kiln_compile_fail_${name})
    add_library(${target} OBJECT EXCLUDE_FROM_ALL ${source})
    target_link_libraries(${target} PRIVATE kiln)
    add_test(NAME compile_fail.${name}
             COMMAND ${CMAKE_COMMAND} -DKILN_BUILD_DIR=${CMAKE_BINARY_DIR} -DKILN_TARGET=${target}
                     -DKILN_SOURCE=${source} -DKILN_CONFIG=$<CONFIG> -P ${CMAKE_CURRENT_LIST_FILE})
    # The tests build in the shared build tree: one at a time.
    set_tests_properties(compile_fail.${name} PROPERTIES LABELS compile-fail RESOURCE_LOCK kiln_build_tree TIMEOUT 600
                                                         FIXTURES_SETUP kiln_compile_fail_logs)
  endforeach()
  return()
endif()

get_filename_component(file_name ${KILN_SOURCE} NAME)
file(READ ${KILN_SOURCE} text)

set(expect_compile FALSE)
set(regex_count 0)
if(DEFINED KILN_EXPECT)
  set(regex_count 1)
  set(regex_1 "${KILN_EXPECT}")
elseif(text MATCHES "^// expect-compile\n")
  set(expect_compile TRUE)
else()
  # Regexes may hold ';', so they are kept in numbered variables, not a list.
  while(text MATCHES "^// expect: ([^\n]*)\n(.*)$")
    math(EXPR regex_count "${regex_count} + 1")
    set(regex_${regex_count} "${CMAKE_MATCH_1}")
    set(text "${CMAKE_MATCH_2}")
  endwhile()
  if(regex_count EQUAL 0)
    message(FATAL_ERROR "compile-fail: ${file_name} starts with neither `// expect: <regex>` nor `// expect-compile`")
  endif()
endif()

set(config_args "")
if(KILN_CONFIG)
  set(config_args --config ${KILN_CONFIG})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${CMAKE_COMMAND} --build ${KILN_BUILD_DIR} --target ${KILN_TARGET}
                        ${config_args}
                RESULT_VARIABLE build_result
                OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
string(ASCII 27 escape)
string(REGEX REPLACE "${escape}\\[[0-9;]*[mK]" "" output "${output}")
file(WRITE ${KILN_BUILD_DIR}/compile_fail/${KILN_TARGET}.log "${output}")

if(expect_compile)
  if(NOT build_result EQUAL 0)
    message(FATAL_ERROR "compile-fail: ${file_name} must compile but the build failed (${build_result}):\n${output}")
  endif()
  message(STATUS "compile-fail: ${file_name} compiles, as expected")
  return()
endif()

if(build_result EQUAL 0)
  message(FATAL_ERROR "compile-fail: ${file_name} compiled but must be rejected:\n${output}")
endif()
string(FIND "${output}" "${file_name}" file_named)
if(file_named EQUAL -1)
  message(FATAL_ERROR "compile-fail: the build failed without compiling ${file_name}:\n${output}")
endif()
foreach(i RANGE 1 ${regex_count})
  if(NOT output MATCHES "${regex_${i}}")
    message(FATAL_ERROR "compile-fail: ${file_name} was rejected, but not with `${regex_${i}}`:\n${output}")
  endif()
  message(STATUS "compile-fail: ${file_name} rejected with: ${CMAKE_MATCH_0}")
endforeach()
