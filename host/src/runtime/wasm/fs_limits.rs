//! Bounds on what a guest may hold and store through `wasi:filesystem`:
//!
//! - **open handles**: descriptors from `open-at` and directory streams from
//!   `read-directory` each hold a host file descriptor; past
//!   [`MAX_OPEN_HANDLES`] per instance the guest gets `insufficient-memory`
//!   and the host's own descriptors are untouched (every other WASI resource
//!   is bounded by the instance's table, [`super::limits::resource_table`]);
//! - **data quota**: the bytes and entries of the data directory; a write,
//!   a resize or a new entry that would take it past the plugin's quota
//!   (`runtime.sandbox.dataMiB`) fails for the guest with
//!   `insufficient-space`, the disk is untouched.
//!
//! wasmtime-wasi has neither bound, so the `wasi:filesystem/types` host
//! functions are shadowed in the linker by [`LimitedFs`], which checks and
//! then delegates to wasmtime-wasi's own implementation.
//!
//! The quota is counted conservatively (every written byte counts, an
//! overwrite too); when the count would pass the quota the directory is
//! measured again, so rewriting a file in place does not use the quota up.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::p2::bindings::filesystem::types as fs;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode as FsCode;
use wasmtime_wasi::p2::bindings::io::streams;
use wasmtime_wasi::p2::{
    DynOutputStream, FsError, FsResult, OutputStream, Pollable, StreamError, StreamResult,
};

use super::instance::HostState;
use super::limits::{DATA_ENTRY_BYTES, MAX_OPEN_HANDLES};

/// The quota of one plugin's data directory, shared by its instances and
/// their open write streams.
#[derive(Debug)]
pub(crate) struct DataQuota {
    dir: PathBuf,
    limit: u64,
    /// Bytes counted so far; `None` until first needed.
    used: Option<u64>,
}

impl DataQuota {
    pub(crate) fn new(dir: PathBuf, limit: u64) -> DataQuota {
        DataQuota {
            dir,
            limit,
            used: None,
        }
    }

    /// Count `bytes` against the quota; `false` (and nothing counted) when
    /// they do not fit even after measuring the directory again.
    fn reserve(&mut self, bytes: u64) -> bool {
        let used = match self.used {
            Some(used) => used,
            None => measure(&self.dir),
        };
        if used.saturating_add(bytes) <= self.limit {
            self.used = Some(used + bytes);
            return true;
        }
        let measured = measure(&self.dir);
        if measured.saturating_add(bytes) <= self.limit {
            self.used = Some(measured + bytes);
            true
        } else {
            self.used = Some(measured);
            false
        }
    }

    /// Give back a reservation whose operation failed.
    fn release(&mut self, bytes: u64) {
        if let Some(used) = &mut self.used {
            *used = used.saturating_sub(bytes);
        }
    }
}

/// The bytes of every file under `dir` plus [`DATA_ENTRY_BYTES`] for every
/// entry. Symlinks are counted as entries, never followed.
fn measure(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            total = total.saturating_add(DATA_ENTRY_BYTES);
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}

fn lock(quota: &Mutex<DataQuota>) -> MutexGuard<'_, DataQuota> {
    quota.lock().unwrap_or_else(|p| p.into_inner())
}

/// The filesystem bounds of one instance.
pub(crate) struct FsLimits {
    quota: Arc<Mutex<DataQuota>>,
    /// Table indices of the descriptors and directory streams the guest
    /// opened (not the preopens, which hold no descriptor of their own).
    open: HashSet<u32>,
    plugin: Arc<str>,
    warned_handles: bool,
    warned_quota: bool,
}

impl FsLimits {
    pub(crate) fn new(plugin: Arc<str>, quota: Arc<Mutex<DataQuota>>) -> FsLimits {
        FsLimits {
            quota,
            open: HashSet::new(),
            plugin,
            warned_handles: false,
            warned_quota: false,
        }
    }

    fn handle_available(&mut self) -> bool {
        if self.open.len() < MAX_OPEN_HANDLES {
            return true;
        }
        if !std::mem::replace(&mut self.warned_handles, true) {
            tracing::warn!(plugin = %self.plugin, "wasm guest reached its bound of {MAX_OPEN_HANDLES} open files and directories; further opens fail");
        }
        false
    }

