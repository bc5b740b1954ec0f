# sy_backend_model_test(BACKENDS MODEL LABEL TIMEOUT): a backend folder's end-to-end check of an
# exported PyTorch model (tests/models/check_backend_model.py): FLOP share offloaded, outputs vs
# PyTorch, artifact reproducing the in-process outputs bit for bit. The model's export fixture
# (sy_model_<MODEL>) comes from tests/models.
set(SY_MODEL_DIR ${CMAKE_BINARY_DIR}/tests/models)
set(SY_BACKEND_MODEL_CHECK ${CMAKE_SOURCE_DIR}/tests/models/check_backend_model.py)

function(sy_backend_model_test backends model label timeout)
  if(NOT SY_BUILD_TESTS)
    return()
  endif()
  string(REPLACE "," "_" tag "${backends}")
  add_test(NAME model.${model}.${tag}
           COMMAND /usr/bin/python3 ${SY_BACKEND_MODEL_CHECK} $<TARGET_FILE:switchyard> ${SY_MODEL_DIR}/${model}
                   ${SY_MODEL_DIR}/${model}/${tag}_check ${backends} ${ARGN})
  set_tests_properties(model.${model}.${tag} PROPERTIES
    FIXTURES_REQUIRED sy_model_${model} LABELS "${label}" TIMEOUT ${timeout} PROCESSORS 2)
endfunction()
