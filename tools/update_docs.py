#!/usr/bin/env python3
"""Regenerate the sample outputs in README.md and docs/**/*.md from the program itself.

A generated block is an HTML comment directly followed by a fenced code block:

    <!-- generated: ibnetsim run scenarios/default.json
         mask: [0-9.]+ M events/s
         exit: 0 -->
    ```
    ...output, rewritten by this script...
    ```

Keys of the comment, one per line:
  generated: CMD   the command, run by /bin/sh with cwd = the repository root (stdout and stderr together; the
                   absolute paths of the repository and of the binary's data directory are removed from the output). Every word `ibnetsim` (or
                   `build/release/bin/ibnetsim`) is replaced by the binary given with --binary. $OUT names a fresh
                   temporary directory for commands that write files; the source tree must never be written.
  mask: REGEX      (repeatable) text that varies from run to run; `--check` compares blocks with every match of
                   it (or of its first group) replaced by `*`. Wall-clock figures of the run table (wall time,
                   events/s, peak RSS) and progress lines are masked always.
  exit: N          the exit code the command must give (default 0).
  prompt: no       leave out the `$ CMD` line the block otherwise starts with.

Usage: tools/update_docs.py --binary PATH [--check | --refresh] [FILE.md...]
  without --check: rewrites stale blocks in place (the files are the only thing written); --refresh also rewrites
                   blocks whose masked figures alone changed.
  --check:         writes nothing; exit 1 and a diff when any block is stale, 2 on a bad block or command.
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 60  # per command; sanitizer builds on a loaded machine are slow

# Wall-clock figures, masked in every block: they differ between runs of the same build.
ALWAYS_MASK = [
    r"in ([0-9.]+ s) wall",
    r"([0-9.]+ [kM]? ?events/s)",
    r"peak RSS ([0-9.]+ [KMG]iB)",
    r"wall time[^0-9\n]*([0-9.]+ ?m?s)",
]
PROGRESS = re.compile(r"\r?\[ibnetsim\] simulated[^\n]*\n?")
MARKER = re.compile(r"<!--\s*generated:(.*?)-->", re.S)
FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*$", re.M)
IBNETSIM_WORD = re.compile(r"(?<![\w./-])(?:build/release/bin/)?ibnetsim(?![\w.-])")


class BlockError(Exception):
    pass


def parse_marker(body, where):
    lines = [line.strip() for line in body.strip().splitlines()]
    spec = {"command": lines[0].strip(), "masks": [], "exit": 0, "prompt": True}
    if not spec["command"]:
        raise BlockError(f"{where}: 'generated:' needs a command")
    for line in lines[1:]:
        if not line:
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            raise BlockError(f"{where}: expected 'key: value', got {line!r}")
        if key == "mask":
            try:
                re.compile(value)
            except re.error as e:
                raise BlockError(f"{where}: bad mask {value!r}: {e}")
            spec["masks"].append(value)
        elif key == "exit":
            spec["exit"] = int(value)
        elif key == "prompt":
            spec["prompt"] = value not in ("no", "false", "0")
        else:
            raise BlockError(f"{where}: unknown key {key!r} (generated, mask, exit, prompt)")
    return spec


def fenced_regions(text):
    """(start, end) offsets of the fenced code blocks of a Markdown text, so that markers shown inside one are
    left alone."""
    regions, fence, start, pos = [], None, 0, 0
    for line in text.splitlines(True):
        stripped = line.strip()
        if fence is None:
            m = re.match(r"(`{3,}|~{3,})", stripped)
            if m:
                fence, start = m.group(1), pos
        elif stripped.startswith(fence) and stripped == fence[0] * len(stripped):
            regions.append((start, pos + len(line)))
            fence = None
        pos += len(line)
    if fence is not None:
        regions.append((start, pos))
    return regions


def find_blocks(text, path):
    """Yields (spec, where, content_start, content_end) for each generated block of a file."""
    regions = fenced_regions(text)
    for m in MARKER.finditer(text):
        if any(start <= m.start() < end for start, end in regions):
            continue
        line_no = text.count("\n", 0, m.start()) + 1
        where = f"{os.path.relpath(path, ROOT)}:{line_no}"
        spec = parse_marker(m.group(1), where)
        rest = text[m.end():]
        if not rest.startswith("\n"):
            raise BlockError(f"{where}: the comment must end its line")
        open_fence = FENCE.match(rest, 1)
        if not open_fence:
            raise BlockError(f"{where}: a fenced code block must follow the comment directly")
        fence = open_fence.group(1)
        start = m.end() + open_fence.end() + 1
        close = re.compile(r"^" + re.escape(fence) + r"\s*$", re.M).search(text, start)
        if not close:
            raise BlockError(f"{where}: the code block is not closed")
        yield spec, where, start, close.start()


def data_dirs(binary):
    """Where the binary may read its data: an installed or staged share/ibnetsim, IBNETSIM_DATA_DIR, the sources."""
    dirs = [os.path.normpath(os.path.join(os.path.dirname(binary), "..", "share", "ibnetsim"))]
    if os.environ.get("IBNETSIM_DATA_DIR"):
        dirs.append(os.path.normpath(os.path.abspath(os.environ["IBNETSIM_DATA_DIR"])))
    return dirs + [ROOT]


def run(spec, binary, where, cache):
    command = spec["command"]
    if command in cache:
        return cache[command]
    with tempfile.TemporaryDirectory(prefix="ibnetsim-docs-") as out:
        shell_command = IBNETSIM_WORD.sub(lambda _: binary, command)
        env = dict(os.environ, OUT=out, LC_ALL="C", COLUMNS="120")
        try:
            proc = subprocess.run(["/bin/sh", "-c", shell_command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BlockError(f"{where}: `{command}` took more than {TIMEOUT_S} s")
        text = proc.stdout.decode("utf-8", "replace")
        text = PROGRESS.sub("", text).replace(out, "$OUT").replace(binary, "ibnetsim")
        # Paths of data files print relative to where the data lives, whichever build or install runs.
        for data_dir in data_dirs(binary):
            text = text.replace(data_dir + "/", "")
    if proc.returncode != spec["exit"]:
        raise BlockError(f"{where}: `{command}` exited {proc.returncode}, expected {spec['exit']}:\n{text}")
    lines = [line.rstrip() for line in text.rstrip("\n").splitlines()]
    if spec["prompt"]:
        lines.insert(0, "$ " + command)
    result = "\n".join(lines) + "\n"
    cache[command] = result
    return result


def masked(text, masks):
    def star(m):
        if m.groups() and m.group(1) is not None:
            return m.group(0)[: m.start(1) - m.start(0)] + "*" + m.group(0)[m.end(1) - m.start(0):]
        return "*"

    for mask in ALWAYS_MASK + masks:
        text = re.sub(mask, star, text)
    return text


def markdown_files(args):
    if args:
        return [os.path.abspath(a) for a in args]
    files = [os.path.join(ROOT, "README.md")]
    for directory, _, names in os.walk(os.path.join(ROOT, "docs")):
        files += [os.path.join(directory, n) for n in sorted(names) if n.endswith(".md")]
    return sorted(files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True, help="the ibnetsim executable to run")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 and show a diff when stale")
    parser.add_argument("--refresh", action="store_true",
                        help="also rewrite blocks that differ only in masked text (fresh wall-clock figures)")
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        print(f"update_docs: {args.binary}: not an executable", file=sys.stderr)
        return 2

    cache, stale, blocks, total_rewritten = {}, 0, 0, 0
    try:
        for path in markdown_files(args.files):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            pieces, pos, rewritten = [], 0, 0
            for spec, where, start, end in list(find_blocks(text, path)):
                blocks += 1
                current, fresh = text[start:end], run(spec, binary, where, cache)
                current_masked, fresh_masked = masked(current, spec["masks"]), masked(fresh, spec["masks"])
                if current_masked != fresh_masked or (args.refresh and not args.check and current != fresh):
                    stale += current_masked != fresh_masked
                    if args.check:  # masked text differs only where it matters
                        diff = difflib.unified_diff(current_masked.splitlines(True), fresh_masked.splitlines(True),
                                                    f"{where} (in the file)", f"{where} (generated, masked)")
                        sys.stdout.writelines(diff)
                    pieces += [text[pos:start], fresh]
                    pos, rewritten = end, rewritten + 1
            total_rewritten += rewritten
            if not args.check and rewritten:
                pieces.append(text[pos:])
                with open(path, "w", encoding="utf-8") as f:
                    f.write("".join(pieces))
    except BlockError as e:
        print(f"update_docs: {e}", file=sys.stderr)
        return 2

    if args.check:
        if stale:
            print(f"update_docs: {stale} of {blocks} generated blocks are stale; "
                  f"run tools/update_docs.py --binary {args.binary}", file=sys.stderr)
            return 1
        print(f"update_docs: {blocks} generated blocks are current")
        return 0
    print(f"update_docs: {total_rewritten} of {blocks} generated blocks rewritten ({stale} were stale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
