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
kiln_cli_test(matmul_on_emu_sm_90a 0 "on emu-sm_90a\n  plan: tiles 128x128x64, GROUP_M 8, 8 warps, 3 stages\n.*check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok"
  run matmul --dtype bf16 --device emu-sm_90a --check)
kiln_cli_test(softmax_f16_check 0 "check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok" run softmax --rows 33 --cols 2049 --dtype f16 --check)
kiln_cli_test(softmax_bf16_narrow_check 0 "check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok" run softmax --rows 7 --cols 5 --dtype bf16 --check)
kiln_cli_test(json 0 "^\\{.*\"check_error\":[0-9.e-]+.*\"device\":\"cpu\".*\"dtype\":\"f32\".*\"kernel\":\"vector_add\".*\"shape\":\\{\"n\":1000\\}.*\"throughput_gb_s\":[0-9.e+-]+.*\\}\n$"
  run vector_add --n 1000 --check --bench --json)
kiln_cli_test(list 0 "vector_add .*params: --n [0-9]+.*softmax .*params: --rows [0-9]+ --cols [0-9]+" list)
kiln_cli_test(info 0 "kiln [0-9.]+\nLLVM 19[.0-9]+.*devices: cpu" info)
# The emu's fixed JIT target and floating-point mode, never the host's own CPU.
kiln_cli_test(info_emu_machine 0 "\nemu: compiles for x86-64 \\(-f16c,-fma,[^\n]*-avx512bf16[^\n]*\\), floating point: round to nearest even, subnormals kept \\(MXCSR 0x1f80: no FTZ, no DAZ; x87 control word 0x037f\\), no FMA contraction\n" info)
kiln_cli_test(version 0 "kiln [0-9]+\\.[0-9]+\\.[0-9]+" --version)
# dump shows what the run launches: the variant specialised for its arguments
# (buffers 16-byte aligned, sizes divisible by 16 or not), with its own warps.
kiln_cli_test(dump_opt 0 "kernel @softmax\\(%0: ptr<f32> \\{divisibility = 16\\}, %1: ptr<f32> \\{divisibility = 16\\}, %2: i32, %3: i32, %4: i32\\) \\{.*reduce.*for" dump softmax --stage opt)
kiln_cli_test(dump_specialized 0 "kernel @softmax\\([^)]*%2: i32 \\{divisibility = 16\\}" dump softmax --stage opt --cols 4096)
kiln_cli_test(dump_num_warps 0 "\n// attention: 8 warps, grid \\(4, 8, 1\\)\n" dump attention --stage ptx)
kiln_cli_test(dump_sms 0 "\n// layer_norm_backward_rows: 4 warps, grid \\(8, 1, 1\\)\n" dump layer_norm_backward --stage ptx --sms 4)
kiln_cli_test(dump_json 0 "^\\{.*\"launches\":\\[\\{.*\"lower_to_ptx_ms\":[0-9.e+-]+.*\"num_warps\":4,.*\"ptx\":\"[^\"]*\\.entry vector_add.*\"traced\":\\[\\{\"name\":\"kiln::kernels::vector_add<[^\n]*\\}\n$" dump vector_add --stage ptx --json)
kiln_cli_test(dump_json_stage 2 "^kiln: --json reports the ptx stage; got --stage opt\n$" dump softmax --json)
kiln_cli_test(dump_locations 0 "loc\\(\"[^\"]*softmax.hpp\":[0-9]+\\)" dump softmax --stage ir --locations)
kiln_cli_test(unknown_kernel 2 "^kiln: unknown kernel 'nope' \\(known: vector_add, softmax, [a-z0-9_, ]+\\)\n$" run nope)
kiln_cli_test(unknown_dim 2 "^kiln: softmax has no parameter --rowz \\(its parameters: --rows, --cols\\)\n$" run softmax --rowz 3)
set(vector_add_footprints "  distinct bytes of each buffer, launch by launch:\n    vector_add  'x'          4.0 kB read\n    vector_add  'y'          4.0 kB read\n    vector_add  'out'        4.0 kB written\n  compulsory: 0.008 MB read, 0.004 MB written, 0.012 MB in all; the launches moved 1.00x that\n$")
kiln_cli_test(stats 0 "vector_add n=1000 f32 on cpu\n  stats: 0.008 MB read, 0.004 MB written, 0.012 MB in all\n${vector_add_footprints}"
  run vector_add --n 1000 --stats)
