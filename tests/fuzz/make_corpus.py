#!/usr/bin/env python3
"""Builds the fuzz harnesses' seed corpora and JSON dictionary from the shipped files (docs/testing.md, "Fuzzing").
Nothing here is committed: the seeds are the repository's own inputs, copied into OUT_DIR/<harness>/ under names
made from their paths (a rerun overwrites them and keeps what the fuzzers added), and OUT_DIR/json.dict holds every
object key and short name of the shipped JSON files and schemas, as JSON strings quoted for libFuzzer's -dict.
Usage: make_corpus.py REPO_ROOT OUT_DIR"""
import json
import pathlib
import sys


def seed_name(root: pathlib.Path, path: pathlib.Path, suffix: str = "") -> str:
    return "seed-" + path.relative_to(root).as_posix().replace("/", "_") + suffix


# Keys whose string values are names a loader chooses among (schema enums, profiles, engines, workload types).
NAME_KEYS = {"enum", "const", "type", "kind", "model", "profile", "switch_profile", "hca_profile", "cable", "routing",
             "width", "speed", "host_cable", "switch_cable", "pcie_link", "host", "op", "pattern", "algorithm"}


def walk(value, found: set, key: str = ""):
    """Every object key of a JSON document, and the string values under NAME_KEYS."""
    if isinstance(value, dict):
        for k, item in value.items():
            found.add(k)
            walk(item, found, k)
    elif isinstance(value, list):
        for item in value:
            walk(item, found, key)
    elif isinstance(value, str) and key in NAME_KEYS:
        found.add(value)


def dict_entry(token: str) -> str:
    out = ""
    for byte in token.encode("utf-8"):
        c = chr(byte)
        out += "\\" + c if c in '"\\' else c if 32 <= byte < 127 else f"\\x{byte:02x}"
    return f'"{out}"'


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, out = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2])
    seeds = {name: {} for name in ("scenario", "sweep", "topology", "profile", "ibnetdiscover", "opensm_dump", "guid2lid")}

    def add(harness: str, path: pathlib.Path):
        seeds[harness][seed_name(root, path)] = path.read_bytes()

    scenario_files = sorted(root.glob("scenarios/*.json")) + sorted(root.glob("scenarios/bench/*.json"))
    scenario_files += sorted(root.glob("scenarios/experiments/*.json")) + sorted(root.glob("tests/scenario/data/*.json"))
    for path in scenario_files:
        add("sweep" if path.name.endswith(".sweep.json") else "scenario", path)
        document = json.loads(path.read_text(encoding="utf-8"))
        # A scenario's inline topology is a topology file of its own.
        if isinstance(document.get("topology"), dict):
            seeds["topology"][seed_name(root, path, "-topology")] = json.dumps(document["topology"]).encode()
    for path in sorted(root.glob("tests/scenario/data/*/sweep.json")):
        add("sweep", path)
    for path in sorted(root.glob("topologies/examples/*.json")):
        add("topology", path)
    for path in sorted(root.glob("topologies/hardware/*.json")):
        add("profile", path)
    for path in sorted(root.glob("tools/opensm/netfiles/*.net")) + sorted(root.glob("tools/opensm/golden/*/ibnetdiscover.txt")):
        add("ibnetdiscover", path)
    # Hand-written live-fabric fixtures (mlx5 GUIDs, -g headers, dual-port CAs, a ports report) and side files.
    for path in sorted(root.glob("tests/unit/topology/data/*")):
        add("ibnetdiscover", path)
    for pattern in ("tools/opensm/golden/*/opensm-lfts.dump", "tools/opensm/golden/*/dump_lfts.txt"):
        for path in sorted(root.glob(pattern)):
            add("opensm_dump", path)
    for path in sorted(root.glob("tools/opensm/golden/*/guid2lid")):
        add("guid2lid", path)

    for harness, files in seeds.items():
        directory = out / harness
        directory.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (directory / name).write_bytes(content)

    tokens = set()
    for pattern in ("scenarios/**/*.json", "topologies/**/*.json", "tests/scenario/data/**/*.json"):
        for path in root.glob(pattern):
            walk(json.loads(path.read_text(encoding="utf-8")), tokens)
    # Keys and names, quoted as JSON strings; not the schemas' own references and prose.
    tokens = sorted(json.dumps(t) for t in tokens if t and " " not in t and not t.startswith(("#", "$")) and len(t) <= 40)
    tokens += ["{", "}", "[", "]", ":", ",", "true", "false", "null", "0", "-1", "0.5", "1e3", "18446744073709551615"]
    (out / "json.dict").write_text("".join(dict_entry(t) + "\n" for t in tokens), encoding="utf-8")
    print(f"make_corpus: {', '.join(f'{h} {len(f)}' for h, f in seeds.items())} seeds; json.dict {len(tokens)} "
          f"tokens; in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
