//! What the repository holds, as the packages ship it: file names that every platform can check
//! out (Windows refuses device names such as `nul.rs` and some characters).

use std::path::{Path, PathBuf};

/// The names Windows reserves for devices, with or without an extension.
const RESERVED: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Why Windows cannot check out a file or folder named `name`, if it cannot.
fn unportable(name: &str) -> Option<String> {
    let stem = name.split('.').next().unwrap_or(name);
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem)) {
        return Some(format!("`{stem}` is a device name on Windows"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| r#"<>:"|?*\"#.contains(*c) || c.is_control())
    {
        return Some(format!("{c:?} is not allowed in a file name on Windows"));
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Some("a name ending in a dot or a space is changed by Windows".to_owned());
    }
    None
}

/// Every file below `dir`, but the build output and the repository's own data.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a readable entry").path();
        let name = path.file_name().unwrap_or_default();
        if name == "target" || name == ".git" {
            continue;
        }
        if path.is_dir() {
            files(&path, out);
        }
        out.push(path);
    }
}

#[test]
fn every_file_name_can_be_checked_out_on_windows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(root, &mut all);
    assert!(all.len() > 100, "{} files", all.len());
    let bad: Vec<String> = all
        .iter()
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?;
            let why = unportable(name)?;
            Some(format!(
                "{}: {why}",
                path.strip_prefix(root).unwrap().display()
            ))
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_check_sees_what_windows_refuses() {
    for name in [
        "nul.rs",
        "NUL",
        "con.stderr",
        "Aux.txt",
        "com1.rs",
        "a:b.rs",
        "end.",
    ] {
        assert!(unportable(name).is_some(), "{name}");
    }
    for name in ["nul_byte.rs", "console.rs", "null.rs", "lpt.rs", "a-b.rs"] {
        assert_eq!(unportable(name), None, "{name}");
    }
}
