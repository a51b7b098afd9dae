# kiln_add_kernels(TARGET app KERNELS my_kernels.cpp [ARCHS sm_80 sm_90a ...]
#                  [LIBRARIES kiln::kernels ...] [NAME base] [NAMESPACE ns] [PTXAS path|none])
#
# Compiles the kernel specialisations my_kernels.cpp names (its
# kiln_aot_kernels function, kiln/aot/kernel_list.hpp) ahead of time and adds
# them to `app`: a generator built from the kernels file runs at build time
# and writes, into ${CMAKE_CURRENT_BINARY_DIR}/<base>/, the header <base>.hpp
# (a struct per kernel in namespace `ns`, default kiln_kernels, with typed
# launch(grid, args...)), the source <base>.cpp embedding each kernel's tile
# IR (cpu device), PTX for each ARCH plus a cubin when ptxas is found (cuda
# device), and <base>_emu.o, the emu device's host code; they form the
# static library target <base>, which `app` links, and with it
# kiln::runtime_core only: no LLVM, no tracing at run time. <base> defaults
# to <app>_kernels; PTXAS defaults to what kiln finds (KILN_PTXAS,
# /usr/local/cuda/bin/ptxas); `none` embeds PTX only. LIBRARIES are what the
# kernels file needs besides kiln (kiln::kernels to compile a library kernel).
function(kiln_add_kernels)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;NAME;NAMESPACE;PTXAS" "KERNELS;ARCHS;LIBRARIES")
  if(NOT arg_TARGET OR NOT arg_KERNELS)
    message(FATAL_ERROR "kiln_add_kernels: TARGET and KERNELS are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_kernels: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${arg_TARGET})
    message(FATAL_ERROR "kiln_add_kernels: ${arg_TARGET} is not a target")
  endif()
  set(name ${arg_TARGET}_kernels)
  if(arg_NAME)
    set(name ${arg_NAME})
  endif()
  set(options --output-dir ${CMAKE_CURRENT_BINARY_DIR}/${name} --name ${name})
  if(arg_NAMESPACE)
    list(APPEND options --namespace ${arg_NAMESPACE})
  endif()
  foreach(arch IN LISTS arg_ARCHS)
    list(APPEND options --arch ${arch})
  endforeach()
  if(arg_PTXAS)
    list(APPEND options --ptxas ${arg_PTXAS})
  endif()

  set(generator ${name}_generator)
  add_executable(${generator} ${arg_KERNELS})
  target_link_libraries(${generator} PRIVATE kiln::aot_generator ${arg_LIBRARIES})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name})
  add_custom_command(OUTPUT ${out}/${name}.hpp ${out}/${name}.cpp ${out}/${name}_emu.o
                     COMMAND ${generator} ${options}
                     DEPENDS ${generator}
                     COMMENT "kiln: compiling the kernels of ${arg_KERNELS} ahead of time"
                     VERBATIM)
  set_source_files_properties(${out}/${name}_emu.o PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  # The generated code is a library of its own, `<base>`, which other targets
  # may link too.
  add_library(${name} STATIC ${out}/${name}.hpp ${out}/${name}.cpp ${out}/${name}_emu.o)
  target_include_directories(${name} PUBLIC ${out})
  target_link_libraries(${name} PUBLIC kiln::runtime_core)
  target_compile_features(${name} PUBLIC cxx_std_20)
  target_link_libraries(${arg_TARGET} PRIVATE ${name})
endfunction()
