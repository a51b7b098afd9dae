# Kernels compiled ahead of time (label `aot`): an application built with
# kiln_add_kernels runs its kernels on cpu and emu and checks them; it links
# no LLVM (ldd, nm); and its generated launcher rejects a wrong argument type
# at compile time.
add_executable(aot_app ${CMAKE_CURRENT_LIST_DIR}/aot_app.cpp)
kiln_add_kernels(TARGET aot_app KERNELS ${CMAKE_CURRENT_LIST_DIR}/aot_kernels.cpp ARCHS sm_80 sm_90a)
add_test(NAME aot.run COMMAND aot_app cpu emu emu:1)
add_test(NAME aot.no_llvm COMMAND ${CMAKE_COMMAND} -DKILN_BINARY=$<TARGET_FILE:aot_app> -DKILN_LAUNCHER=kiln_kernels::scale_bias
                                  -P ${CMAKE_CURRENT_LIST_DIR}/no_llvm.cmake)
set_tests_properties(aot.run aot.no_llvm PROPERTIES LABELS aot)

# The compile-fail test, driven by compile_fail/compile_fail.cmake, on the
# generated header of aot_app_kernels.
add_library(kiln_compile_fail_aot_launch_wrong_type OBJECT EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/launch_wrong_type.cpp)
target_link_libraries(kiln_compile_fail_aot_launch_wrong_type PRIVATE aot_app_kernels)
add_test(NAME compile_fail.aot_launch_wrong_type
         COMMAND ${CMAKE_COMMAND} -DKILN_BUILD_DIR=${CMAKE_BINARY_DIR} -DKILN_TARGET=kiln_compile_fail_aot_launch_wrong_type
                 -DKILN_SOURCE=${CMAKE_CURRENT_LIST_DIR}/launch_wrong_type.cpp -DKILN_CONFIG=$<CONFIG>
                 -P ${CMAKE_CURRENT_LIST_DIR}/../compile_fail/compile_fail.cmake)
set_tests_properties(compile_fail.aot_launch_wrong_type PROPERTIES LABELS compile-fail RESOURCE_LOCK kiln_build_tree
                     TIMEOUT 600)

# The same kernels traced and JIT-compiled at run time give the same bits.
add_executable(kiln_aot_matches_jit_tests ${CMAKE_CURRENT_LIST_DIR}/aot_matches_jit_test.cpp)
target_compile_options(kiln_aot_matches_jit_tests PRIVATE ${KILN_TEST_COMPILE_OPTIONS})
target_link_libraries(kiln_aot_matches_jit_tests PRIVATE aot_app_kernels kiln GTest::gtest_main)
gtest_discover_tests(kiln_aot_matches_jit_tests PROPERTIES LABELS aot DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60)
