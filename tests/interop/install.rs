//! The foreign side's runtimes and packages: Node.js (≥ 20.19, what mongoose 9 and
//! `@typegoose/auto-increment` 5 require) with npm, Python 3 with pip; the packages installed
//! from the npm registry and PyPI at the versions the lock files and `requirements.txt` pin,
//! into the target directory (again only when those files change).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::row::Runtime;

/// Where the suite's sources are.
fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// Where the suite is installed.
pub fn installed() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop")
}

/// The output of `program args`, if it ran and succeeded.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Why `runtime` cannot run the suite's writers here (`None`: it can).
pub fn missing(runtime: Runtime) -> Option<String> {
    match runtime {
        Runtime::Node => {
            let Some(version) = output("node", &["--version"]) else {
                return Some("`node` is not installed (Node.js 20.19 or newer is needed)".into());
            };
            let mut parts = version
                .trim_start_matches('v')
                .split('.')
                .map(|p| p.parse::<u32>().unwrap_or(0));
            let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
            if (major, minor) < (20, 19) {
                return Some(format!(
                    "`node` is {version}; mongoose 9 and @typegoose/auto-increment 5 need 20.19 or newer"
                ));
            }
            output("npm", &["--version"])
                .is_none()
                .then(|| "`npm` is not installed".into())
        }
        Runtime::Python => output("python3", &["-m", "pip", "--version"])
            .is_none()
            .then(|| "`python3` with `pip` is not installed".into()),
    }
}

/// Copies the suite's scripts and package files to [`installed`] and installs the packages of
/// `runtimes` there.
pub fn install(runtimes: &[Runtime]) {
    let to = installed();
    copy_tree(&sources().join("node"), &to.join("node"));
    copy_tree(&sources().join("python"), &to.join("python"));
    if runtimes.contains(&Runtime::Node) {
        for project in ["mongoose9", "mongoose5"] {
            let dir = to.join("node").join(project);
            if_changed(&dir, "package-lock.json", || {
                run(Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir));
            });
        }
    }
    if runtimes.contains(&Runtime::Python) {
        let dir = to.join("python");
        if_changed(&dir, "requirements.txt", || {
            let site = dir.join("site");
            let _ = fs::remove_dir_all(&site);
            run(Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-warn-script-location",
                    "--target",
                ])
                .arg(&site)
                .args(["-r", "requirements.txt"])
                .env("PIP_ROOT_USER_ACTION", "ignore")
                .current_dir(&dir));
        });
    }
}

/// Where Python finds the installed packages.
pub fn python_path() -> PathBuf {
    installed().join("python/site")
}

/// Runs `install` unless `dir` was installed from the same `file` already.
fn if_changed(dir: &Path, file: &str, install: impl FnOnce()) {
    let wanted = fs::read(dir.join(file)).expect("the suite's package file");
    let stamp = dir.join(".installed");
    if fs::read(&stamp).is_ok_and(|had| had == wanted) {
        return;
    }
    install();
    fs::write(&stamp, wanted).expect("write the install stamp");
}

fn run(command: &mut Command) {
    println!("interop: {command:?}");
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(status.success(), "{command:?} failed ({status})");
}

/// Copies the files of `from` into `to`, recursively, leaving out installed packages.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create the install directory");
    for entry in fs::read_dir(from).expect("the suite's sources") {
        let entry = entry.expect("a directory entry");
        let name = entry.file_name();
        if name == "node_modules" || name == "site" || name == "__pycache__" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &to.join(&name));
        } else {
            fs::copy(&path, to.join(&name)).expect("copy a file of the suite");
        }
    }
}
