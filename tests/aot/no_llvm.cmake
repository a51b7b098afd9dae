# Fails when the ahead-of-time application KILN_BINARY links LLVM: no
# libLLVM among its shared libraries (ldd) and no llvm:: symbol in it (nm -C).
# KILN_LAUNCHER names one of its generated launchers (kiln_kernels::scale_bias),
# which nm must list. Run with cmake -P (tests/aot/aot.cmake, tests/package).
execute_process(COMMAND ldd ${KILN_BINARY} RESULT_VARIABLE result OUTPUT_VARIABLE libraries ERROR_VARIABLE libraries)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "no_llvm: ldd ${KILN_BINARY} failed (${result}): ${libraries}")
endif()
if(libraries MATCHES "[Ll][Ll][Vv][Mm]")
  message(FATAL_ERROR "no_llvm: ${KILN_BINARY} loads LLVM:\n${libraries}")
endif()
execute_process(COMMAND nm -C ${KILN_BINARY} RESULT_VARIABLE result OUTPUT_VARIABLE symbols ERROR_VARIABLE error)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "no_llvm: nm -C ${KILN_BINARY} failed (${result}): ${error}")
endif()
# The positive control: the binary's own launcher must be there, so that an
# empty or stripped listing cannot pass.
if(NOT symbols MATCHES "${KILN_LAUNCHER}::kernel\\(\\)")
  message(FATAL_ERROR "no_llvm: nm -C ${KILN_BINARY} lists no ${KILN_LAUNCHER}::kernel()")
endif()
string(REGEX MATCHALL "[^\n]*llvm::[^\n]*" llvm_symbols "${symbols}")
list(LENGTH llvm_symbols count)
if(count GREATER 0)
  list(SUBLIST llvm_symbols 0 5 first)
  list(JOIN first "\n" first)
  message(FATAL_ERROR "no_llvm: ${KILN_BINARY} holds ${count} llvm:: symbols, the first:\n${first}")
endif()
string(LENGTH "${symbols}" size)
message(STATUS "no_llvm: ${KILN_BINARY}: no libLLVM, no llvm:: symbol (${size} bytes of nm output checked)")
