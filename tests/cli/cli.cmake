# The kiln tool from the command line: checks, JSON output and one-line errors
# with a non-zero exit (label `cli`).
function(kiln_cli_test name exit_code pattern)
  add_test(NAME cli.${name}
    COMMAND ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:kiln_tool>;${ARGN}" -DEXIT_CODE=${exit_code}
            "-DPATTERN=${pattern}" -P ${CMAKE_CURRENT_LIST_DIR}/expect_output.cmake)
  set_tests_properties(cli.${name} PROPERTIES LABELS cli)
endfunction()

# A relative error below 1e-6: 0, or a number with an exponent of -7 or less.
set(below_1e6 "relative error (0|[0-9.]+e-(0[7-9]|[1-9][0-9]))")
kiln_cli_test(softmax_check 0 "softmax rows=1000 cols=1111 f32 on cpu\n  check: ${below_1e6} \\(tolerance [0-9.e-]+\\) ok"
  run softmax --rows 1000 --cols 1111 --check)
kiln_cli_test(vector_add_check 0 "vector_add n=10000001 f32 on cpu\n  check: ${below_1e6} .* ok"
  run vector_add --n 10000001 --check)
kiln_cli_test(softmax_f16_check 0 "check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok" run softmax --rows 33 --cols 2049 --dtype f16 --check)
kiln_cli_test(softmax_bf16_narrow_check 0 "check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok" run softmax --rows 7 --cols 5 --dtype bf16 --check)
kiln_cli_test(json 0 "^\\{.*\"check_error\":[0-9.e-]+.*\"device\":\"cpu\".*\"dtype\":\"f32\".*\"kernel\":\"vector_add\".*\"shape\":\\{\"n\":1000\\}.*\"throughput_gb_s\":[0-9.e+-]+.*\\}\n$"
  run vector_add --n 1000 --check --bench --json)
kiln_cli_test(list 0 "vector_add .*params: --n [0-9]+.*softmax .*params: --rows [0-9]+ --cols [0-9]+" list)
kiln_cli_test(info 0 "kiln [0-9.]+\nLLVM 19[.0-9]+.*devices: cpu" info)
kiln_cli_test(version 0 "kiln [0-9]+\\.[0-9]+\\.[0-9]+" --version)
kiln_cli_test(dump_opt 0 "kernel @softmax\\(%0: ptr<f32>, %1: ptr<f32>, %2: i32, %3: i32, %4: i32\\) \\{.*reduce.*for" dump softmax --stage opt)
kiln_cli_test(dump_locations 0 "loc\\(\"[^\"]*softmax.hpp\":[0-9]+\\)" dump softmax --stage ir --locations)
kiln_cli_test(unknown_kernel 2 "^kiln: unknown kernel 'nope' \\(known: vector_add, softmax\\)\n$" run nope)
kiln_cli_test(unknown_dim 2 "^kiln: softmax has no parameter --rowz \\(its parameters: --rows, --cols\\)\n$" run softmax --rowz 3)
kiln_cli_test(stats 0 "vector_add n=1000 f32 on cpu\n  stats: 0.008 MB read, 0.004 MB written, 0.012 MB in all\n$" run vector_add --n 1000 --stats)
kiln_cli_test(bad_size 2 "^kiln: softmax: --rows must be between 1 and 2\\^31-1, got 0\n$" run softmax --rows 0)
kiln_cli_test(bad_number 2 "^kiln: --cols needs an integer, got '12x'\n$" run softmax --cols 12x)
kiln_cli_test(bad_dtype 2 "^kiln: vector_add does not support dtype 'i8' \\(supported: f32, f16, bf16, f64\\)\n$" run vector_add --dtype i8)
kiln_cli_test(bad_device 2 "^kiln: unknown device 'tpu' \\(available here: cpu, or cpu:N for N threads\\)\n$" run vector_add --device tpu)
kiln_cli_test(bad_stage 2 "^kiln: unknown stage 'ptx' \\(stages: ir, opt\\)\n$" dump softmax --stage ptx)
kiln_cli_test(unknown_flag 2 "^kiln: The following argument was not expected: --frobnicate \\(see kiln --help\\)\n$" info --frobnicate)
kiln_cli_test(no_subcommand 2 "^kiln: A subcommand is required \\(see kiln --help\\)\n$")
kiln_cli_test(help 0 "Subcommands:.*run.*dump" --help)
