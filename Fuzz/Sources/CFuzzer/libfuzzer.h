// libFuzzer's driver entry point (compiler-rt, linked by -sanitize=fuzzer): runs the fuzzing loop with argv's
// options on the given callback. See https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
