#ifndef NSE_CJANSSON_SHIM_H
#define NSE_CJANSSON_SHIM_H
#include <jansson.h>

/* Typed wrappers for jansson's macros and inline helpers that Swift cannot call directly. */
static inline int nse_json_typeof(const json_t *value) { return (int)json_typeof(value); }
static inline void nse_json_decref(json_t *value) { json_decref(value); }
#endif
