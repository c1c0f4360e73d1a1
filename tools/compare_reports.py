#!/usr/bin/env python3
"""Whether two ibnetsim JSON reports say the same, their performance fields aside (wall time, events/s, peak RSS):
what a change meant to be faster, not different, must keep. With --events, the kernel's event and wake-up counts
are set aside too (a change that saves events keeps every other figure).

usage: compare_reports.py [--events] OLD.json NEW.json
exit 0: the same; 1: different (the first differing place is printed as a JSON pointer); 2: bad arguments or input.
"""
import json
import sys

PERFORMANCE = {"performance", "wall_s", "peak_rss_bytes", "events_per_s", "wall_seconds"}
EVENTS = {"kernel_events_dispatched", "program_wakeups"}


def first_difference(a, b, skip, where=""):
    """The JSON pointer of the first place where a and b differ, keys in skip left out; None if they do not."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys_a = [k for k in a if k not in skip]
        keys_b = [k for k in b if k not in skip]
        if keys_a != keys_b:
            return where + " (keys differ)"
        for k in keys_a:
            found = first_difference(a[k], b[k], skip, f"{where}/{k}")
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return where + " (lengths differ)"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, skip, f"{where}/{i}")
            if found is not None:
                return found
        return None
    return None if a == b and type(a) is type(b) else where or "/"


def main(argv):
    args = argv[1:]
    skip = set(PERFORMANCE)
    if args and args[0] == "--events":
        skip |= EVENTS
        args = args[1:]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    reports = []
    for path in args:
        try:
            with open(path) as f:
                reports.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"compare_reports.py: {path}: expected an ibnetsim JSON report ({e})", file=sys.stderr)
            return 2
    where = first_difference(reports[0], reports[1], skip)
    if where is None:
        return 0
    print(f"compare_reports.py: {args[0]} and {args[1]} differ at {where}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
