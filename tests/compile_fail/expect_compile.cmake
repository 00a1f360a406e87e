# expect_compile.cmake — compiles one TU for one GPU target and checks the outcome (cmake -P).
#   -DCOMPILER=<clang++ / nvcc> -DSOURCE=<tu> -DINCLUDE=<include dir> -DOUT=<object path>
#   -DFLAGS=<target and output-kind flags (-c, --ptx), '|'-separated>  -DEXPECT=success | error
#   -DMESSAGE=<text the diagnostic must contain>  (EXPECT=error)
#   -DOUT_MATCHES=<regex> / -DOUT_NOT_MATCHES=<regex>  (EXPECT=success, optional): what the
#     output file (e.g. PTX) must and must not contain
# EXPECT=error passes only when the compile fails, its output contains MESSAGE, and every error
# line of the output is that one diagnostic: a compile that succeeds, or fails for any other
# reason (a missing header, a device library, a typo), fails the test.
# EXPECT=success passes only when the compile succeeds (the control for the same TU) and the
# output file matches OUT_MATCHES and not OUT_NOT_MATCHES where they are given.
foreach(var COMPILER SOURCE INCLUDE OUT FLAGS EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_compile.cmake: -D${var}= is required")
  endif()
endforeach()
file(REMOVE ${OUT})
string(REPLACE "|" ";" flags "${FLAGS}")
execute_process(
  COMMAND ${COMPILER} ${flags} -std=c++17 -O1 -I${INCLUDE} ${SOURCE} -o ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(log "${out}${err}")
string(REPLACE ";" "|" shown_flags "${FLAGS}")
set(what "${COMPILER} ${shown_flags} ${SOURCE}")
if(EXPECT STREQUAL "success")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "expected ${what} to compile; it failed (exit ${rc}):\n${log}")
  endif()
  if(DEFINED OUT_MATCHES OR DEFINED OUT_NOT_MATCHES)
    file(READ ${OUT} text)
    if(DEFINED OUT_MATCHES AND NOT text MATCHES "${OUT_MATCHES}")
      message(FATAL_ERROR "${what} compiled, but ${OUT} does not contain /${OUT_MATCHES}/")
    endif()
    if(DEFINED OUT_NOT_MATCHES AND text MATCHES "${OUT_NOT_MATCHES}")
      message(FATAL_ERROR "${what} compiled, but ${OUT} contains /${OUT_NOT_MATCHES}/ "
                          "(\"${CMAKE_MATCH_0}\")")
    endif()
  endif()
  message(STATUS "compiled as expected: ${what}")
elseif(EXPECT STREQUAL "error")
  if(NOT DEFINED MESSAGE)
    message(FATAL_ERROR "expect_compile.cmake: EXPECT=error needs -DMESSAGE=")
  endif()
  if(rc EQUAL 0)
    message(FATAL_ERROR "expected ${what} to fail with \"${MESSAGE}\"; it COMPILED:\n${log}")
  endif()
  string(FIND "${log}" "${MESSAGE}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected ${what} to fail with \"${MESSAGE}\"; it failed otherwise "
                        "(exit ${rc}):\n${log}")
  endif()
  # Every diagnostic line that says error must be the expected one.
  string(REPLACE "\n" ";" lines "${log}")
  foreach(line IN LISTS lines)
    if(line MATCHES "error" AND NOT line MATCHES "errors? generated" AND
       NOT line MATCHES "Error [0-9]+" )
      string(FIND "${line}" "${MESSAGE}" here)
      if(here EQUAL -1)
        message(FATAL_ERROR "expected ${what} to fail with \"${MESSAGE}\" only; another error:\n"
                            "${line}\n\nfull output:\n${log}")
      endif()
    endif()
  endforeach()
  message(STATUS "failed as expected (exit ${rc}): ${what}")
else()
  message(FATAL_ERROR "expect_compile.cmake: EXPECT must be success or error (got '${EXPECT}')")
endif()
