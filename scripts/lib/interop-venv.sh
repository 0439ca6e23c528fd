# Sourced by the interop scripts: one venv per PyPI library, pinned, made the first time and reused while the
# pinned version is there. Needs `die` from the caller.
#   venv_ensure VENV DISTRIBUTION VERSION MODULES   (MODULES: comma-separated, each must import)

venv_ready() {  # venv, distribution, version, modules
  [ -x "$1/bin/python" ] && "$1/bin/python" - "$2" "$3" "$4" <<'PY' 2>/dev/null
import importlib, sys
from importlib.metadata import version
for module in sys.argv[3].split(","):
    importlib.import_module(module)
sys.exit(0 if version(sys.argv[1]) == sys.argv[2] else 1)
PY
}

venv_ensure() {  # venv, distribution, version, modules
  local venv="$1" dist="$2" ver="$3" modules="$4" log
  venv_ready "$venv" "$dist" "$ver" "$modules" && return 0
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -c 'import venv, ensurepip' 2>/dev/null \
    || die "python3 ($(command -v python3)) cannot create a venv: venv/ensurepip missing (Debian: apt-get install python3-venv)"
  log=$(python3 -m venv "$venv" 2>&1) || { rm -rf "$venv"; die "python3 -m venv $venv failed: $(echo "$log" | tail -1)"; }
  echo "${0##*/}: installing $dist==$ver into $venv" >&2
  if ! log=$(timeout 600 "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --timeout 60 \
      "$dist==$ver" 2>&1); then
    rm -rf "$venv"
    die "pip install $dist==$ver failed (PyPI reachable?): $(echo "$log" | tail -1)"
  fi
  venv_ready "$venv" "$dist" "$ver" "$modules" || { rm -rf "$venv"; die "$dist==$ver installed but $modules do not import"; }
}
