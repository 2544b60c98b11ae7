#!/usr/bin/env python3
"""Check that a binding's build reuses what `cargo test --workspace` builds.

Cargo resolves features per command: `maturin develop` or `napi build` build one package, and a
dependency whose features differ from the workspace build's (serde with or without `rc`, say) is
compiled again, with everything above it: tract and the core twice over, minutes of CPU and
gigabytes of target/. This script asks cargo for both unit graphs (`--unit-graph`, no compiling)
and lists every unit of the binding's build that the workspace build does not have.

usage: scripts/shared-units.py PACKAGE [CARGO ARGS...]   (exit 1 when a unit is not shared)
"""
import json
import os
import subprocess
import sys

# Units the binding builds on purpose, outside the workspace build: the binding itself and
# pyo3's crates, which read the environment maturin sets (PYO3_BUILD_EXTENSION_MODULE).
OWN = {"wikidex-py", "wikidex-node", "pyo3", "pyo3-ffi", "pyo3-build-config", "pyo3-macros",
       "pyo3-macros-backend"}


def units(args):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    out = subprocess.run(["cargo", *args, "-Z", "unstable-options", "--unit-graph"],
                         env=env, check=True, capture_output=True, text=True).stdout
    found = {}
    for u in json.loads(out)["units"]:
        profile = dict(u["profile"])
        profile.pop("name")  # cargo leaves the profile's name out of a unit's hash
        name = u["pkg_id"].split("#")[-1]
        key = (name, u["target"]["name"], u["mode"], tuple(sorted(u["features"])),
               json.dumps(profile, sort_keys=True), u.get("platform"))
        found[key] = name
    return found


def main():
    package, extra = sys.argv[1], sys.argv[2:]
    workspace = units(["test", "--workspace", "--all-targets", "--no-run"])
    binding = units(["build", "-p", package, "--lib", *extra])
    rebuilt = sorted({key for key, name in binding.items()
                      if key not in workspace and name.split("@")[0] not in OWN})
    for name, target, mode, features, _, _ in rebuilt:
        print(f"rebuilt for {package}: {name} {target} ({mode}) features={list(features)}")
    if rebuilt:
        print(f"{len(rebuilt)} of {len(binding)} units of {package}'s build differ from the "
              "workspace build: give the package the workspace's features (see CONTRIBUTING.md)")
        return 1
    print(f"{package}: all {len(binding)} units shared with the workspace build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
