# The op schema's compile-time coverage checks (label compile-fail): ops.def
# with one more elementwise op, `schema_probe`, that nothing implements, must
# stop the build of the interpreter's and of the code generator's
# elementwise family, each with its static_assert naming what is missing.
# Included from tests/CMakeLists.txt; each test runs compile_fail.cmake's driver.

set(KILN_SCHEMA_PROBE_INCLUDE ${CMAKE_CURRENT_BINARY_DIR}/schema_probe)
set(KILN_OPS_TABLE ${PROJECT_SOURCE_DIR}/ir/include/kiln/ir/ops.def)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${KILN_OPS_TABLE})
file(READ ${KILN_OPS_TABLE} ops_table)
file(WRITE ${KILN_SCHEMA_PROBE_INCLUDE}/kiln/ir/ops.def
     "${ops_table}KILN_OP(schema_probe, \"schema_probe\", 1, 1, 0, verify_same_float, \"\", elementwise, none, joins)\n")

function(kiln_schema_probe name source library expect)
  set(target kiln_schema_probe_${name})
  add_library(${target} OBJECT EXCLUDE_FROM_ALL ${source})
  target_include_directories(${target} BEFORE PRIVATE ${KILN_SCHEMA_PROBE_INCLUDE})
  target_link_libraries(${target} PRIVATE ${library})
  add_test(NAME compile_fail.schema_${name}
           COMMAND ${CMAKE_COMMAND} -DKILN_BUILD_DIR=${CMAKE_BINARY_DIR} -DKILN_TARGET=${target}
                   -DKILN_SOURCE=${source} "-DKILN_EXPECT=${expect}" -DKILN_CONFIG=$<CONFIG>
                   -P ${CMAKE_CURRENT_LIST_DIR}/compile_fail.cmake)
  set_tests_properties(compile_fail.schema_${name} PROPERTIES LABELS compile-fail RESOURCE_LOCK kiln_build_tree
                                                              TIMEOUT 600)
endfunction()

kiln_schema_probe(interpreter ${PROJECT_SOURCE_DIR}/runtime/interp/elementwise.cpp kiln_runtime
                  "an elementwise op of ops.def has no interpreter routine in elementwise_binder")
kiln_schema_probe(codegen ${PROJECT_SOURCE_DIR}/lowering/src/codegen_elementwise.cpp kiln_lowering
                  "an elementwise op of ops.def has no rule in ElementLowering::rule")
target_include_directories(kiln_schema_probe_codegen SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
separate_arguments(llvm_definitions NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(kiln_schema_probe_codegen PRIVATE ${llvm_definitions})
