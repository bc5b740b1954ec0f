# Programs the tests run. `sy_test_program(TARGET [UNDER_SANITIZERS])`:
# - compiles TARGET's own files at -O1 in a Release build: its time goes into the layers it links
#   (built at -O3), not into argument parsing, printing or gtest assertions, and -O1 cuts a third
#   of its compile time (cmd_run.cpp 12.5 -> 8.5 s, ir_text_test.cpp 13.5 -> 9.0 s);
# - with UNDER_SANITIZERS, makes it part of sy_sanitizer_test_programs, the one target the ASan
#   tree builds (scripts/dev asan): what its unit, CLI, bad-input and fuzz tests run, without the
#   benchmarks, the conformance runner, the Python module and the layer checks nobody runs there.
add_custom_target(sy_sanitizer_test_programs)
function(sy_test_program target)
  cmake_parse_arguments(arg "UNDER_SANITIZERS" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
  if(arg_UNDER_SANITIZERS)
    add_dependencies(sy_sanitizer_test_programs ${target})
  endif()
endfunction()
