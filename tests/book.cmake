# The book (label `book`): every example of examples/book runs on the cpu
# device and prints exactly the output block its chapter shows
# (book.<name>), and runs again on emu, checking its own result
# (book.emu.<name>); book.snippets checks that every code block of the book
# equals the source region it names (scripts/book_snippets.py).
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
add_test(NAME book.snippets COMMAND Python3::Interpreter ${KILN_BOOK_SCRIPT} check)
set_tests_properties(book.snippets PROPERTIES LABELS book)