kiln_cli_test(stats_emu 0 "vector_add n=1000 f32 on emu\n  stats: 0.008 MB read, 0.004 MB written, 0.012 MB in all\n${vector_add_footprints}"
  run vector_add --n 1000 --stats --device emu)
# The unfused sequence's footprints: three launches, the output's trips through memory, each counted once.
kiln_cli_test(stats_unfused_footprints 0 "\n    conv2d_bn_silu_gemm +'y' +301.1 kB written\n    conv2d_batchnorm +'in' +301.1 kB read\n.*\n    silu_elementwise +'out' +301.1 kB written\n  compulsory: 0.858 MB read, 0.903 MB written, 1.762 MB in all; the launches moved 3.59x that\n$"
  run conv2d_bn_silu_unfused --device cpu:4 --stats)
kiln_cli_test(bad_size 2 "^kiln: softmax: --rows must be between 1 and 2\\^31-1, got 0\n$" run softmax --rows 0)
kiln_cli_test(bad_number 2 "^kiln: --cols needs an integer, got '12x'\n$" run softmax --cols 12x)
kiln_cli_test(bad_dtype 2 "^kiln: vector_add does not support dtype 'i8' \\(supported: f32, f16, bf16, f64\\)\n$" run vector_add --dtype i8)
kiln_cli_test(bad_device 2 "^kiln: unknown device 'tpu' \\(available here: cpu, emu[^\n]*; cpu:N and emu:N use N host threads\\)\n$"
  run vector_add --device tpu)
kiln_cli_test(bad_stage 2 "^kiln: unknown stage 'sass' \\(stages: ir, opt, layout, llvm, ptx\\)\n$" dump softmax --stage sass)
kiln_cli_test(bad_arch 2 "^kiln: unknown arch 'sm_75' \\(archs: sm_80, sm_90a\\)\n$" dump vector_add --stage ptx --arch sm_75)
kiln_cli_test(run_bad_arch 2 "^kiln: unknown arch 'sm_86' \\(archs: sm_80, sm_90a\\)\n$" run matmul --arch sm_86)
# run --arch launches another architecture's configuration on the device.
kiln_cli_test(matmul_in_sm_90a_configuration_on_cpu 0 "f32 on cpu\n  plan: tiles 128x128x64, GROUP_M 8, 8 warps, 3 stages\n  check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok"
  run matmul --m 150 --n 140 --k 70 --arch sm_90a --check)
# The GPU code generator's stages from the tool.
kiln_cli_test(dump_ptx 0 "\\.version 8\\.5\n\\.target sm_80.*\\.entry vector_add[^\n]*\\(.*st\\.global" dump vector_add --stage ptx --arch sm_80)
kiln_cli_test(dump_llvm 0 "target triple = \"nvptx64-nvidia-cuda\".*define ptx_kernel void @vector_add" dump vector_add --stage llvm)
kiln_cli_test(dump_layout 0 "register" dump vector_add --stage layout)
# The shared rings of the pipelined K loop: stages, slot bytes and offsets.
set(matmul_ring "ring %[0-9]+ : shared<3x(64x32|32x64)xf16>: 3 stages of 4096 bytes at offset")
kiln_cli_test(dump_layout_rings 0 "\n${matmul_ring} 0, layout chosen for its copies and dot fragments\n.*\n${matmul_ring} 12288, layout chosen for its copies and dot fragments\n.*\nshared rings: 2, 24576 bytes\n"
  dump matmul --dtype f16 --stage layout --arch sm_80)
# On sm_90a the matmul runs in its sm_90a configuration: three 16 KiB
# stages per operand in wgmma's swizzled layout, 8 warps.
set(matmul_ring_sm90a "ring %[0-9]+ : shared<3x(128x64|64x128)xf16>: 3 stages of 16384 bytes at offset")
kiln_cli_test(dump_layout_rings_sm_90a 0 "\n${matmul_ring_sm90a} 0, wgmma's swizzled layout\n.*\n${matmul_ring_sm90a} 49152, wgmma's swizzled layout\n.*\nshared rings: 2, 98304 bytes\n"
  dump matmul --dtype f16 --stage layout --arch sm_90a)
