# Runs COMMAND (a ;-list), requires exit code EXIT_CODE and output (stdout and
# stderr together) matching the regex PATTERN.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT code EQUAL EXIT_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXIT_CODE}; output:\n${all}")
endif()
if(NOT all MATCHES "${PATTERN}")
  message(FATAL_ERROR "output does not match '${PATTERN}':\n${all}")
endif()
