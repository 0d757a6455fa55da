//! No code. Its dependencies, which `cargo hakari generate` writes, give each
//! dependency the workspace shares one set of features, whichever crates a
//! cargo command selects and whether it builds tests: each is compiled once
//! (docs/development.md, "The CI run").