kiln_cli_test(dump_matmul_ptx_sm_90a 0 "\\.maxntid 256, 1, 1.*wgmma\\.mma_async\\.sync\\.aligned\\.m64n128k16\\.f32\\.f16\\.f16"
  dump matmul --dtype f16 --stage ptx --arch sm_90a)
kiln_cli_test(dump_attention_ptx 0 "\\.entry attention.*wgmma\\.mma_async\\.sync\\.aligned\\.m64n" dump attention --stage ptx)
kiln_cli_test(dump_attention_ptx_sm_80 0 "\\.entry attention.*mma\\.sync\\.aligned\\.m16n8k16" dump attention --stage ptx --arch sm_80)
kiln_cli_test(dump_softmax_ptx 0 "\\.entry softmax.*shfl\\.sync\\.bfly" dump softmax --stage ptx)
kiln_cli_test(dump_shared_memory 0 "\\.extern \\.shared \\.align 16 \\.b8 kiln_shared\\[\\];.*\n// softmax[^\n]*: 16 bytes of dynamic shared memory per program\n$" dump softmax --stage ptx)
kiln_cli_test(unknown_flag 2 "^kiln: The following argument was not expected: --frobnicate \\(see kiln --help\\)\n$" info --frobnicate)
kiln_cli_test(no_subcommand 2 "^kiln: A subcommand is required \\(see kiln --help\\)\n$")
kiln_cli_test(help 0 "Subcommands:.*run.*dump" --help)
set(attention_ok "plan: [^\n]*\n  check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok")
# On emu-sm_90a an f16 attention runs in sm_90a's configuration, on wgmma.
kiln_cli_test(attention_on_emu_sm_90a 0 "head_dim=128 key_lengths=none f16 on emu-sm_90a\n  plan: 128 query rows x 64 keys per block, 8 warps, 3 stages\n  check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok"
  run attention --seq 70 --head_dim 128 --device emu-sm_90a --check)
kiln_cli_test(attention_check 0 "attention batch=2 heads=4 seq=33 causal=on head_dim=64 key_lengths=none f16 on cpu\n  ${attention_ok}"
  run attention --seq 33 --check)
kiln_cli_test(attention_full_check 0 "causal=off head_dim=64 key_lengths=none f16 on cpu\n  ${attention_ok}" run attention --seq 33 --causal off --check)
kiln_cli_test(attention_d128_check 0 "causal=on head_dim=128 key_lengths=none f16 on cpu\n  ${attention_ok}" run attention --seq 33 --head_dim 128 --check)
kiln_cli_test(attention_bf16_check 0 "causal=on head_dim=64 key_lengths=none bf16 on cpu\n  ${attention_ok}" run attention --seq 33 --dtype bf16 --check)
kiln_cli_test(attention_f32_check 0 "causal=off head_dim=128 key_lengths=none f32 on cpu\n  ${attention_ok}"
  run attention --batch 3 --heads 1 --seq 70 --head_dim 128 --causal off --dtype f32 --check)
# Key padding: 24 batches' key lengths drawn from [0, 33] (seed 0 draws one of 0 keys and one of all 33, with
# libstdc++'s uniform_int_distribution), causal and not.
kiln_cli_test(attention_key_lengths_check 0 "causal=on head_dim=64 key_lengths=random f16 on cpu\n  ${attention_ok}"
  run attention --batch 24 --heads 1 --seq 33 --key_lengths random --check)
kiln_cli_test(attention_key_lengths_full_check 0 "causal=off head_dim=64 key_lengths=random f16 on cpu\n  ${attention_ok}"
  run attention --batch 24 --heads 1 --seq 33 --key_lengths random --causal off --check)
# conv2d_bn_silu: each variant, the automatic choice, the unfused sequence and a variant that cannot run a shape.
set(conv2d_ok "check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok")
kiln_cli_test(conv2d_auto_check 0 "conv2d_bn_silu n=2 c=3 h=9 w=7 k=20 r=3 s=3 stride=1 pad=1 dilation=1 groups=1 variant=auto f32 on cpu\n  plan: gemm, [0-9]+ positions x 16 channels x 32 terms, 4 warps \\(k=20 >= 16 and c\\*r\\*s=27 >= 16[^\n]*\\)\n  ${conv2d_ok}"
  run conv2d_bn_silu --c 3 --h 9 --w 7 --k 20 --check)
