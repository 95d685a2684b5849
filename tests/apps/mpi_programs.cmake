# Three unmodified MPI programs (mpi/*.c) built three ways and compared:
#   mpiprog-<p>-ompi      mpicc-style build against Open MPI (the reference)
#   mpiprog-<p>-onmpi     msgcc (MPI on msg) with MSGCC_BACKEND=mpi: msg on Open MPI
#   mpiprog-<p>-msg       msgcc against libmsg, run by msgrun -r 3
set(MPIPROGS ring_tags master_worker reduction)
set(MSGCC ${BIN}/msgcc)
set(MPIPROG_N 5)

# msgcc links libmsg like any application compiler would, without the
# sanitizer runtime: in a sanitizer build these programs are not built.
if(MSG_SANITIZE)
  return()
endif()

foreach(p ${MPIPROGS})
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${p}.c)
  set(ref "")
  if(MPI_C_FOUND)
    add_executable(mpiprog-${p}-ompi ${src})
    target_link_libraries(mpiprog-${p}-ompi PRIVATE MPI::MPI_C)
    set(ref "${MPIEXEC_EXECUTABLE} ${MPIRUN_FLAGS} -np ${MPIPROG_N} ${BIN}/mpiprog-${p}-ompi")
    string(REPLACE ";" " " ref "${ref}")
    add_custom_command(OUTPUT ${BIN}/mpiprog-${p}-onmpi
      COMMAND ${CMAKE_COMMAND} -E env MSGCC_BACKEND=mpi ${MSGCC} -O2 -Wall -Wextra -Werror
              ${src} -o ${BIN}/mpiprog-${p}-onmpi
      DEPENDS ${src} ${CMAKE_SOURCE_DIR}/api/msg_mpi.h msg_on_mpi ${MSGCC}
      COMMENT "msgcc (backend mpi) ${p}")
    add_custom_target(mpiprog-${p}-onmpi ALL DEPENDS ${BIN}/mpiprog-${p}-onmpi)
    add_test(NAME apps-mpiprog-${p}-onmpi
      COMMAND ${APPTEST} --same --ref "${ref}"
              -- ${MPIEXEC_EXECUTABLE} ${MPIRUN_FLAGS} -np ${MPIPROG_N} ${BIN}/mpiprog-${p}-onmpi)
    set_tests_properties(apps-mpiprog-${p}-onmpi PROPERTIES LABELS apps TIMEOUT 90)
  endif()
  if(TARGET msg)
    add_custom_command(OUTPUT ${BIN}/mpiprog-${p}-msg
      COMMAND ${MSGCC} -O2 -Wall -Wextra -Werror ${src} -o ${BIN}/mpiprog-${p}-msg
      DEPENDS ${src} ${CMAKE_SOURCE_DIR}/api/msg_mpi.h msg ${MSGCC}
      COMMENT "msgcc ${p}")
    add_custom_target(mpiprog-${p}-msg ALL DEPENDS ${BIN}/mpiprog-${p}-msg)
    set(refargs "")
    if(ref)
      set(refargs --same --ref "${ref}")
    endif()
    add_test(NAME apps-mpiprog-${p}-msg-r3
      COMMAND ${APPTEST} ${refargs} -- ${MSGRUN} -n ${MPIPROG_N} -r 3 ${BIN}/mpiprog-${p}-msg)
    set_tests_properties(apps-mpiprog-${p}-msg-r3 PROPERTIES LABELS apps TIMEOUT 120)
  endif()
endforeach()

# Unsupported MPI calls are rejected at compile time, with a message.
add_test(NAME apps-msgcc-rejects-unsupported
  COMMAND sh -c "${MSGCC} -c ${CMAKE_CURRENT_SOURCE_DIR}/mpi_unsupported.c -o /dev/null 2>&1; test $? -ne 0 && echo compile-failed-as-required")
set_tests_properties(apps-msgcc-rejects-unsupported PROPERTIES LABELS apps TIMEOUT 60
  PASS_REGULAR_EXPRESSION "MPI_Comm_split is not supported by msg.*compile-failed-as-required")

# The header compiles as C++ (built, not run).
add_library(msg_mpi_cxx_check OBJECT ${CMAKE_CURRENT_SOURCE_DIR}/msg_mpi_cxx.cc)
target_include_directories(msg_mpi_cxx_check PRIVATE ${CMAKE_BINARY_DIR}/include/msgcc)
