# sy_backend_model_test(BACKENDS MODEL LABEL TIMEOUT [ISA VALUE] [ARGS...]): a backend folder's
# end-to-end check of an exported PyTorch model (tests/models/check_backend_model.py): FLOP share
# offloaded, outputs vs PyTorch, artifact reproducing the in-process outputs bit for bit. With
# ISA, the test (named ....VALUE) runs with ONEDNN_MAX_CPU_ISA=VALUE and the native kernels for the
# same level (SWITCHYARD_HOST_TARGET): an AVX2 machine's choices on an AVX-512 one. The model's
# export fixture (sy_model_<MODEL>) comes from tests/models.
set(SY_MODEL_DIR ${CMAKE_BINARY_DIR}/tests/models)
set(SY_BACKEND_MODEL_CHECK ${CMAKE_SOURCE_DIR}/tests/models/check_backend_model.py)

function(sy_backend_model_test backends model label timeout)
  if(NOT SY_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 4 opt "" "ISA" "")
  string(REPLACE "," "_" tag "${backends}")
  set(env "")
  if(opt_ISA)
    string(TOLOWER "${opt_ISA}" isa)
    set(tag "${tag}.${isa}")
    set(env "ONEDNN_MAX_CPU_ISA=${opt_ISA};SWITCHYARD_HOST_TARGET=cpu -isa=${isa}")
  endif()
  add_test(NAME model.${model}.${tag}
           COMMAND /usr/bin/python3 ${SY_BACKEND_MODEL_CHECK} $<TARGET_FILE:switchyard> ${SY_MODEL_DIR}/${model}
                   ${SY_MODEL_DIR}/${model}/${tag}_check ${backends} ${opt_UNPARSED_ARGUMENTS})
  set_tests_properties(model.${model}.${tag} PROPERTIES
    FIXTURES_REQUIRED sy_model_${model} LABELS "${label}" TIMEOUT ${timeout} PROCESSORS 2 ENVIRONMENT "${env}")
endfunction()