kiln_cli_test(conv2d_scalar_depthwise_f16_check 0 "groups=6 variant=scalar f16 on cpu\n  plan: scalar, [0-9]+ positions x 1 channel, 4 warps \\(scalar as requested\\)\n  ${conv2d_ok}"
  run conv2d_bn_silu --c 6 --k 12 --h 11 --w 10 --stride 2 --groups 6 --variant scalar --dtype f16 --check)
kiln_cli_test(conv2d_tiled_bf16_check 0 "dilation=2 groups=1 variant=tiled bf16 on cpu\n  plan: tiled, [0-9]+ positions x 4 channels, 4 warps \\(tiled as requested\\)\n  ${conv2d_ok}"
  run conv2d_bn_silu --c 5 --k 5 --h 7 --w 9 --pad 2 --dilation 2 --variant tiled --dtype bf16 --check)
kiln_cli_test(conv2d_gemm_check 0 "k=33 r=1 s=1 stride=1 pad=0 dilation=1 groups=1 variant=gemm f32 on cpu\n  plan: gemm, [0-9]+ positions x 32 channels x 32 terms, 4 warps \\(gemm as requested; terms in order \\(c=6 < 32\\): one tap's channels would mostly pad a step\\)\n  ${conv2d_ok}"
  run conv2d_bn_silu --n 3 --c 6 --h 5 --w 7 --k 33 --r 1 --s 1 --pad 0 --variant gemm --check)
kiln_cli_test(conv2d_gemm_taps_outer_f16_check 0 "c=40 [^\n]* variant=auto f16 on cpu\n  plan: gemm, [0-9]+ positions x 16 channels x 32 terms, 4 warps \\([^\n]*; taps outer \\(c=40 >= 32\\): each tap's window offsets computed once\\)\n  ${conv2d_ok}"
  run conv2d_bn_silu --n 2 --c 40 --h 6 --w 5 --k 20 --dtype f16 --check)
kiln_cli_test(conv2d_unfused_check 0 "conv2d_bn_silu_unfused n=2 c=4 h=8 w=8 k=17 [^\n]* f32 on cpu\n  plan: [^\n]*\n  ${conv2d_ok}\n  stats: [0-9.]+ MB read, [0-9.]+ MB written"
  run conv2d_bn_silu_unfused --c 4 --h 8 --w 8 --k 17 --stride 2 --check --stats)
kiln_cli_test(conv2d_gemm_groups_error 2 "^kiln: conv2d_bn_silu --variant gemm: the gemm variant needs groups=1, got groups=2 \\(use --variant scalar or auto\\)\n$"
  run conv2d_bn_silu --c 4 --k 4 --h 5 --w 5 --groups 2 --variant gemm)
set(matmul_ok "check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok")
kiln_cli_test(matmul_check 0 "matmul m=70 n=45 k=33 bias=on dropout=0.1 gelu=erf out=same f32 on cpu\n  plan: [^\n]*\n  ${matmul_ok}"
  run matmul --m 70 --n 45 --k 33 --check)
kiln_cli_test(matmul_tanh_f16_into_f32_check 0 "bias=on dropout=0.3 gelu=tanh out=f32 f16 on cpu\n  plan: [^\n]*\n  ${matmul_ok}"
  run matmul --m 33 --n 65 --k 17 --gelu tanh --dropout 0.3 --dtype f16 --out f32 --check)
kiln_cli_test(matmul_plain_bf16_check 0 "bias=off dropout=0 gelu=none out=same bf16 on cpu\n  plan: [^\n]*\n  ${matmul_ok}"
  run matmul --m 9 --n 130 --k 70 --bias off --gelu none --dropout 0 --dtype bf16 --check)
kiln_cli_test(matmul_unfused_check 0 "matmul_unfused m=70 n=45 k=33 bias=on dropout=0.1 gelu=erf out=f16 f32 on cpu\n  plan: [^\n]*\n  ${matmul_ok}\n  stats: [0-9.]+ MB read"
  run matmul_unfused --m 70 --n 45 --k 33 --out f16 --check --stats)
