#!/usr/bin/env python3
"""Layers run one way (docs/development.md, "Layers"): every #include "..." of the project's C++ must point at the file's own folder or
at a folder its layer may use. LAYERS is the architecture; a new folder must be placed in it before it can build
into a passing test suite. Usage: check_layers.py REPO_ROOT [--print]"""
import pathlib
import re
import sys

# Folder -> the folders it may include (besides itself). Listed bottom-up: each may use only folders above it here.
LAYERS = {
    "sim": [],
    "models/link": ["sim"],
    "models/pcie": ["sim"],
    "models/phold": ["sim"],
    "models/switch": ["models/link", "sim"],
    "models/hca": ["models/pcie", "models/link", "sim"],
    "models/endpoint": ["models/link", "sim"],
    "models/topology": ["models/switch", "models/hca", "models/link", "sim"],
    "models/sm": ["models/topology", "models/link", "sim"],
    "models/fabric": ["models/sm", "models/topology", "models/switch", "models/hca", "models/link", "sim"],
    "models/host": ["models/fabric", "models/endpoint", "models/sm", "models/topology", "models/hca", "models/pcie", "models/link", "sim"],
    "models/scenario": ["models/host", "models/endpoint", "models/fabric", "models/sm", "models/topology", "models/hca",
                        "models/switch", "models/pcie", "models/link", "models/phold", "sim"],
    "tools/ibnetsim": ["models/scenario", "models/host", "models/endpoint", "models/fabric", "models/sm", "models/topology",
                       "models/hca", "models/switch", "models/pcie", "models/link", "models/phold", "sim"],
    # The Python module: a face of the runner beside the CLI, not above it.
    "tools/python": ["models/scenario", "sim"],
}
SOURCES = ("sim", "models", "tools")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def folder_of(path: str):
    """The layer a repository-relative path belongs to: the longest LAYERS key it starts with."""
    best = None
    for folder in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    if "--print" in sys.argv:
        for folder, allowed in LAYERS.items():
            print(f"{folder}: {', '.join(allowed) if allowed else '(nothing of the project)'}")
        return 0
    problems = []
    files = 0
    for top in SOURCES:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".h", ".cpp") or not path.is_file():
                continue
            relative = path.relative_to(root).as_posix()
            own = folder_of(relative)
            if own is None:
                problems.append(f"{relative}: in no layer (add its folder to LAYERS in {sys.argv[0]})")
                continue
            files += 1
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = folder_of(match.group(1))
                if target is None and match.group(1).split("/")[0] in SOURCES:
                    problems.append(f"{relative}:{number}: includes {match.group(1)}, in no layer")
                    continue
                if target is None or target == own or target in LAYERS[own]:
                    continue
                problems.append(f"{relative}:{number}: {own} includes {match.group(1)} ({target}), "
                                f"a layer it may not use; it may use: {', '.join(LAYERS[own]) or 'nothing'}")
    for problem in problems:
        print(problem)
    if files == 0:
        print(f"no sources found under {root}")
        return 1
    print(f"{files} files checked, {len(problems)} include(s) against the layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
