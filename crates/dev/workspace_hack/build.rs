// Present so that cargo applies the [build-dependencies] above: the features of
// what build scripts and procedural macros use are unified as well.
fn main() {}
