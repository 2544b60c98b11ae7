#!/usr/bin/env python3
"""Check that a binding's build reuses what `cargo test --workspace` builds.

Cargo resolves features per command: `maturin develop` or `napi build` build one package, and a
dependency whose features differ from the workspace build's (serde with or without `rc`, say) is
compiled again, with everything above it: tract and the core twice over, minutes of CPU and
gigabytes of target/. This script asks cargo for both unit graphs (`--unit-graph`, no compiling)
and lists every unit of the binding's build that the workspace build does not have.

usage: scripts/shared-units.py PACKAGE [CARGO ARGS...]   (`cargo build -p PACKAGE --lib ARGS`)
       scripts/shared-units.py -- CARGO COMMAND...         (that command: `test --doc -p wikidex`)
exit 1 when a unit is not shared. A command's doc tests are its own and not compared (rustdoc
compiles them; they are not units another build could share).
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
    if sys.argv[1] == "--":
        command = sys.argv[2:]
        label = "cargo " + " ".join(command)
    else:
        package, extra = sys.argv[1], sys.argv[2:]
        command = ["build", "-p", package, "--lib", *extra]
        label = package
    workspace = units(["test", "--workspace", "--all-targets", "--no-run"])
    own = units(command)
    rebuilt = sorted({key for key, name in own.items()
                      if key not in workspace and name.split("@")[0] not in OWN
                      and key[2] != "doctest"})
    for name, target, mode, features, _, _ in rebuilt:
        print(f"rebuilt for {label}: {name} {target} ({mode}) features={list(features)}")
    if rebuilt:
        print(f"{len(rebuilt)} of {len(own)} units of {label} differ from the "
              "workspace build: give the command the workspace's features (see CONTRIBUTING.md)")
        return 1
    print(f"{label}: all {len(own)} units shared with the workspace build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
