//! The middleware profile every bridge process starts with.
//!
//! Fast DDS moves a large message through a shared-memory segment of the
//! *publishing* participant. Its default segment (512 KiB) makes a 6 MB image
//! cross in ~50 ms p50 / ~90 ms p99 here; the shipped profile's 64 MiB segment
//! in ~6 ms / ~12 ms, and that for subscribers left with Fast DDS's defaults
//! too (rviz2, a user's own node): only the publisher needs it (BENCHMARKS.md,
//! "Fast by default"). So every bridge process uses the shipped profile unless
//! the user chose one.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Fast DDS 2 (Jazzy) reads the first, Fast DDS 3 (Kilted) the second.
pub const PROFILE_VARS: [&str; 2] = ["FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE"];

pub const PROFILE_FILE: &str = "fastdds_large_data.xml";

const FAST_DDS_RMWS: [&str; 2] = ["rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp"];

/// The shipped profile: beside an installed executable
/// (`<prefix>/lib/rflysim_bridge/<exe>` → `<prefix>/share/rflysim_bridge/config/`),
/// else in `source_config` (the source tree of a `cargo build`).
fn shipped_profile(exe: &Path, source_config: &Path) -> Option<PathBuf> {
    let installed = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(|prefix| prefix.join("share/rflysim_bridge/config").join(PROFILE_FILE));
    installed
        .into_iter()
        .chain([source_config.join(PROFILE_FILE)])
        .find(|p| p.is_file())
}

/// The profile to set, if any: none when the user set a profile variable
/// (even to nothing: that asks for Fast DDS's defaults) or chose another
/// middleware.
fn profile_to_set(env: impl Fn(&str) -> Option<OsString>, exe: &Path, source_config: &Path) -> Option<PathBuf> {
    let other_rmw = env("RMW_IMPLEMENTATION")
        .filter(|r| !r.is_empty())
        .is_some_and(|r| !FAST_DDS_RMWS.iter().any(|f| r == *f));
    if other_rmw || PROFILE_VARS.iter().any(|v| env(v).is_some()) {
        return None;
    }
    shipped_profile(exe, source_config)
}

/// Sets the profile variables to the shipped profile unless the user chose
/// otherwise; returns the profile set. Call first in `main`, before any
/// thread starts (it changes the process environment).
pub fn use_shipped_profile_unless_chosen() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let source_config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../config");
    let profile = profile_to_set(|v| std::env::var_os(v), &exe, &source_config)?;
    for v in PROFILE_VARS {
        std::env::set_var(v, &profile);
    }
    Some(profile)
}

/// The process's ROS 2 context, on the shipped profile unless the user chose
/// one (returned when set). Call first in `main`, before any thread starts.
pub fn context() -> Result<(r2r::Context, Option<PathBuf>), String> {
    let profile = use_shipped_profile_unless_chosen();
    let ctx = r2r::Context::create().map_err(|e| format!("ROS 2 context: {e}"))?;
    Ok((ctx, profile))
}

/// One line saying which profile the process uses, when it set one.
pub fn log_profile(logger: &str, profile: Option<&Path>) {
    if let Some(p) = profile {
        r2r::log_info!(
            logger,
            "Fast DDS profile {} (large messages; FASTRTPS_DEFAULT_PROFILES_FILE chooses another)",
            p.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = vars.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
        move |k| map.get(k).cloned()
    }

    fn installed_tree() -> (PathBuf, PathBuf) {
        let prefix = std::env::temp_dir().join(format!("rflysim_dds_test_{}", std::process::id()));
        let config = prefix.join("share/rflysim_bridge/config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(prefix.join("lib/rflysim_bridge")).unwrap();
        std::fs::write(config.join(PROFILE_FILE), "<profiles/>").unwrap();
        (prefix.join("lib/rflysim_bridge/bridge"), config.join(PROFILE_FILE))
    }

    #[test]
    fn an_installed_executable_gets_the_profile_beside_it() {
        let (exe, profile) = installed_tree();
        let nowhere = Path::new("/nonexistent");
        assert_eq!(profile_to_set(env(&[]), &exe, nowhere), Some(profile.clone()));
        assert_eq!(
            profile_to_set(env(&[("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")]), &exe, nowhere),
            Some(profile)
        );
    }

    #[test]
    fn the_users_choice_wins() {
        let (exe, _) = installed_tree();
        let nowhere = Path::new("/nonexistent");
        for chosen in [
            ("FASTRTPS_DEFAULT_PROFILES_FILE", "/home/me/dds.xml"),
            ("FASTRTPS_DEFAULT_PROFILES_FILE", ""),
            ("FASTDDS_DEFAULT_PROFILES_FILE", "/home/me/dds.xml"),
            ("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp"),
        ] {
            assert_eq!(profile_to_set(env(&[chosen]), &exe, nowhere), None, "{chosen:?}");
        }
    }

    #[test]
    fn a_cargo_build_uses_the_source_trees_profile() {
        let source_config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../config");
        let exe = Path::new("/somewhere/target/release/bridge");
        assert_eq!(
            profile_to_set(env(&[]), exe, &source_config),
            Some(source_config.join(PROFILE_FILE))
        );
        assert_eq!(profile_to_set(env(&[]), exe, Path::new("/nonexistent")), None);
    }
}