kiln_cli_test(dropout_check 0 "dropout n=10007 p=0.3 bf16 on cpu\n  ${matmul_ok}" run dropout --n 10007 --p 0.3 --dtype bf16 --check)
kiln_cli_test(matmul_bad_gelu 2 "^kiln: matmul: --gelu does not accept 'foo' \\(accepted: none, erf, tanh\\)\n$" run matmul --gelu foo)
kiln_cli_test(matmul_bad_dropout 2 "^kiln: --dropout needs a number in \\[0, 1\\), got '1.5'\n$" run matmul --dropout 1.5)
# Row normalisation: layer norm forward and backward, RMS norm (one tile, several tiles, f16/bf16).
set(norm_ok "check: relative error [0-9.e-]+ \\(tolerance [0-9.e-]+\\) ok")
kiln_cli_test(layer_norm_check 0 "layer_norm m=7 n=1000 f32 on cpu\n  ${norm_ok}" run layer_norm --m 7 --n 1000 --check)
kiln_cli_test(layer_norm_f16_tiles_check 0 "layer_norm m=33 n=5000 f16 on cpu\n  ${norm_ok}" run layer_norm --m 33 --n 5000 --dtype f16 --check)
kiln_cli_test(layer_norm_backward_check 0 "layer_norm_backward m=7 n=1000 f32 on cpu\n  plan: [^\n]*\n  ${norm_ok}" run layer_norm_backward --m 7 --n 1000 --check)
kiln_cli_test(layer_norm_backward_bf16_tiles_check 0 "layer_norm_backward m=45 n=5000 bf16 on cpu\n  plan: [^\n]*\n  ${norm_ok}"
  run layer_norm_backward --m 45 --n 5000 --dtype bf16 --check)
kiln_cli_test(rms_norm_check 0 "rms_norm m=7 n=1000 f32 on cpu\n  ${norm_ok}" run rms_norm --m 7 --n 1000 --check)
kiln_cli_test(rms_norm_bf16_check 0 "rms_norm m=5 n=3 bf16 on cpu\n  ${norm_ok}" run rms_norm --m 5 --n 3 --dtype bf16 --check)
kiln_cli_test(dump_layer_norm_backward 0 "kernel @layer_norm_backward_rows\\(.*kernel @layer_norm_backward_reduce\\(" dump layer_norm_backward --stage opt)
# kiln bench: each fused kernel against its unfused sequence, in one run.
kiln_cli_test(bench_fusion 0 "matmul +f32 .* speed-up [0-9.]+x, [0-9.]+x less traffic than matmul_unfused \\(.*conv2d_bn_silu +f32 .* speed-up [0-9.]+x, [0-9.]+x less traffic than conv2d_bn_silu_unfused \\("
  bench --suite fusion)
kiln_cli_test(bench_no_kernel 2 "^kiln: suite 'fusion' has no kernel for dtype 'f64'\n$" bench --suite fusion --dtype f64)
# kiln info names what the CUDA driver probe found, in one line, and goes on.
kiln_cli_test(info_without_driver 0 "\ncuda: unavailable, /nonexistent/libcuda.so.1 not found [^\n]*\nkernels: [0-9]+\n$" info)
set_tests_properties(cli.info_without_driver PROPERTIES ENVIRONMENT KILN_LIBCUDA=/nonexistent/libcuda.so.1)
# The cuda device where there is no driver (KILN_LIBCUDA names a missing one) or only the toolkit's stub:
# one line saying why, exit 2; `kiln info` lists the devices and the default choice.
set(kiln_no_driver "cuda: /nonexistent/libcuda.so.1 not found \\(named by KILN_LIBCUDA\\): [^\n]*")
kiln_cli_test(run_cuda_without_driver 2 "^kiln: device 'cuda' is unavailable: ${kiln_no_driver} \\(available here: cpu, emu\\)\n$"
  run vector_add --device cuda --check)
kiln_cli_test(bench_cuda_without_driver 2 "^kiln: device 'cuda:1' is unavailable: ${kiln_no_driver} \\(available here: cpu, emu\\)\n$"
  bench --suite fusion --device cuda:1)
kiln_cli_test(kiln_device_cuda_without_driver 2
  "^kiln: KILN_DEVICE=cuda: device 'cuda' is unavailable: ${kiln_no_driver} \\(available here: cpu, emu\\)\n$" run softmax)
kiln_cli_test(info_default_without_driver 0 "\ndevices: cpu, emu \\(default: cpu\\)\n" info)
set_tests_properties(cli.run_cuda_without_driver cli.bench_cuda_without_driver cli.info_default_without_driver
  PROPERTIES ENVIRONMENT KILN_LIBCUDA=/nonexistent/libcuda.so.1)
