//! The process's memory allocator: jemalloc, with its background thread on, so that memory a
//! burst freed goes back to the kernel within seconds instead of staying resident for good.
//!
//! With glibc's allocator, the sandbox kept ~200 MiB of 2 000 closed watches resident (freed
//! chunks in the per-thread arenas of a multi-threaded runtime are kept for reuse, and nothing
//! trims them); the agent and garden controller keep what a large chart render or a relist
//! needed. jemalloc's decay purges unused dirty pages after ~10 s: measured on the sandbox,
//! 2 000 watches open 230 MiB, closed back to 34–38 MiB within 10 s, idle 20 MiB
//! (`sandbox/tests/server_behaviour/memory.rs`).

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Starts jemalloc's background thread, which purges freed pages on jemalloc's decay schedule
/// (without it, purging happens only inside later allocations of the same arena, so an idle
/// process would keep what it freed). A failure leaves the allocator working as before.
pub fn return_freed_memory() {
    if let Err(error) = tikv_jemalloc_ctl::background_thread::write(true) {
        tracing::debug!(%error, "could not start jemalloc's background purging");
    }
}