    fn reserve(&mut self, bytes: u64) -> Result<(), FsError> {
        if lock(&self.quota).reserve(bytes) {
            return Ok(());
        }
        if !std::mem::replace(&mut self.warned_quota, true) {
            tracing::warn!(plugin = %self.plugin, "wasm guest reached its data quota; writes past it fail");
        }
        Err(FsCode::InsufficientSpace.into())
    }

    fn release(&mut self, bytes: u64) {
        lock(&self.quota).release(bytes);
    }
}

/// `wasi:filesystem/types` for one guest call: wasmtime-wasi's view plus
/// this instance's bounds.
pub(crate) struct LimitedFs<'a> {
    inner: WasiFilesystemCtxView<'a>,
    limits: &'a mut FsLimits,
}

/// The linker's handle on [`LimitedFs`].
pub(crate) struct LimitedFsData;

impl HasData for LimitedFsData {
    type Data<'a> = LimitedFs<'a>;
}

impl HostState {
    pub(crate) fn limited_fs(&mut self) -> LimitedFs<'_> {
        LimitedFs {
            inner: WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            limits: &mut self.fs_limits,
        }
    }
}

/// Shadow wasmtime-wasi's `wasi:filesystem/types` with the bounded one.
pub(crate) fn add_to_linker(
    linker: &mut wasmtime::component::Linker<HostState>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let added = fs::add_to_linker::<HostState, LimitedFsData>(linker, HostState::limited_fs);
    linker.allow_shadowing(false);
    added
}

impl LimitedFs<'_> {
    /// Give back the `bytes` reserved for an operation that failed.
    fn settle<T>(&mut self, bytes: u64, result: &FsResult<T>) {
        if result.is_err() {
            self.limits.release(bytes);
        }
    }

    /// Wrap a new file write stream so its bytes count against the quota.
    fn quota_stream(
        &mut self,
        stream: Resource<streams::OutputStream>,
    ) -> FsResult<Resource<streams::OutputStream>> {
        let slot: &mut DynOutputStream = self.inner.table.get_mut(&stream)?;
        let inner = std::mem::replace(slot, Box::new(Spent));
        *slot = Box::new(QuotaStream {
            inner,
            quota: Arc::clone(&self.limits.quota),
        });
        Ok(stream)
    }
}

impl fs::Host for LimitedFs<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<fs::ErrorCode> {
        fs::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<streams::Error>,
    ) -> wasmtime::Result<Option<fs::ErrorCode>> {
        fs::Host::filesystem_error_code(&mut self.inner, err)
    }
}

