//! Resource limits of one component instance and how a trap is classified.
//!
//! Memory is bounded by a [`ResourceLimiter`] that counts every linear
//! memory of the instance together (a component may carry several), on top
//! of wasmtime's [`StoreLimits`] for tables, instances and memories. A
//! denied growth traps (rather than letting `memory.grow` return -1), so the
//! operation fails with an explicit `memory limit` error instead of a guest
//! that limps on after its allocator gave up.

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder, Trap};

use super::error::{WasmError, WasmErrorKind};
use reasonix_protocol::ErrorReason;

const MIB: usize = 1024 * 1024;

/// Memory an instance may use unless its manifest says otherwise.
pub const DEFAULT_MEMORY_MIB: u32 = 64;
/// The most a manifest may grant (`runtime.sandbox.memoryMiB`).
pub const HOST_MEMORY_CEILING_MIB: u32 = 512;
/// [`HOST_MEMORY_CEILING_MIB`] in bytes (the pooling allocator's slot size).
pub const HOST_MEMORY_CEILING_BYTES: usize = HOST_MEMORY_CEILING_MIB as usize * MIB;
/// Elements per table.
pub const MAX_TABLE_ELEMENTS: usize = 100_000;
/// Core instances, tables and memories per component instance.
pub const MAX_CORE_INSTANCES: usize = 64;
pub const MAX_TABLES: usize = 64;
pub const MAX_MEMORIES: usize = 4;

/// A data directory's quota unless its manifest says otherwise
/// (`runtime.sandbox.dataMiB`).
pub const DEFAULT_DATA_MIB: u32 = 64;
/// The most a manifest may grant (checked by the manifest parser).
pub const HOST_DATA_CEILING_MIB: u32 = reasonix_package::manifest::SANDBOX_DATA_CEILING_MIB;
/// What one directory entry (file, directory, link) costs against the data
/// quota on top of its bytes: a quota bounds how many files a guest may
/// create, not only their size.
pub const DATA_ENTRY_BYTES: u64 = 4096;
/// Files and directory streams one instance may hold open: each holds a
/// host file descriptor.
pub const MAX_OPEN_HANDLES: usize = 256;
/// WASI resources of every kind (streams, pollables, descriptors…) one
/// instance may hold; past it the guest's call traps and the instance is
/// rebuilt, the host is untouched.
pub const MAX_WASI_RESOURCES: usize = 4096;

/// A resource table bounded by [`MAX_WASI_RESOURCES`].
pub(crate) fn resource_table() -> wasmtime::component::ResourceTable {
    let mut table = wasmtime::component::ResourceTable::new();
    table.set_max_capacity(MAX_WASI_RESOURCES);
    table
}

/// The manifest's `runtime.sandbox.dataMiB` (already range-checked by the
/// manifest parser) or the default, in bytes.
pub fn data_quota_bytes(data_mib: Option<u32>) -> u64 {
    u64::from(
        data_mib
            .unwrap_or(DEFAULT_DATA_MIB)
            .clamp(1, HOST_DATA_CEILING_MIB),
    ) * MIB as u64
}

/// The limits applied to one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceLimits {
    /// All linear memories of the instance together.
    pub memory_mib: u32,
}

impl Default for InstanceLimits {
    fn default() -> Self {
        InstanceLimits {
            memory_mib: DEFAULT_MEMORY_MIB,
        }
    }
}

impl InstanceLimits {
    /// The manifest's `runtime.sandbox.memoryMiB` (already range-checked by
    /// the manifest parser) or the default.
    pub fn from_manifest(memory_mib: Option<u32>) -> InstanceLimits {
        InstanceLimits {
            memory_mib: memory_mib
                .unwrap_or(DEFAULT_MEMORY_MIB)
                .clamp(1, HOST_MEMORY_CEILING_MIB),
        }
    }

    pub fn memory_bytes(self) -> usize {
        self.memory_mib as usize * MIB
    }
}

/// The store's limiter: total memory plus wasmtime's own counters.
pub(crate) struct Limiter {
    inner: StoreLimits,
    memory_limit: usize,
    memory_used: usize,
    /// Set when a growth was refused (the text says how); turns the
    /// resulting trap into [`WasmErrorKind::MemoryLimit`].
    pub(crate) refused: Option<String>,
}

