#!/usr/bin/env bash
# The cargo that `make node`'s `napi build` runs (napi spawns $CARGO). napi always passes
# `--target <triple>`, and cargo builds a target given by name into target/<triple>/, apart
# from the units `cargo test --workspace` built in target/debug/: a cold `make test` compiled
# the core's dependency tree twice. For this machine's own triple this drops the flag, so the
# build shares those units, then links the addon's library (libwikidex_node.so) to
# target/<triple>/<profile>/, where napi copies it from (only it: in make test, maturin may be
# linking the Python module's library beside it). Any other target passes through unchanged.
set -euo pipefail

cargo=${NAPI_REAL_CARGO:-cargo}
host=$(rustc -vV | sed -n 's/^host: //p')
args=()
profile=debug
dropped=
while [ $# -gt 0 ]; do
	case $1 in
	--target)
		if [ "${2:-}" = "$host" ]; then dropped=1; shift 2; continue; fi ;;
	--target=*)
		if [ "${1#--target=}" = "$host" ]; then dropped=1; shift; continue; fi ;;
	--release) profile=release ;;
	--profile) profile=${2:-}; [ "$profile" = dev ] && profile=debug ;;
	esac
	args+=("$1")
	shift
done

"$cargo" "${args[@]}"

if [ -n "$dropped" ]; then
	target_dir=${CARGO_TARGET_DIR:-$(cd "$(dirname "$0")/.." && pwd)/target}
	mkdir -p "$target_dir/$host/$profile"
	ln -f "$target_dir/$profile/libwikidex_node.so" "$target_dir/$host/$profile/"
fi
