#ifndef NSE_CSODIUM_SHIM_H
#define NSE_CSODIUM_SHIM_H
#include <sodium.h>
#endif
