# The Python package (python/vaeconv) beside libvaeconv_kernels, so that `import vaeconv` finds the
# library without environment variables (python/vaeconv/_lib.py looks next to its own files first).
#
#   build:   <build>/python/vaeconv/{*.py, libvaeconv_kernels.so}   (PYTHONPATH=<build>/python)
#   install: <VAECONV_PYTHON_INSTALL_DIR>/vaeconv/{*.py, libvaeconv_kernels.so}; by default the
#            configuring Python's site-packages path under CMAKE_INSTALL_PREFIX (posix_prefix
#            scheme: <prefix>/lib/python3.X/site-packages, on sys.path in a venv whose prefix it
#            is), else <prefix>/lib/python3/site-packages.
set(VAECONV_PYTHON_BUILD_DIR ${PROJECT_BINARY_DIR}/python CACHE INTERNAL "")
file(GLOB VAECONV_PYTHON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/vaeconv/*.py)
set(stamp ${VAECONV_PYTHON_BUILD_DIR}/vaeconv/.copied)
add_custom_command(
  OUTPUT ${stamp}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${VAECONV_PYTHON_BUILD_DIR}/vaeconv
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${VAECONV_PYTHON_SOURCES}
          ${VAECONV_PYTHON_BUILD_DIR}/vaeconv/
  COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:vaeconv_kernels>
          ${VAECONV_PYTHON_BUILD_DIR}/vaeconv/
  COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
  DEPENDS ${VAECONV_PYTHON_SOURCES} vaeconv_kernels
  COMMENT "Python package vaeconv -> ${VAECONV_PYTHON_BUILD_DIR}"
  VERBATIM)
add_custom_target(vaeconv_python ALL DEPENDS ${stamp})

if(NOT VAECONV_PYTHON_INSTALL_DIR)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(dir "")
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c
              "import sysconfig; print(sysconfig.get_path('purelib', 'posix_prefix', vars={'base': '', 'platbase': ''}).lstrip('/'))"
      OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(NOT dir)
    set(dir ${CMAKE_INSTALL_LIBDIR}/python3/site-packages)
  endif()
  set(VAECONV_PYTHON_INSTALL_DIR ${dir} CACHE STRING
      "Where `cmake --install` puts the Python package (relative to CMAKE_INSTALL_PREFIX or absolute)")
endif()
install(FILES ${VAECONV_PYTHON_SOURCES} DESTINATION ${VAECONV_PYTHON_INSTALL_DIR}/vaeconv)
install(TARGETS vaeconv_kernels LIBRARY DESTINATION ${VAECONV_PYTHON_INSTALL_DIR}/vaeconv)
