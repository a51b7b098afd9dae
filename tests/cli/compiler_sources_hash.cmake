# The compiler sources' hash in every compile-cache key
# (cmake/compiler_sources_hash.cmake). Included from tests/CMakeLists.txt it
# adds the tests; run with `cmake -P` it drives one (CHECK=tree or CHECK=build).
#
# tree: on a small tree of its own, the hash depends on the contents and the
#   relative paths of the .cpp, .hpp and .def files under ir/, lowering/ and
#   runtime/ and on LLVM's version, and on nothing else: not on where the tree
#   is, nor on other folders or other kinds of file.
# build: the hash `kiln info` prints is the hash of this source tree, so the
#   build made it again after the last change to a compiler source.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  foreach(test tree build)
    add_test(NAME cli.compiler_sources_hash_${test}
             COMMAND ${CMAKE_COMMAND} -DCHECK=${test} -DSCRIPT=${PROJECT_SOURCE_DIR}/cmake/compiler_sources_hash.cmake
                     -DROOT=${PROJECT_SOURCE_DIR} -DLLVM_VERSION=${LLVM_PACKAGE_VERSION}
                     -DKILN=$<TARGET_FILE:kiln_tool> -DWORK=${CMAKE_CURRENT_BINARY_DIR}/compiler_sources_hash_${test}
                     -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(cli.compiler_sources_hash_${test} PROPERTIES LABELS cli)
  endforeach()
  return()
endif()

# The hash of the tree at `root` for LLVM `llvm_version`, in `result`.
function(hash_of root llvm_version result)
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${root} -DLLVM_VERSION=${llvm_version}
                          -DOUTPUT=${WORK}/hash.cpp -P ${SCRIPT} RESULT_VARIABLE code ERROR_VARIABLE error)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "hashing ${root} failed (${code}): ${error}")
  endif()
  file(READ ${WORK}/hash.cpp generated)
  if(NOT generated MATCHES "return \"([0-9a-f]+)\";")
    message(FATAL_ERROR "no hash in the generated file:\n${generated}")
  endif()
  set(${result} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

function(expect_hash what root llvm_version relation expected)
  hash_of(${root} ${llvm_version} hash)
  if(relation STREQUAL "same" AND NOT hash STREQUAL expected)
    message(FATAL_ERROR "${what}: the hash changed (${expected} -> ${hash})")
  elseif(relation STREQUAL "other" AND hash STREQUAL expected)
    message(FATAL_ERROR "${what}: the hash stayed ${hash}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
if(CHECK STREQUAL "build")
  hash_of(${ROOT} ${LLVM_VERSION} expected)
  execute_process(COMMAND ${KILN} info RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE error)
  if(NOT code EQUAL 0 OR NOT out MATCHES "keys hold the compiler sources' hash ([0-9a-f]+)\n")
    message(FATAL_ERROR "kiln info (exit ${code}) names no hash:\n${out}${error}")
  endif()
  if(NOT CMAKE_MATCH_1 STREQUAL expected)
    message(FATAL_ERROR "kiln info says ${CMAKE_MATCH_1}, the sources hash to ${expected}: the build is stale")
  endif()
  return()
endif()

set(tree ${WORK}/tree)
file(WRITE ${tree}/ir/passes/fold.cpp "int fold();\n")
file(WRITE ${tree}/lowering/include/codegen.hpp "int emit();\n")
file(WRITE ${tree}/runtime/ops.def "OP(add)\n")
file(WRITE ${tree}/ir/README.md "notes\n")
file(WRITE ${tree}/dsl/tile.hpp "int tile();\n")
hash_of(${tree} 19.1.7 base)
if(NOT base MATCHES "^[0-9a-f]+$")
  message(FATAL_ERROR "the hash is not hex: '${base}'")
endif()
string(LENGTH ${base} length)
if(NOT length EQUAL 64)
  message(FATAL_ERROR "the hash has ${length} digits, not SHA-256's 64: ${base}")
endif()

file(COPY ${tree}/ DESTINATION ${WORK}/elsewhere/copy)
expect_hash("the same files in another folder" ${WORK}/elsewhere/copy 19.1.7 same ${base})
expect_hash("another LLVM" ${tree} 19.1.0 other ${base})
file(WRITE ${tree}/dsl/tile.hpp "int tile(int);\n")
file(WRITE ${tree}/ir/README.md "other notes\n")
expect_hash("a DSL header and a README changed" ${tree} 19.1.7 same ${base})
foreach(source ir/passes/fold.cpp lowering/include/codegen.hpp runtime/ops.def)
  file(READ ${tree}/${source} original)
  file(APPEND ${tree}/${source} " ")
  expect_hash("one byte appended to ${source}" ${tree} 19.1.7 other ${base})
  file(WRITE ${tree}/${source} "${original}")
endforeach()
expect_hash("the sources restored" ${tree} 19.1.7 same ${base})
file(RENAME ${tree}/ir/passes/fold.cpp ${tree}/ir/passes/fold_constants.cpp)
expect_hash("a source renamed" ${tree} 19.1.7 other ${base})
file(RENAME ${tree}/ir/passes/fold_constants.cpp ${tree}/ir/passes/fold.cpp)
file(WRITE ${tree}/lowering/src/new_pass.cpp "")
expect_hash("an empty source added" ${tree} 19.1.7 other ${base})
