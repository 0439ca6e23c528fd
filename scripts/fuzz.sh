#!/usr/bin/env bash
# make fuzz: builds the libFuzzer driver (Fuzz/, address sanitizer) and runs each target for FUZZ_SECONDS on its
# seed corpus. Fails when a target crashes, traps, hangs or breaks an invariant, and prints the reproducer's path.
# See docs/fuzzing.md.
set -uo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
REQUESTED="${FUZZ_TARGETS:-all}"
SCRATCH=.build-fuzz
ALL="payload-intake sip-datagram sip-stream envelope envelope-multi cpim conference extension-protocol apns-request media replay-case"
SWIFT="${SWIFT:-swift}"

if [ "$REQUESTED" = all ]; then TARGETS="$ALL"; else TARGETS="${REQUESTED//,/ }"; fi
for target in $TARGETS; do
    case " $ALL " in *" $target "*) ;; *) echo "fuzz: unknown target '$target' (targets: $ALL)" >&2; exit 64 ;; esac
done

# The driver resolves the main package's dependencies at the versions the main package pinned.
cp Package.resolved Fuzz/Package.resolved
BUILD=(-c release --package-path Fuzz --scratch-path "$SCRATCH" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
started=$(date +%s)
if ! nice -n 10 "$SWIFT" build "${BUILD[@]}"; then echo "fuzz: the driver did not build" >&2; exit 1; fi
echo "fuzz: driver built in $(( $(date +%s) - started )) s"
DRIVER="$("$SWIFT" build "${BUILD[@]}" --show-bin-path)/nse-fuzz"

failed=()
for target in $TARGETS; do
    corpus="$SCRATCH/corpus/$target"
    artifacts="$SCRATCH/artifacts/$target/"
    log="$SCRATCH/logs/$target.log"
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    # New inputs go to the work corpus (first folder); the committed seeds and crashers are only read.
    inputs=("$corpus" "fixtures/fuzz/$target")
    [ -d "fixtures/fuzz/$target/crashers" ] && inputs+=("fixtures/fuzz/$target/crashers")
    marker="$SCRATCH/logs/$target.started"
    touch "$marker"
    # Swift's own crash backtracer would race AddressSanitizer's report: libFuzzer and ASan report crashes here.
    SWIFT_BACKTRACE=enable=no NSE_FUZZ_TARGET="$target" nice -n 10 "$DRIVER" -max_total_time="$SECONDS_PER_TARGET" -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts" "${inputs[@]}" > "$log" 2>&1
    status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    units=$(find "$corpus" -type f | wc -l)
    printf 'fuzz: %-19s %9s execs/s %12s execs  corpus %5s  ' "$target" "${rate:-?}" "${execs:-?}" "$units"
    # libFuzzer writes crash-/timeout-/oom-/leak-<sha1> under the artifact prefix.
    reproducer=$(find "$artifacts" -type f -newer "$marker" | head -1)
    if [ "$status" -ne 0 ] || [ -n "$reproducer" ]; then
        echo "FAILED (exit $status)"
        grep -m1 -E 'nse-fuzz: invariant broken|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|Fatal error|SUMMARY' "$log" | sed 's/^/    /'
        echo "    reproducer: ${reproducer:-none written} (log: $log)"
        echo "    replay: NSE_FUZZ_TARGET=$target $DRIVER ${reproducer:-<file>}"
        failed+=("$target")
    else
        echo "ok"
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}. Fix the parser, then copy the reproducer into" \
        "fixtures/fuzz/<target>/crashers/ so FuzzRegressionTests replays it." >&2
    exit 1
fi
echo "fuzz: ${TARGETS// /, }: no crash in ${SECONDS_PER_TARGET} s each"