impl fs::HostDescriptor for LimitedFs<'_> {
    async fn advise(
        &mut self,
        fd: Resource<fs::Descriptor>,
        offset: fs::Filesize,
        len: fs::Filesize,
        advice: fs::Advice,
    ) -> FsResult<()> {
        fs::HostDescriptor::advise(&mut self.inner, fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<fs::Descriptor>) -> FsResult<()> {
        fs::HostDescriptor::sync_data(&mut self.inner, fd).await
    }

    async fn get_flags(&mut self, fd: Resource<fs::Descriptor>) -> FsResult<fs::DescriptorFlags> {
        fs::HostDescriptor::get_flags(&mut self.inner, fd).await
    }

    async fn get_type(&mut self, fd: Resource<fs::Descriptor>) -> FsResult<fs::DescriptorType> {
        fs::HostDescriptor::get_type(&mut self.inner, fd).await
    }

    async fn set_size(&mut self, fd: Resource<fs::Descriptor>, size: fs::Filesize) -> FsResult<()> {
        // Counted as if the whole new size were new data (a sparse file
        // still claims its length).
        self.limits.reserve(size)?;
        let result = fs::HostDescriptor::set_size(&mut self.inner, fd, size).await;
        self.settle(size, &result);
        result
    }

    async fn set_times(
        &mut self,
        fd: Resource<fs::Descriptor>,
        atim: fs::NewTimestamp,
        mtim: fs::NewTimestamp,
    ) -> FsResult<()> {
        fs::HostDescriptor::set_times(&mut self.inner, fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Resource<fs::Descriptor>,
        len: fs::Filesize,
        offset: fs::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        fs::HostDescriptor::read(&mut self.inner, fd, len, offset).await
    }

    async fn write(
        &mut self,
        fd: Resource<fs::Descriptor>,
        buf: Vec<u8>,
        offset: fs::Filesize,
    ) -> FsResult<fs::Filesize> {
        self.limits.reserve(buf.len() as u64)?;
        let bytes = buf.len() as u64;
        let result = fs::HostDescriptor::write(&mut self.inner, fd, buf, offset).await;
        self.settle(bytes, &result);
        result
    }

    async fn read_directory(
        &mut self,
        fd: Resource<fs::Descriptor>,
    ) -> FsResult<Resource<fs::DirectoryEntryStream>> {
        if !self.limits.handle_available() {
            return Err(FsCode::InsufficientMemory.into());
        }
        let stream = fs::HostDescriptor::read_directory(&mut self.inner, fd).await?;
        self.limits.open.insert(stream.rep());
        Ok(stream)
    }

    async fn sync(&mut self, fd: Resource<fs::Descriptor>) -> FsResult<()> {
        fs::HostDescriptor::sync(&mut self.inner, fd).await
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        self.limits.reserve(DATA_ENTRY_BYTES)?;
        let result = fs::HostDescriptor::create_directory_at(&mut self.inner, fd, path).await;
        self.settle(DATA_ENTRY_BYTES, &result);
        result
    }

    async fn stat(&mut self, fd: Resource<fs::Descriptor>) -> FsResult<fs::DescriptorStat> {
        fs::HostDescriptor::stat(&mut self.inner, fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
    ) -> FsResult<fs::DescriptorStat> {
        fs::HostDescriptor::stat_at(&mut self.inner, fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
        atim: fs::NewTimestamp,
        mtim: fs::NewTimestamp,
    ) -> FsResult<()> {
        fs::HostDescriptor::set_times_at(&mut self.inner, fd, path_flags, path, atim, mtim).await
    }

    async fn link_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        old_path_flags: fs::PathFlags,
        old_path: String,
        new_descriptor: Resource<fs::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        self.limits.reserve(DATA_ENTRY_BYTES)?;
        let result = fs::HostDescriptor::link_at(
            &mut self.inner,
            fd,
            old_path_flags,
            old_path,
            new_descriptor,
            new_path,
        )
        .await;
        self.settle(DATA_ENTRY_BYTES, &result);
        result
    }

    async fn open_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
        oflags: fs::OpenFlags,
        flags: fs::DescriptorFlags,
    ) -> FsResult<Resource<fs::Descriptor>> {
        if !self.limits.handle_available() {
            return Err(FsCode::InsufficientMemory.into());
        }
        // A file that may be created is a new entry (measured again later
        // if it already existed).
        let entry = if oflags.contains(fs::OpenFlags::CREATE) {
            DATA_ENTRY_BYTES
        } else {
            0
        };
        self.limits.reserve(entry)?;
        let result =
            fs::HostDescriptor::open_at(&mut self.inner, fd, path_flags, path, oflags, flags).await;
        self.settle(entry, &result);
        let opened = result?;
        self.limits.open.insert(opened.rep());
        Ok(opened)
    }

    fn drop(&mut self, fd: Resource<fs::Descriptor>) -> wasmtime::Result<()> {
        self.limits.open.remove(&fd.rep());
        fs::HostDescriptor::drop(&mut self.inner, fd)
    }

    async fn readlink_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        path: String,
    ) -> FsResult<String> {
        fs::HostDescriptor::readlink_at(&mut self.inner, fd, path).await
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        fs::HostDescriptor::remove_directory_at(&mut self.inner, fd, path).await
    }

    async fn rename_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        old_path: String,
        new_fd: Resource<fs::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        fs::HostDescriptor::rename_at(&mut self.inner, fd, old_path, new_fd, new_path).await
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        self.limits.reserve(DATA_ENTRY_BYTES)?;
        let result = fs::HostDescriptor::symlink_at(&mut self.inner, fd, src_path, dest_path).await;
        self.settle(DATA_ENTRY_BYTES, &result);
        result
    }

    async fn unlink_file_at(&mut self, fd: Resource<fs::Descriptor>, path: String) -> FsResult<()> {
        fs::HostDescriptor::unlink_file_at(&mut self.inner, fd, path).await
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<fs::Descriptor>,
        offset: fs::Filesize,
    ) -> FsResult<Resource<streams::InputStream>> {
        fs::HostDescriptor::read_via_stream(&mut self.inner, fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<fs::Descriptor>,
        offset: fs::Filesize,
    ) -> FsResult<Resource<streams::OutputStream>> {
        let stream = fs::HostDescriptor::write_via_stream(&mut self.inner, fd, offset)?;
        self.quota_stream(stream)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<fs::Descriptor>,
    ) -> FsResult<Resource<streams::OutputStream>> {
        let stream = fs::HostDescriptor::append_via_stream(&mut self.inner, fd)?;
        self.quota_stream(stream)
    }

    async fn is_same_object(
        &mut self,
        a: Resource<fs::Descriptor>,
        b: Resource<fs::Descriptor>,
    ) -> wasmtime::Result<bool> {
        fs::HostDescriptor::is_same_object(&mut self.inner, a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<fs::Descriptor>,
    ) -> FsResult<fs::MetadataHashValue> {
        fs::HostDescriptor::metadata_hash(&mut self.inner, fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<fs::Descriptor>,
        path_flags: fs::PathFlags,
        path: String,
    ) -> FsResult<fs::MetadataHashValue> {
        fs::HostDescriptor::metadata_hash_at(&mut self.inner, fd, path_flags, path).await
    }
}

impl fs::HostDirectoryEntryStream for LimitedFs<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<fs::DirectoryEntryStream>,
    ) -> FsResult<Option<fs::DirectoryEntry>> {
        fs::HostDirectoryEntryStream::read_directory_entry(&mut self.inner, stream).await
    }

    fn drop(&mut self, stream: Resource<fs::DirectoryEntryStream>) -> wasmtime::Result<()> {
        self.limits.open.remove(&stream.rep());
        fs::HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}

/// A file write stream whose bytes count against the data quota.
struct QuotaStream {
    inner: DynOutputStream,
    quota: Arc<Mutex<DataQuota>>,
}

/// The no-space error a guest sees from a stream (`insufficient-space`
/// through `filesystem-error-code`).
fn no_space() -> StreamError {
    StreamError::LastOperationFailed(
        std::io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error()).into(),
    )
}

