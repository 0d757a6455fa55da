//! RflySim's maps on this machine: a map's name from a world resource, and
//! the folder its files are read from. Both the settings and the scene read them.

use std::path::PathBuf;

/// `rflysim://map/<name>`: a map of RflySim3D, by name.
pub const MAP_RESOURCE: &str = "rflysim://map/";

/// The map a world resource names: `rflysim://map/<name>` or a bare name,
/// one RflySim3D's console takes (`rflysim_proto::console::check_name`) and
/// a file name (`rflysim_proto::terrain::check_map_name`): its terrain is
/// read from `map_dir` and nowhere else.
pub fn map_of(uri: &str) -> Result<String, String> {
    let name = uri.strip_prefix(MAP_RESOURCE).unwrap_or(uri);
    let checked = rflysim_proto::console::check_name(name)
        .map_err(|why| why.to_string())
        .and_then(|name| rflysim_proto::terrain::check_map_name(name).map_err(|why| why.to_string()));
    match checked {
        Ok(name) => Ok(name.to_string()),
        Err(why) => Err(format!(
            "{uri:?}: a map of RflySim3D by name, {MAP_RESOURCE}<name>; the name: {why}"
        )),
    }
}

/// `path` with a leading `~` as the home folder.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_is_named_by_a_file_name_not_a_path() {
        for uri in [
            "rflysim://map/../../../tmp/x",
            "rflysim://map/..",
            "rflysim://map/sub/Grasslands",
            "rflysim://map/..\\Windows\\x",
            "/etc/passwd",
        ] {
            let why = map_of(uri).unwrap_err();
            assert!(
                why.contains("not a file name") && why.contains(&format!("{uri:?}")),
                "{why}"
            );
        }
    }

    #[test]
    fn a_leading_tilde_is_the_home_folder() {
        let home = PathBuf::from(std::env::var_os("HOME").unwrap());
        assert_eq!(expand_home("~/maps"), home.join("maps"));
        assert_eq!(expand_home("~"), home);
        assert_eq!(expand_home("/srv/maps"), PathBuf::from("/srv/maps"));
        assert_eq!(expand_home("~other/maps"), PathBuf::from("~other/maps"));
    }
}
