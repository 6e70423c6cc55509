//! The log backend: events go, one JSON line each, through a bounded
//! channel to a writer thread, so a request never waits on the disk itself.
//!
//! kube's log backend runs in `blocking` mode by default (`--audit-log-mode`):
//! the request that produced an event waits until the event is written.
//! Here a request waits only when [`CAPACITY`] events are already queued
//! (a disk slower than the requests for a while): it then waits for room,
//! so no event is ever dropped, as in kube's blocking mode. The ends of
//! watches, which have no request left to hold up, queue without waiting.
//!
//! Files rotate as kube's (lumberjack's) do: past `--audit-log-maxsize`
//! megabytes (100 when 0) the file is renamed `<name>-<UTC time>.<ext>`
//! (`audit-2026-01-02T03-04-05.678.log`) and a new one opened; backups past
//! `--audit-log-maxbackup` (0 = all) or older than `--audit-log-maxage`
//! days (0 = forever) are removed, and with `--audit-log-compress` gzipped.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDateTime, Utc};
use tokio::sync::mpsc;

use super::{AuditError, AuditFlags};

/// Events queued before a request waits for the writer.
pub const CAPACITY: usize = 1024;

/// lumberjack's size limit when `--audit-log-maxsize` is 0.
const DEFAULT_MAX_MB: u64 = 100;

/// lumberjack's backup time stamp (Go's `2006-01-02T15-04-05.000`).
const BACKUP_TIME: &str = "%Y-%m-%dT%H-%M-%S%.3f";

/// Where events go.
#[derive(Clone)]
pub struct Sink {
    tx: mpsc::Sender<Vec<u8>>,
}

impl Sink {
    /// Open the log (`-` is standard output) and start its writer thread.
    pub fn open(flags: &AuditFlags) -> Result<Sink, AuditError> {
        let path = flags
            .audit_log_path
            .as_deref()
            .ok_or_else(|| AuditError::Flags("--audit-log-path is required".into()))?;
        let mut out = if path == Path::new("-") {
            Output::Stdout(std::io::stdout())
        } else {
            Output::File(Rotating::open(
                path,
                flags.audit_log_maxsize.max(0).unsigned_abs(),
                flags.audit_log_maxbackup.max(0).unsigned_abs(),
                flags.audit_log_maxage.max(0).unsigned_abs(),
                flags.audit_log_compress,
            )?)
        };
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(CAPACITY);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || {
                while let Some(line) = rx.blocking_recv() {
                    out.write(&line);
                    while let Ok(line) = rx.try_recv() {
                        out.write(&line);
                    }
                    out.flush();
                }
                out.flush();
            })
            .map_err(|e| AuditError::Io {
                path: path.to_path_buf(),
                source: e,
            })?;
        Ok(Sink { tx })
    }

    /// Queue one line, waiting for room when the queue is full.
    pub async fn send(&self, line: Vec<u8>) {
        if self.tx.send(line).await.is_err() {
            tracing::error!("audit log writer stopped; event dropped");
        }
    }

    /// Queue one line without waiting (from a `Drop`): when the queue is
    /// full, a task waits for room instead.
    pub fn send_later(&self, line: Vec<u8>) {
        match self.tx.try_send(line) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(line)) => {
                if let Ok(rt) = tokio::runtime::Handle::try_current() {
                    let tx = self.tx.clone();
                    rt.spawn(async move {
                        let _ = tx.send(line).await;
                    });
                } else {
                    tracing::error!("audit log queue full outside a runtime; event dropped");
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                tracing::error!("audit log writer stopped; event dropped");
            }
        }
    }
}

enum Output {
    Stdout(std::io::Stdout),
    File(Rotating),
}

impl Output {
    fn write(&mut self, line: &[u8]) {
        let r = match self {
            Output::Stdout(s) => s.write_all(line),
            Output::File(f) => f.write(line),
        };
        if let Err(e) = r {
            // kube's wording for a backend that failed an event.
            tracing::error!(error = %e, "Error in audit plugin 'log' affecting 1 audit events");
        }
    }

    fn flush(&mut self) {
        let r = match self {
            Output::Stdout(s) => s.flush(),
            Output::File(f) => f.flush(),
        };
        if let Err(e) = r {
            tracing::error!(error = %e, "audit log flush failed");
        }
    }
}

/// A size-rotated log file with lumberjack's backup names.
struct Rotating {
    path: PathBuf,
    file: BufWriter<File>,
    size: u64,
    max_bytes: u64,
    max_backups: usize,
    max_age_days: u32,
    compress: bool,
}

fn open_log(path: &Path) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

