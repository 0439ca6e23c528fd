#include "apple_os.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// Not cached: a forked process's thread has a new id.
static uint32_t thread_id(void) { return (uint32_t)syscall(SYS_gettid); }

// What Apple's libplatform does with a misused lock: a message, then the process stops.
__attribute__((noreturn)) static void crash(const char *message) {
    static const char prefix[] = "BUG IN CLIENT OF LIBPLATFORM: ";
    (void)!write(STDERR_FILENO, prefix, sizeof prefix - 1);
    (void)!write(STDERR_FILENO, message, strlen(message));
    (void)!write(STDERR_FILENO, "\n", 1);
    abort();
}

static long futex(uint32_t *word, int operation) { return syscall(SYS_futex, word, operation, 0, NULL, NULL, 0); }

void os_unfair_lock_lock(os_unfair_lock_t lock) {
    uint32_t self = thread_id();
    uint32_t expected = 0;
    if (__atomic_compare_exchange_n(&lock->_os_unfair_lock_opaque, &expected, self, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
        return;
    }
    if ((expected & FUTEX_TID_MASK) == self) crash("Trying to recursively lock an os_unfair_lock");
    // Held: the kernel queues this thread and makes it the owner when the lock is handed over.
    while (futex(&lock->_os_unfair_lock_opaque, FUTEX_LOCK_PI_PRIVATE) != 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        if (errno == EDEADLK) crash("Trying to recursively lock an os_unfair_lock");
        crash("os_unfair_lock is corrupt");
    }
}

bool os_unfair_lock_trylock(os_unfair_lock_t lock) {
    uint32_t expected = 0;
    return __atomic_compare_exchange_n(&lock->_os_unfair_lock_opaque, &expected, thread_id(), false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void os_unfair_lock_unlock(os_unfair_lock_t lock) {
    uint32_t self = thread_id();
    uint32_t current = __atomic_load_n(&lock->_os_unfair_lock_opaque, __ATOMIC_RELAXED);
    if ((current & FUTEX_TID_MASK) != self) crash("Unlock of an os_unfair_lock not owned by current thread");
    uint32_t expected = self;
    if (__atomic_compare_exchange_n(&lock->_os_unfair_lock_opaque, &expected, 0, false, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED)) {
        return;
    }
    // Waiters: the kernel hands the lock to the first.
    while (futex(&lock->_os_unfair_lock_opaque, FUTEX_UNLOCK_PI_PRIVATE) != 0) {
        if (errno != EINTR) crash("os_unfair_lock is corrupt");
    }
}

void os_unfair_lock_assert_owner(const os_unfair_lock *lock) {
    uint32_t current = __atomic_load_n(&lock->_os_unfair_lock_opaque, __ATOMIC_RELAXED);
    if ((current & FUTEX_TID_MASK) != thread_id()) {
        crash("Assertion failed: Lock unexpectedly not owned by current thread");
    }
}

void os_unfair_lock_assert_not_owner(const os_unfair_lock *lock) {
    uint32_t current = __atomic_load_n(&lock->_os_unfair_lock_opaque, __ATOMIC_RELAXED);
    if ((current & FUTEX_TID_MASK) == thread_id()) crash("Assertion failed: Lock unexpectedly owned by current thread");
}