set_tests_properties(cli.kiln_device_cuda_without_driver PROPERTIES ENVIRONMENT "KILN_LIBCUDA=/nonexistent/libcuda.so.1;KILN_DEVICE=cuda")
if(EXISTS /usr/local/cuda/lib64/stubs/libcuda.so)
  kiln_cli_test(run_cuda_stub_driver 2
    "^kiln: device 'cuda' is unavailable: cuInit failed: CUDA_ERROR_STUB_LIBRARY \\(34\\) \\(available here: cpu, emu\\)\n$"
    run vector_add --device cuda)
  set_tests_properties(cli.run_cuda_stub_driver PROPERTIES ENVIRONMENT KILN_LIBCUDA=/usr/local/cuda/lib64/stubs/libcuda.so)
endif()
# The cuda device against the fake driver of tests/gpu/fake_libcuda.cpp: listed and chosen by default,
# launches timed with its events (a quarter millisecond apart), traffic not counted.
kiln_cli_test(info_fake_gpu 0 "\ndevices: cpu, emu, cuda \\(default: cuda\\)\n.*\ncuda: 1 GPU: Fake GPU \\(sm_90, 132 SMs\\)\n" info)
kiln_cli_test(run_fake_gpu 0 "^vector_add n=1000 f32 on cuda\n  bench: 250\\.0 us per launch, [^\n]*\n  stats: not counted on cuda [^\n]*\n$"
  run vector_add --n 1000 --device cuda --bench --stats)
set_tests_properties(cli.info_fake_gpu cli.run_fake_gpu PROPERTIES ENVIRONMENT
  "KILN_LIBCUDA=$<TARGET_FILE:kiln_fake_libcuda>;KILN_PTXAS=none;KILN_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/fake-gpu-cache")
# Pictures and the progress line (tests/cli/pictures.py, progress.py): the SVG files and their PNG renderings
# land in build/tests/cli-pictures, to look at.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(picture bench layout)
  add_test(NAME cli.svg_${picture}
    COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/pictures.py ${picture} $<TARGET_FILE:kiln_tool>
            ${CMAKE_CURRENT_BINARY_DIR}/cli-pictures)
  set_tests_properties(cli.svg_${picture} PROPERTIES LABELS cli)
endforeach()
add_test(NAME cli.progress_line COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/progress.py $<TARGET_FILE:kiln_tool>)
set_tests_properties(cli.progress_line PROPERTIES LABELS cli)
kiln_cli_test(dump_svg_needs_layout 2 "^kiln: --svg draws a tile of the layout stage; got --stage opt\n$"
  dump softmax --stage opt --svg picture.svg)
kiln_cli_test(dump_value_needs_svg 2 "^kiln: --value chooses the tile --svg draws; add --svg FILE\n$"
  dump softmax --stage layout --value %4)
kiln_cli_test(dump_bad_value 2 "^kiln: --value needs a value of the IR such as %12, got 'x4'\n$"
  dump softmax --stage layout --value x4 --svg picture.svg)
kiln_cli_test(dump_unknown_value 2 "^kiln: --value %9999: kernel softmax has no tile %9999 \\(its first tile is %[0-9]+; see kiln dump softmax --stage layout\\)\n$"
  dump softmax --stage layout --value %9999 --svg picture.svg)
kiln_cli_test(dump_bad_launch 2 "^kiln: --launch 2: the run of layer_norm_backward makes 2 launches \\(0 to 1\\)\n$"
  dump layer_norm_backward --stage layout --launch 2 --svg picture.svg)
kiln_cli_test(bench_svg_unwritable 1 "^kernel .*\nkiln: cannot write the picture to /nonexistent/chart.svg: No such file or directory\n$"
  bench --suite fusion --svg /nonexistent/chart.svg)
kiln_cli_test(bench_compare_needs_svg 2 "^kiln: --compare adds a chart to the picture --svg draws; add --svg FILE\n$"
  bench --suite fusion --compare results.json)
kiln_cli_test(bench_compare_missing_file 1 "^kiln: --compare /nonexistent/results.json: cannot open the file\n$"
  bench --suite fusion --svg chart.svg --compare /nonexistent/results.json)
