#ifndef NSE_CCONCURRENCYHOOK_SHIM_H
#define NSE_CCONCURRENCYHOOK_SHIM_H

// The Swift runtime's hook for a job enqueued on the global executor (declared in the runtime's
// swift/Runtime/Concurrency.h as a pointer to a swiftcall function taking the job and the original
// implementation). When set, every job for the global executor goes to it instead of the cooperative pool.
// Declared here as an untyped pointer: Swift assigns it a `@convention(thin)` function of that shape.
extern void *_Nullable swift_task_enqueueGlobal_hook;

/// The hook set now (NULL: jobs go to the cooperative pool).
static inline void *_Nullable nse_enqueue_global_hook(void) { return swift_task_enqueueGlobal_hook; }

/// Sets the hook; only before the first job is enqueued.
static inline void nse_set_enqueue_global_hook(void *_Nullable hook) { swift_task_enqueueGlobal_hook = hook; }

#endif