#[wasmtime_wasi::async_trait]
impl OutputStream for QuotaStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let n = bytes.len() as u64;
        if !lock(&self.quota).reserve(n) {
            return Err(no_space());
        }
        let written = self.inner.write(bytes);
        if written.is_err() {
            lock(&self.quota).release(n);
        }
        written
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for QuotaStream {
    async fn ready(&mut self) {
        self.inner.ready().await
    }
}

/// What briefly stands in the table while a stream is being wrapped.
struct Spent;

#[wasmtime_wasi::async_trait]
impl OutputStream for Spent {
    fn write(&mut self, _: Bytes) -> StreamResult<()> {
        Err(StreamError::Closed)
    }

    fn flush(&mut self) -> StreamResult<()> {
        Err(StreamError::Closed)
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Err(StreamError::Closed)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Spent {
    async fn ready(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quota_counts_writes_and_measures_again_before_refusing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old"), vec![0u8; 1000]).unwrap();
        let mut quota = DataQuota::new(dir.path().to_path_buf(), 3 * DATA_ENTRY_BYTES + 2000);
        // 1000 bytes + one entry are there already; a second file fits.
        assert!(quota.reserve(DATA_ENTRY_BYTES + 1000));
        std::fs::write(dir.path().join("new"), vec![0u8; 1000]).unwrap();
        // A third does not, even measured again.
        assert!(!quota.reserve(DATA_ENTRY_BYTES + 1000));
        // Once the guest deletes a file, measuring again finds the room.
        std::fs::remove_file(dir.path().join("old")).unwrap();
        assert!(quota.reserve(DATA_ENTRY_BYTES + 1000));
    }

    #[test]
    fn symlinks_are_entries_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let big = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(big.path(), vec![0u8; 10_000]).unwrap();
        std::os::unix::fs::symlink(big.path(), dir.path().join("link")).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/f"), b"abc").unwrap();
        assert_eq!(measure(dir.path()), 3 * DATA_ENTRY_BYTES + 3);
    }
}
