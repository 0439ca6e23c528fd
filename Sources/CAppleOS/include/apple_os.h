#ifndef NSE_APPLE_OS_H
#define NSE_APPLE_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The C functions of Apple's `os` module that extensions call: <os/lock.h>'s os_unfair_lock and <os/proc.h>'s
// os_proc_available_memory, with Apple's names and signatures, so `var lock = os_unfair_lock()` and
// `os_unfair_lock_lock(&lock)` compile unchanged (NSEOSLog re-exports this module; `import os` re-exports NSEOSLog).
// Only fixed-width types here: the system headers stay in the .c files.

/// A lock word: 0, or the owning thread's id (a Linux priority-inheritance futex, the kernel's lock of the same
/// shape as Apple's, which keeps the owner's port). Zero-initialized is unlocked: `os_unfair_lock()` in Swift.
typedef struct os_unfair_lock_s {
    uint32_t _os_unfair_lock_opaque;
} os_unfair_lock, *os_unfair_lock_t;

#define OS_UNFAIR_LOCK_INIT ((os_unfair_lock){0})

/// Waits for the lock. Locking it again on the owning thread stops the process, as Apple's does.
void os_unfair_lock_lock(os_unfair_lock_t lock);

/// The lock if no thread holds it, at once; false otherwise.
bool os_unfair_lock_trylock(os_unfair_lock_t lock);

/// Releases the lock; by a thread that does not hold it, stops the process, as Apple's does.
void os_unfair_lock_unlock(os_unfair_lock_t lock);

/// Stops the process unless the calling thread holds the lock.
void os_unfair_lock_assert_owner(const os_unfair_lock *lock);

/// Stops the process if the calling thread holds the lock.
void os_unfair_lock_assert_not_owner(const os_unfair_lock *lock);

/// The bytes the process may still allocate before the memory limit of the push it runs for: the limit the host set
/// (`NSE_MEMORY_LIMIT_KB`, the device's or `--memory-limit`) minus the footprint as the host counts it (RssAnon +
/// VmSwap). 0 outside nse's host, as Apple's is 0 outside an app, and 0 past the limit.
size_t os_proc_available_memory(void);

#endif
