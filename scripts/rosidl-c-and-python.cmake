# For the interface packages scripts/setup.sh builds for the dev loop
# (CMAKE_PROJECT_INCLUDE): rosidl generates their C and Python code only.
# r2r and rclpy use nothing else, and the C++ typesupports were most of the
# set-up's compile time. colcon builds what a user gets: all of them.
macro(_rflysim_c_and_python_only _var _access)
  if("${_access}" STREQUAL "MODIFIED_ACCESS")
    set(_rflysim_kept "${${_var}}")
    list(FILTER _rflysim_kept EXCLUDE REGEX "^rosidl_(generator|typesupport|typesupport_fastrtps|typesupport_introspection)_cpp:")
    # Setting it again calls this once more, then with nothing to take out.
    if(NOT "${_rflysim_kept}" STREQUAL "${${_var}}")
      set(${_var} "${_rflysim_kept}")
    endif()
  endif()
endmacro()
variable_watch(AMENT_EXTENSIONS_rosidl_generate_idl_interfaces _rflysim_c_and_python_only)
