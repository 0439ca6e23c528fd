#ifndef NSE_CMALLOCTUNING_SHIM_H
#define NSE_CMALLOCTUNING_SHIM_H

#include <malloc.h>

/// glibc's threshold of free memory at the top of the main heap past which `free` gives it back (M_TRIM_THRESHOLD);
/// 0 on success, as `mallopt` returns 1 on success.
static inline int nse_set_trim_threshold(int bytes) { return mallopt(M_TRIM_THRESHOLD, bytes) == 1 ? 0 : -1; }

#endif