impl Rotating {
    fn open(
        path: &Path,
        max_mb: u32,
        max_backups: u32,
        max_age_days: u32,
        compress: bool,
    ) -> Result<Rotating, AuditError> {
        let io = |source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let mut b = std::fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                b.mode(0o700);
            }
            b.create(dir).map_err(io)?;
        }
        let file = open_log(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let mb = if max_mb == 0 {
            DEFAULT_MAX_MB
        } else {
            u64::from(max_mb)
        };
        Ok(Rotating {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
            size,
            max_bytes: mb * 1024 * 1024,
            max_backups: max_backups as usize,
            max_age_days,
            compress,
        })
    }

    fn write(&mut self, line: &[u8]) -> std::io::Result<()> {
        if self.size > 0 && self.size + line.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        self.file.write_all(line)?;
        self.size += line.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }

    /// Rename the full file to its backup name, start a new one, then
    /// prune (and compress) the backups.
    fn rotate(&mut self) -> std::io::Result<()> {
        self.file.flush()?;
        let backup = backup_name(&self.path, Utc::now());
        std::fs::rename(&self.path, &backup)?;
        self.file = BufWriter::new(open_log(&self.path)?);
        self.size = 0;
        if let Err(e) = self.prune() {
            tracing::warn!(error = %e, "pruning audit log backups");
        }
        Ok(())
    }

    fn prune(&self) -> std::io::Result<()> {
        let (dir, prefix, ext) = parts(&self.path);
        let mut backups: Vec<(DateTime<Utc>, PathBuf, bool)> = Vec::new();
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let (stem, gz) = match name.strip_suffix(".gz") {
                Some(s) => (s, true),
                None => (name.as_str(), false),
            };
            let Some(ts) = stem
                .strip_prefix(&prefix)
                .and_then(|s| s.strip_prefix('-'))
                .and_then(|s| s.strip_suffix(&ext))
            else {
                continue;
            };
            if let Ok(t) = NaiveDateTime::parse_from_str(ts, BACKUP_TIME) {
                backups.push((t.and_utc(), entry.path(), gz));
            }
        }
        backups.sort_by_key(|b| std::cmp::Reverse(b.0));
        let cutoff = Utc::now() - chrono::Duration::days(i64::from(self.max_age_days));
        for (i, (t, path, gz)) in backups.iter().enumerate() {
            let too_many = self.max_backups > 0 && i >= self.max_backups;
            let too_old = self.max_age_days > 0 && *t < cutoff;
            if too_many || too_old {
                std::fs::remove_file(path)?;
            } else if self.compress && !gz {
                gzip(path)?;
            }
        }
        Ok(())
    }
}

/// Directory, name without extension, and extension (Go's `filepath.Ext`).
fn parts(path: &Path) -> (PathBuf, String, String) {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.rfind('.') {
        Some(i) => (dir, name[..i].to_string(), name[i..].to_string()),
        None => (dir, name, String::new()),
    }
}

/// lumberjack's backup name: `<dir>/<name>-<UTC time><ext>`.
fn backup_name(path: &Path, t: DateTime<Utc>) -> PathBuf {
    let (dir, prefix, ext) = parts(path);
    dir.join(format!("{prefix}-{}{ext}", t.format(BACKUP_TIME)))
}

fn gzip(path: &Path) -> std::io::Result<()> {
    let mut gz_name = path.as_os_str().to_owned();
    gz_name.push(".gz");
    let mut input = File::open(path)?;
    let out = File::create(&gz_name)?;
    let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    std::io::copy(&mut input, &mut enc)?;
    enc.finish()?;
    std::fs::remove_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_names_are_lumberjacks() {
        let t = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678901Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            backup_name(Path::new("/var/log/audit.log"), t),
            PathBuf::from("/var/log/audit-2026-01-02T03-04-05.678.log")
        );
        assert_eq!(
            backup_name(Path::new("audit"), t),
            PathBuf::from("./audit-2026-01-02T03-04-05.678")
        );
    }

    #[test]
    fn rotates_and_keeps_n_backups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/audit.log");
        let mut r = Rotating::open(&path, 1, 2, 0, false).unwrap();
        let line = vec![b'x'; 400 * 1024];
        for _ in 0..12 {
            r.write(&line).unwrap();
            // Distinct backup time stamps.
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        r.flush().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path().join("logs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 3, "{names:?}");
        assert_eq!(names[2], "audit.log");
        assert!(names[0].starts_with("audit-") && names[0].ends_with(".log"));
        // Each file holds at most 1 MiB: two 400 KiB lines.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 * 400 * 1024);
    }
}
