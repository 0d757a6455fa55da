include!("../../../build_support/link_python.rs");

fn main() {
    link_python_for_pypi_ros();
}
