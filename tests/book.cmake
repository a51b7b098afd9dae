# The book (label `book`): every example of examples/book runs on the cpu
# device and prints exactly the output block its chapter shows
# (book.<name>), and runs again on emu, checking its own result
# (book.emu.<name>); book.snippets checks that every code block of the book
# equals the source region it names (scripts/book_snippets.py), book.links
# that every link and anchor between its pages resolves (scripts/book_links.py),
# book.html that scripts/book.sh renders it with pandoc into build/book and
# that every link between the rendered pages resolves.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(KILN_BOOK_SCRIPT ${PROJECT_SOURCE_DIR}/scripts/book_snippets.py)
file(GLOB KILN_BOOK_EXAMPLES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/book/*.cpp)
foreach(source IN LISTS KILN_BOOK_EXAMPLES)
  get_filename_component(name ${source} NAME_WE)
  add_test(NAME book.${name} COMMAND Python3::Interpreter ${KILN_BOOK_SCRIPT} output ${name} $<TARGET_FILE:book_${name}>)
  set_tests_properties(book.${name} PROPERTIES LABELS book ENVIRONMENT KILN_DEVICE=cpu)
  add_test(NAME book.emu.${name} COMMAND book_${name})
  set_tests_properties(book.emu.${name} PROPERTIES LABELS book ENVIRONMENT KILN_DEVICE=emu)
endforeach()
# Chapter 22's C program (examples/book/c_api.c) likewise, and its Python
# program with the python package's interpreter (python/CMakeLists.txt).
add_test(NAME book.c_api COMMAND Python3::Interpreter ${KILN_BOOK_SCRIPT} output c_api $<TARGET_FILE:book_c_api>)
set_tests_properties(book.c_api PROPERTIES LABELS book ENVIRONMENT KILN_DEVICE=cpu)
add_test(NAME book.emu.c_api COMMAND book_c_api)
set_tests_properties(book.emu.c_api PROPERTIES LABELS book ENVIRONMENT KILN_DEVICE=emu)
add_test(NAME book.python_api COMMAND Python3::Interpreter ${KILN_BOOK_SCRIPT} output python_api ${KILN_PYTHON}
                                      ${PROJECT_SOURCE_DIR}/examples/book/python_api.py)
set_tests_properties(book.python_api PROPERTIES LABELS book ENVIRONMENT
                     "KILN_DEVICE=cpu;KILN_C_LIBRARY=$<TARGET_FILE:kiln_c>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python")
add_test(NAME book.snippets COMMAND Python3::Interpreter ${KILN_BOOK_SCRIPT} check)
set_tests_properties(book.snippets PROPERTIES LABELS book)
add_test(NAME book.links COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/scripts/book_links.py)
set_tests_properties(book.links PROPERTIES LABELS book)
add_test(NAME book.html
         COMMAND sh -c "bash '${PROJECT_SOURCE_DIR}/scripts/book.sh' '${CMAKE_BINARY_DIR}/book' && '${Python3_EXECUTABLE}' '${PROJECT_SOURCE_DIR}/scripts/book_links.py' --html '${CMAKE_BINARY_DIR}/book'")
set_tests_properties(book.html PROPERTIES LABELS book)
# book.table: every kiln cell of the translation tables (chapter 25) is code
# of the region of examples/book/triton_to_kiln.cpp its row names
# (scripts/book_table.py). book.compile_errors: chapter 26's block of
# compiler errors is what scripts/compile_errors.py prints from the builds of
# the compile-fail cases that their tests, run first, leave in this tree.
add_test(NAME book.table COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/scripts/book_table.py)
set_tests_properties(book.table PROPERTIES LABELS book)
add_test(NAME book.compile_errors COMMAND Python3::Interpreter ${KILN_BOOK_SCRIPT} output compile_errors
                                          ${PROJECT_SOURCE_DIR}/scripts/compile_errors.py)
set_tests_properties(book.compile_errors PROPERTIES LABELS book FIXTURES_REQUIRED kiln_compile_fail_logs
                     ENVIRONMENT "KILN_COMPILE_FAIL_LOGS=${CMAKE_BINARY_DIR}/compile_fail")
# book.tool.<name>: an output block of kiln tool commands (scripts/book_tool.py
# prints each command, then what the tool printed), run on the cpu device.
function(kiln_book_tool_output name)
  add_test(NAME book.tool.${name}
           COMMAND Python3::Interpreter ${KILN_BOOK_SCRIPT} output tool.${name}
                   ${PROJECT_SOURCE_DIR}/scripts/book_tool.py $<TARGET_FILE:kiln_tool> ${ARGN})
  set_tests_properties(book.tool.${name} PROPERTIES LABELS book ENVIRONMENT KILN_DEVICE=cpu)
endfunction()
kiln_book_tool_output(layout --head 12 dump vector_add --stage layout)
kiln_book_tool_output(stats run vector_add --n 1048576 --device cpu --stats
                      -- run softmax --rows 1000 --cols 1000 --device cpu --stats
                      -- run matmul --m 256 --n 256 --k 256 --device cpu --stats)
kiln_book_tool_output(emu --filter "^emu:" info)
kiln_book_tool_output(dot_conversions --filter "for .dot." dump matmul --dtype f16 --stage layout --arch sm_80)
kiln_book_tool_output(rings --filter "^ring |^shared rings" dump matmul --dtype f16 --stage layout --arch sm_80)
kiln_book_tool_output(pipeline --filter "local_alloc|async_|barrier|local_load|dot |= for |[)]:$|yield|^  }" dump matmul --dtype f16
                      --stage opt --arch sm_80)
kiln_book_tool_output(conv2d run conv2d_bn_silu --device cpu:4 --stats -- run conv2d_bn_silu_unfused --device cpu:4 --stats
                      -- run conv2d_bn_silu --k 3 --device cpu:4 --stats)
# book.library: chapter 22's library builds as a project of its own against
# an installed kiln (find_package), as well as inside this tree.
add_test(NAME book.library
         COMMAND ${PROJECT_SOURCE_DIR}/scripts/book_library.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_BINARY_DIR}/book-library ${CMAKE_COMMAND} ${CMAKE_CXX_COMPILER} "${CMAKE_CXX_COMPILER_LAUNCHER}")
set_tests_properties(book.library PROPERTIES LABELS book TIMEOUT 600)
# book.picture.layout: chapter 17's picture (book/images/layout-vector-add.svg) is what the tool draws now.
add_test(NAME book.picture.layout
         COMMAND sh -c "'$<TARGET_FILE:kiln_tool>' dump vector_add --stage layout --value %4 --svg '${CMAKE_CURRENT_BINARY_DIR}/layout-vector-add.svg' > /dev/null && cmp '${CMAKE_CURRENT_BINARY_DIR}/layout-vector-add.svg' '${PROJECT_SOURCE_DIR}/book/images/layout-vector-add.svg' || { echo 'book/images/layout-vector-add.svg is not what kiln dump vector_add --stage layout --value %4 --svg draws now: draw it again'; exit 1; }")
set_tests_properties(book.picture.layout PROPERTIES LABELS book)
