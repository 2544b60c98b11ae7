//! Giving freed memory back to the system.

/// Returns the memory the allocator holds freed to the system. glibc keeps the pages of freed
/// small allocations for reuse, and a large allocation (over the mmap threshold: the blob,
/// the arrays of a save's check) is mapped fresh, on top of them: a save of a million chunks
/// held gigabytes of the index it had just dropped beside the blob and its check; the threads
/// of a build's analysis each leave an arena of freed pages behind. Other allocators and
/// platforms: nothing.
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim only hands free pages of the heap back to the kernel (the
    // allocator takes its own locks); it reads or moves no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}