impl Limiter {
    /// Bytes of linear memory the instance holds.
    pub(crate) fn memory_used(&self) -> usize {
        self.memory_used
    }

    pub(crate) fn new(limits: InstanceLimits) -> Limiter {
        Limiter {
            inner: StoreLimitsBuilder::new()
                .table_elements(MAX_TABLE_ELEMENTS)
                .instances(MAX_CORE_INSTANCES)
                .tables(MAX_TABLES)
                .memories(MAX_MEMORIES)
                .trap_on_grow_failure(true)
                .build(),
            memory_limit: limits.memory_bytes(),
            memory_used: 0,
            refused: None,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self
            .memory_used
            .saturating_sub(current)
            .saturating_add(desired);
        if total > self.memory_limit {
            let why = format!(
                "memory limit of {} MiB exceeded (growing to {total} bytes)",
                self.memory_limit / MIB
            );
            self.refused = Some(why.clone());
            wasmtime::bail!("{why}");
        }
        let allowed = self.inner.memory_growing(current, desired, maximum)?;
        if allowed {
            self.memory_used = total;
        }
        Ok(allowed)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.inner.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.inner.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

/// What the failed call was, for the timeout reason and the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallKind {
    Initialize,
    Intercept,
    Observe,
    Tool,
    Provider,
    Ui,
    Shutdown,
}

impl CallKind {
    fn timeout_reason(self) -> ErrorReason {
        match self {
            CallKind::Shutdown => ErrorReason::ShutdownTimeout,
            CallKind::Provider => ErrorReason::ProviderInterrupted,
            _ => ErrorReason::InterceptTimeout,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            CallKind::Initialize => "initialize",
            CallKind::Intercept => "intercept",
            CallKind::Observe => "event",
            CallKind::Tool => "tool call",
            CallKind::Provider => "provider call",
            CallKind::Ui => "ui callback",
            CallKind::Shutdown => "shutdown",
        }
    }
}

/// Turn an error out of a component call into the operation's failure.
/// `memory_refused` is the limiter's record for this call; `budget` the
/// call's budget (for the message).
pub(crate) fn classify_trap(
    error: &wasmtime::Error,
    call: CallKind,
    memory_refused: Option<&str>,
    budget: std::time::Duration,
) -> WasmError {
    let trap = error.downcast_ref::<Trap>().copied();
    if let Some(why) = memory_refused {
        return WasmError::new(
            WasmErrorKind::MemoryLimit,
            ErrorReason::Internal,
            format!("{} trapped: {why}", call.name()),
        );
    }
    let budget_millis = budget.as_micros().div_ceil(1000);
    match trap {
        Some(Trap::Interrupt) => WasmError::new(
            WasmErrorKind::Timeout,
            call.timeout_reason(),
            format!(
                "{} did not finish within its {budget_millis} ms budget",
                call.name()
            ),
        ),
        Some(Trap::StackOverflow) => WasmError::new(
            WasmErrorKind::StackOverflow,
            ErrorReason::Internal,
            format!("{} trapped: guest call stack overflow", call.name()),
        ),
        Some(other) => WasmError::new(
            WasmErrorKind::Trap,
            ErrorReason::Internal,
            format!("{} trapped: {other}", call.name()),
        ),
        None => WasmError::new(
            WasmErrorKind::Trap,
            ErrorReason::Internal,
            format!("{} failed: {error:#}", call.name()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_memory_is_clamped_to_the_ceiling() {
        assert_eq!(InstanceLimits::from_manifest(None).memory_mib, 64);
        assert_eq!(InstanceLimits::from_manifest(Some(8)).memory_mib, 8);
        assert_eq!(InstanceLimits::from_manifest(Some(0)).memory_mib, 1);
        assert_eq!(InstanceLimits::from_manifest(Some(4096)).memory_mib, 512);
    }

    #[test]
    fn limiter_counts_all_memories_together() {
        let mut limiter = Limiter::new(InstanceLimits { memory_mib: 2 });
        assert!(limiter.memory_growing(0, MIB, None).unwrap());
        assert!(limiter.memory_growing(0, MIB, None).unwrap());
        let err = limiter.memory_growing(0, 64 * 1024, None).unwrap_err();
        assert!(err.to_string().contains("memory limit of 2 MiB"), "{err}");
        assert!(limiter.refused.is_some());
    }
}
