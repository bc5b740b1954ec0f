# sy_add_oracle_tests(PREFIX SCRIPT MODULES CHOICES): one test PREFIX.PATH per execution path of a
# script that compares `switchyard run` with an oracle (tests/support/oracle_run.py): the reference
# executor, native (also for the AVX2 target and with CHOICES random implementation choices) and
# each BYOC backend. Registered only if /usr/bin/python3 can import MODULES ("onnx, numpy").
function(sy_add_oracle_tests prefix script modules choices)
  execute_process(COMMAND /usr/bin/python3 -c "import ${modules}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(WARNING "${prefix} tests not registered: /usr/bin/python3 cannot import ${modules}")
    return()
  endif()
  foreach(p IN ITEMS "reference|--target;reference" "native|--target;cpu" "native_avx2|--target;cpu -isa=avx2"
                     "onednn|--backends;onednn" "libxsmm|--backends;libxsmm" "onednn_hook|--backends;onednn_hook"
                     "native_random_choices|")
    string(FIND "${p}" "|" bar)
    string(SUBSTRING "${p}" 0 ${bar} name)
    math(EXPR from "${bar} + 1")
    string(SUBSTRING "${p}" ${from} -1 args)
    set(env SWITCHYARD_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache)
    if(name STREQUAL "native_random_choices")
      list(APPEND env SWITCHYARD_CHOICES=random:${choices})
    endif()
    add_test(NAME ${prefix}.${name}
      COMMAND ${CMAKE_COMMAND} -E env ${env}
              /usr/bin/python3 ${script} --binary $<TARGET_FILE:switchyard>
              --work ${CMAKE_CURRENT_BINARY_DIR}/${name} -- ${args})
    set_tests_properties(${prefix}.${name} PROPERTIES LABELS unit TIMEOUT 300)
  endforeach()
endfunction()
