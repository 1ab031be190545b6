//! The server key for secrets at rest (model provider API keys and headers; MCP secrets
//! later): `ARS_SECRET_KEY` (`secret_key`, the base64 of 32 bytes) when set, else the key file
//! `<data dir>/secret.key`, generated on first start and reused after.
//!
//! The file is created atomically: the key is written to a temporary file (mode 0600) beside
//! it, synced, then hard-linked into place, which fails if the file already exists. So two
//! processes starting together on one data dir agree on one key, and no reader ever sees a
//! half-written one. Several instances on one database need the same key: set
//! `ARS_SECRET_KEY` on each (or give them the same file).
//!
//! **Invariant:** the key never reaches the log, an error message or `Debug` output.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use ars_domain::SecretKey;

/// The key file's name in the data dir.
pub const FILE_NAME: &str = "secret.key";

/// The key the server seals and opens stored secrets with.
pub fn load(configured: Option<&str>, data_dir: &Path) -> anyhow::Result<SecretKey> {
    if let Some(text) = configured {
        let key = SecretKey::from_base64(text).map_err(|e| {
            anyhow::anyhow!("invalid configuration: secret_key (ARS_SECRET_KEY): {e}")
        })?;
        tracing::info!(
            key_id = key.id(),
            "secrets at rest use the configured key (ARS_SECRET_KEY)"
        );
        return Ok(key);
    }
    let path = data_dir.join(FILE_NAME);
    let (key, created) = load_or_create(&path)?;
    if created {
        tracing::warn!(
            file = %path.display(),
            key_id = key.id(),
            "generated the server key for secrets at rest (provider API keys); back the file up \
             with the database, and give every instance sharing the database the same key \
             (ARS_SECRET_KEY)"
        );
    } else {
        tracing::info!(file = %path.display(), key_id = key.id(), "secrets at rest use the key file");
    }
    Ok(key)
}

/// Reads the key file, or creates it with a fresh key; answers whether it was created here.
fn load_or_create(path: &Path) -> anyhow::Result<(SecretKey, bool)> {
    if let Some(key) = read(path)? {
        return Ok((key, false));
    }
    let key = SecretKey::generate();
    let temp = temp_path(path);
    let written = write_private(&temp, key.to_base64().as_str());
    let linked = written.and_then(|()| std::fs::hard_link(&temp, path));
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            sync_dir(path);
            Ok((key, true))
        }
        // Another process created it meanwhile: its key is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let key = read(path)?.with_context(|| {
                format!("{} vanished while it was being created", path.display())
            })?;
            Ok((key, false))
        }
        Err(e) => Err(e).with_context(|| format!("cannot create the key file {}", path.display())),
    }
}

/// The key in `path`, `None` when there is no such file. Warns when others may read it.
fn read(path: &Path) -> anyhow::Result<Option<SecretKey>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => zeroize::Zeroizing::new(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                file = %path.display(),
                "the key file can be read by other users; make it readable by this user only \
                 (chmod 600)"
            );
        }
    }
    SecretKey::from_base64(&text)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("the key file {} is not a key: {e}", path.display()))
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}-{}", std::process::id(), rand_suffix()));
    path.with_file_name(name)
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// Writes `text` and a newline to a new file readable by this user only, synced to disk.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    writeln!(file, "{text}")?;
    file.sync_all()
}

/// Makes the new directory entry durable; best effort (not every platform syncs directories).
fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent()
        && let Ok(dir) = std::fs::File::open(dir)
    {
        let _ = dir.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_file_is_created_private_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = load(None, dir.path()).unwrap();
        let path = dir.path().join(FILE_NAME);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        }
        let again = load(None, dir.path()).unwrap();
        assert_eq!(first.id(), again.id());
        let sealed = first.seal("c", "secret");
        assert_eq!(again.open("c", &sealed).unwrap().as_str(), "secret");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [FILE_NAME]);
    }

    #[test]
    fn processes_starting_together_agree_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let ids: Vec<String> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| load_or_create(&path).unwrap().0.id().to_string()))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
        assert_eq!(read(&path).unwrap().unwrap().id(), ids[0]);
    }

    #[test]
    fn a_configured_key_wins_and_a_bad_one_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let key = SecretKey::generate();
        let loaded = load(Some(key.to_base64().as_str()), dir.path()).unwrap();
        assert_eq!(loaded.id(), key.id());
        assert!(!dir.path().join(FILE_NAME).exists(), "no file is written");
        let error = load(Some("not-a-key"), dir.path())
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("ARS_SECRET_KEY") && error.contains("base64"),
            "{error}"
        );
        std::fs::write(dir.path().join(FILE_NAME), "garbage\n").unwrap();
        let error = load(None, dir.path()).err().unwrap().to_string();
        assert!(
            error.contains("secret.key") && error.contains("not a key"),
            "{error}"
        );
    }
}
