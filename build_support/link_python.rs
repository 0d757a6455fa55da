// Shared by the build scripts of the crates that link r2r.
//
// ROS 2 Jazzy's PyPI wheels build `librcl.so` against `*__rosidl_generator_py.so`
// libraries that need CPython symbols, so a Rust binary linked against that
// prefix dies at start with `undefined symbol: PyExc_RuntimeError` unless it
// links libpython itself. `scripts/setup.sh` sets PYTHON_LIBDIR only for that
// prefix; a real /opt/ros install needs nothing.
fn link_python_for_pypi_ros() {
    println!("cargo:rerun-if-env-changed=PYTHON_LIBDIR");
    println!("cargo:rerun-if-env-changed=RFLYSIM_ROS_FROM");
    let from_pypi = std::env::var("RFLYSIM_ROS_FROM").is_ok_and(|v| v == "pypi");
    if let (true, Ok(dir)) = (from_pypi, std::env::var("PYTHON_LIBDIR")) {
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-lpython3.11,--as-needed");
    }
}
