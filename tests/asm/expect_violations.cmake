# expect_violations.cmake — runs the assembly checker (cmake/resource_report.cmake with CHECK=ON)
# on one fixture and compares what it reports with what the fixture plants.
#
#   cmake -DFIXTURE=x.s -DCHECKER=<repo>/cmake/resource_report.cmake -DOUT=<dir> -P expect_violations.cmake
#
# The target is the fixture's own `.amdgcn_target`. A `; PLANTED <rule>...` comment says that the
# next line must be reported under each rule named. With such comments the checker must fail and
# report exactly those (line, rule) pairs, nothing else; without, it must pass. Either way it must
# have found one vaeconv kernel. (A ctest property cannot ask for both: PASS_REGULAR_EXPRESSION
# ignores the exit code, and WILL_FAIL would invert the regular expression's verdict too.)
cmake_minimum_required(VERSION 3.20)
get_filename_component(name "${FIXTURE}" NAME)
file(STRINGS "${FIXTURE}" lines)
set(ln 0)
set(arch "")
set(expected "")
foreach(line IN LISTS lines)
  math(EXPR ln "${ln} + 1")
  if(line MATCHES "^; PLANTED (.+)$")
    math(EXPR target "${ln} + 1")
    string(REPLACE " " ";" rules "${CMAKE_MATCH_1}")
    foreach(rule IN LISTS rules)
      list(APPEND expected "${target}:${rule}")
    endforeach()
  elseif(line MATCHES "^[ \t]*\\.amdgcn_target \"amdgcn-amd-amdhsa--(gfx[0-9a-z]+)\"")
    set(arch "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(arch STREQUAL "")
  message(FATAL_ERROR "${name}: no .amdgcn_target line")
endif()

execute_process(
  COMMAND ${CMAKE_COMMAND} -DASM=${FIXTURE} -DARCHS=${arch} -DOUT=${OUT}/${name}.md -DCHECK=ON
          -P ${CHECKER}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(log "${out}${err}")

# What it reported: `<fixture>:<line>: <target> <kernel>: [<rule>] ...`, and every [rule] tag at all
# (a problem in another form still counts as reported).
string(REGEX MATCHALL "${name}:[0-9]+: [^\n[]*\\[[a-z0-9-]+\\]" reports "${err}")
set(found "")
foreach(r IN LISTS reports)
  string(REGEX MATCH ":([0-9]+): [^\n[]*\\[([a-z0-9-]+)\\]$" _ "${r}")
  list(APPEND found "${CMAKE_MATCH_1}:${CMAKE_MATCH_2}")
endforeach()
string(REGEX MATCHALL "\\[[a-z0-9-]+\\]" tags "${err}")
list(LENGTH tags n_tags)
list(LENGTH found n_found)
list(SORT expected)
list(SORT found)

set(why "")
if(NOT log MATCHES "\\(${arch}\\): 1 vaeconv functions")
  string(APPEND why "the checker did not report checking one vaeconv kernel for ${arch}; ")
endif()
if(expected STREQUAL "")
  if(NOT rc EQUAL 0)
    string(APPEND why "the checker failed on a fixture that plants nothing; ")
  endif()
else()
  if(rc EQUAL 0)
    string(APPEND why "the checker passed; ")
  endif()
  if(NOT found STREQUAL expected OR NOT n_tags EQUAL n_found)
    string(APPEND why "expected (line:rule) ${expected}, reported ${found} (${n_tags} rule tags in all); ")
  endif()
endif()
if(NOT why STREQUAL "")
  message(FATAL_ERROR "${name}: ${why}\nchecker exit ${rc}, output:\n${log}")
endif()
if(expected STREQUAL "")
  message(STATUS "${name}: no violation planted, none reported")
else()
  message(STATUS "${name}: planted violations reported exactly (line:rule): ${found}")
endif()
