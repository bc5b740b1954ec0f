# Runs one exported model through `switchyard run` and compares its outputs with PyTorch's.
# Invoked by CTest as: cmake -DSWITCHYARD=... -DPYTHON=... -DCOMPARE=... -DMODEL_DIR=...
#                            -DOUT_DIR=... -DTHREADS=... [-DTOLERANCE=...] [-DRUN_ARGS=a;b] -P run_model_test.cmake
# One test (rather than two chained ones) so a stale output dir can never be compared.
foreach(var SWITCHYARD PYTHON COMPARE MODEL_DIR OUT_DIR THREADS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_model_test.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED TOLERANCE)
  set(TOLERANCE 1e-4)
endif()

file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")

set(run_cmd "${SWITCHYARD}" run "${MODEL_DIR}/model.onnx" --input "input=${MODEL_DIR}/input.npy"
    --output-dir "${OUT_DIR}" --threads "${THREADS}" ${RUN_ARGS})
list(JOIN run_cmd " " run_text)
message("+ ${run_text}")
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${run_cmd} RESULT_VARIABLE run_rc)
string(TIMESTAMP t1 "%s")
math(EXPR seconds "${t1} - ${t0}")
message("switchyard run finished after ~${seconds} s")
if(NOT run_rc EQUAL 0)
  # run_rc is the exit code, or a reason when the program could not be started.
  message(FATAL_ERROR "switchyard run failed: ${run_rc}")
endif()

execute_process(COMMAND "${PYTHON}" "${COMPARE}" "${MODEL_DIR}" "${OUT_DIR}" --tolerance "${TOLERANCE}"
                RESULT_VARIABLE cmp_rc)
if(NOT cmp_rc EQUAL 0)
  message(FATAL_ERROR "outputs differ from PyTorch's (compare_outputs.py exit ${cmp_rc})")
endif()
