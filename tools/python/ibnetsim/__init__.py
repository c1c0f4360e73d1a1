"""ibnetsim from Python: run scenarios, sweep their parameters, and get the results as tidy data.

    import ibnetsim
    report = ibnetsim.run(ibnetsim.data_path("scenarios/default.json"))
    report["results"]["workloads"]["ib_write_lat"]["results"][0]["t_typical_us"]
    ibnetsim.metrics(report)["all_to_all.aggregate_gbps"]
    df = ibnetsim.sweep(ibnetsim.data_path("scenarios/experiments/write_lat.json"),
                        {"/workloads/0/size_bytes": [2, 64, 4096]}, seeds=[1, 2])

A report is the JSON document `ibnetsim run --format json` prints, as Python objects, equal to it. Metric names are
the CLI's everywhere (docs/user-guide.md, "Metrics"). The user's guide for this module is docs/python.md.
"""

import itertools
import json
import os
import sys
import warnings

from . import _core, _paths

__all__ = ["run", "validate", "sweep", "metrics", "long", "data_dir", "data_path", "Error", "InputError",
           "InvariantViolation", "RunError", "SweepError"]
__version__ = _core.version

_INPUT_ERROR = 2
_INVARIANT = 3
_INTERRUPTED = 130


class Error(Exception):
    """Anything ibnetsim refuses or fails to do."""


class InputError(Error, ValueError):
    """Bad input, as the CLI's exit 2: the file (or "<dict>", or "--set"), the JSON pointer, what was expected, what
    was found."""

    def __init__(self, message, file="", pointer="", expected="", got=""):
        super().__init__(message)
        self.file, self.pointer, self.expected, self.got = file, pointer, expected, got


class InvariantViolation(Error):
    """A model invariant broke during the run, as the CLI's exit 3: its stable id, the component and its state."""

    def __init__(self, message, id="", component="", detail="", state=""):
        super().__init__(message)
        self.id, self.component, self.detail, self.state = id, component, detail, state


class RunError(Error):
    """A run failed for another reason (the CLI's exit 1)."""


class SweepError(Error):
    """Points of a sweep failed. `failures` lists them (point, the swept values, the error); `results` holds the
    DataFrame of the points that succeeded, so that nothing finished is lost."""

    def __init__(self, message, failures, results):
        super().__init__(message)
        self.failures, self.results = failures, results


def _error(status, payload):
    """The exception for a (status, payload) the core returned."""
    text = payload.decode() if isinstance(payload, bytes) else payload
    try:
        detail = json.loads(text)
    except ValueError:
        detail = {"message": text}
    message = detail.get("message", text)
    if status == _INPUT_ERROR:
        return InputError(message, detail.get("file", ""), detail.get("pointer", ""), detail.get("expected", ""),
                          detail.get("got", ""))
    if status == _INVARIANT:
        return InvariantViolation(message, detail.get("id", ""), detail.get("component", ""),
                                  detail.get("detail", ""), detail.get("state", ""))
    if status == _INTERRUPTED:
        return KeyboardInterrupt()
    return RunError(message)


def _init_data_dir():
    # The environment variable wins, as for the CLI; else the data installed (or staged in the build) beside us.
    if not os.environ.get("IBNETSIM_DATA_DIR"):
        _core.set_data_directory(os.path.normpath(os.path.join(os.path.dirname(__file__), _paths.DATA_DIR)))


_init_data_dir()


def data_dir():
    """The data directory in use: hardware profiles (topologies/hardware), example topologies, the shipped scenarios
    and experiments. IBNETSIM_DATA_DIR overrides it, as for the CLI."""
    status, payload = _core.data_directory()
    if status != 0:
        raise _error(status, payload)
    return payload


def data_path(*parts):
    """A file of the data directory: data_path("scenarios/default.json"), data_path("scenarios", "default.json")."""
    return os.path.join(data_dir(), *parts)


def _overrides(set):
    """`set` as the CLI's --set assignments: a dict {"/json/pointer": value} (values are JSON: numbers, strings,
    lists, dicts), or a list of "/json/pointer=value" strings."""
    if set is None:
        return []
    if isinstance(set, dict):
        out = []
        for pointer, value in set.items():
            if not isinstance(pointer, str) or not pointer.startswith("/") or "=" in pointer:
                raise InputError(f"set: expected a JSON pointer (\"/a/b\", without '='), got {pointer!r}", "set",
                                 "", "a JSON pointer", repr(pointer))
            out.append(f"{pointer}={json.dumps(value)}")
        return out
    if isinstance(set, (list, tuple)) and all(isinstance(s, str) for s in set):
        return list(set)
    raise TypeError("set: expected a dict {\"/json/pointer\": value} or a list of \"/json/pointer=value\" strings")


def _source(scenario, base_dir):
    """(text or path, is_text, label) for a scenario file or dict. A dict's relative paths (its topology) are taken
    from `base_dir`, or the working directory."""
    if isinstance(scenario, dict):
        label = "<dict>" if base_dir is None else os.path.join(os.fspath(base_dir), "<dict>")
        return json.dumps(scenario), True, label
    if isinstance(scenario, (str, os.PathLike)):
        if base_dir is not None:
            raise TypeError("base_dir is for a scenario given as a dict; a file's paths are from its own directory")
        return os.fspath(scenario), False, os.fspath(scenario)
    raise TypeError(f"scenario: expected a file path or a dict, got {type(scenario).__name__}")


def _seed(seed):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise InputError(f"seed: expected an integer in [0, 2^64), got {seed!r}", "seed", "",
                         "an integer in [0, 2^64)", repr(seed))
    return seed


def _memory(max_memory):
    if max_memory is None:
        return None
    if isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory <= 0:
        raise InputError(f"max_memory: expected a number of bytes above 0, got {max_memory!r}", "max_memory", "",
                         "a number of bytes above 0", repr(max_memory))
    return max_memory


def run(scenario, set=None, seed=None, *, base_dir=None, max_memory=None, trace=None):
    """Runs a scenario (a file path, or the scenario itself as a dict) and returns its report as Python objects.

    set: overrides, {"/json/pointer": value} or ["/json/pointer=value", ...], applied in order as --set does.
    seed: the scenario's seed, replaced. max_memory: the memory budget in bytes (default: the machine's available
    memory). trace: a file to write the run's timeline to (Chrome trace-event JSON, for Perfetto).
    Raises InputError (bad input), InvariantViolation (a broken model invariant), KeyboardInterrupt (Ctrl-C)."""
    text, is_text, label = _source(scenario, base_dir)
    status, payload = _core.run(text, is_text, label, _overrides(set), _seed(seed), _memory(max_memory),
                                "" if trace is None else os.fspath(trace))
    if status != 0:
        raise _error(status, payload)
    return json.loads(payload)


def validate(scenario, set=None, seed=None, *, base_dir=None, max_memory=None):
    """Checks a scenario as `ibnetsim validate` does, running nothing; returns the config digest its report would
    have. Raises InputError."""
    text, is_text, label = _source(scenario, base_dir)
    status, payload = _core.validate(text, is_text, label, _overrides(set), _seed(seed), _memory(max_memory))
    if status != 0:
        raise _error(status, payload)
    return payload


def _report_json(report):
    if not isinstance(report, dict) or "results" not in report:
        raise TypeError("expected a report (the dict run() returns)")
    return json.dumps(report)


def metrics(report):
    """The run-wide scalar figures of a report under their names, in report order: {"ib_write_lat.t_typical_us":
    0.70, "pcie.doorbells": 1.0, ...}, as the columns of `run --format csv` and of a sweep's results.csv."""
    return {name: json.loads(value) for name, value in _core.wide_metrics(_report_json(report))}


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise ImportError("ibnetsim's tables need pandas: apt-get install python3-pandas (or pip install pandas)") \
            from e
    return pandas


def long(report):
    """Every numeric figure of a report as a tidy DataFrame with columns metric, entity, value (`run --format
    long-csv`): entity is the message size of a perftest's rows, "SRC->DST" for a flow, the host for PCIe counters,
    "NODE/PORT" for a port, "NODE/PORT/VLn" or "/SLn" for its lanes, the index of a fault, "" for the run."""
    metric, entity, value = _core.long_columns(_report_json(report))
    return _pandas().DataFrame({"metric": metric, "entity": entity, "value": value})


def _last_token(pointer):
    return pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")


def _axes(axes, seeds):
    """[(column, [(value label, [assignments])...])] for each axis, in order."""
    if axes is None:
        axes = {}
    if not isinstance(axes, dict):
        raise TypeError("axes: expected a dict {\"/json/pointer\": [values], \"name\": {variant: {pointer: value}}}")
    parsed = []
    uses = {}
    for key in axes:
        if isinstance(key, str) and key.startswith("/"):
            uses[_last_token(key)] = uses.get(_last_token(key), 0) + 1
    for key, values in axes.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"axes: a key must be a JSON pointer or a name, got {key!r}")
        if key.startswith("/"):
            if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
                raise TypeError(f"axes[{key!r}]: expected a list of values")
            values = list(values)
            if not values:
                raise InputError(f"axes[{key!r}]: expected at least one value, got none", "axes", key,
                                 "at least one value", "none")
            column = _last_token(key) if uses[_last_token(key)] == 1 else key
            parsed.append((column, [(v, _overrides({key: v})) for v in values]))
        elif isinstance(values, dict):
            if not values:
                raise InputError(f"axes[{key!r}]: expected at least one variant, got none", "axes", key,
                                 "at least one variant", "none")
            parsed.append((key, [(name, _overrides(assignments)) for name, assignments in values.items()]))
        else:
            raise TypeError(f"axes[{key!r}]: a named axis takes variants, {{name: {{\"/json/pointer\": value}}}}")
    if seeds is not None:
        seeds = [_seed(s) for s in seeds]
        if "seed" in (c for c, _ in parsed):
            raise InputError("seeds: an axis is already named seed", "seeds", "", "one seed axis", "two")
        parsed.append(("seed", [(s, [f"/seed={s}"]) for s in seeds]))
    columns = [c for c, _ in parsed]
    if len(set(columns)) != len(columns):
        raise InputError(f"axes: two axes named alike: {columns}", "axes", "", "distinct axis names", str(columns))
    return parsed


def sweep(scenario, axes=None, set=None, seed=None, *, seeds=None, metrics=None, jobs=None, base_dir=None,
          max_memory=None, errors="raise", progress=False):
    """Runs a scenario once per point of a grid and returns a tidy pandas DataFrame: one row per point and figure,
    with columns point, one per axis, metric, entity, value (as long() gives them).

    axes: {"/json/pointer": [values]} for a parameter (its column named by the pointer's last token, as the CLI names
    it), or {"name": {"variant": {"/json/pointer": value, ...}, ...}} for named variants. The grid is their
    Cartesian product, the last axis varying fastest. seeds: a list of seeds, as a last axis "seed".
    set, seed: fixed overrides for every point. metrics: names (or "/json/pointer"s into the report) to keep; default
    all. jobs: points run at once, each in a process of its own (default: the machine's cores).
    errors: "raise" (SweepError, carrying the finished points' rows) or "warn" (a warning; the rows of the points
    that succeeded). Every point is validated before any runs: a bad one raises InputError naming it."""
    if errors not in ("raise", "warn"):
        raise ValueError("errors: expected 'raise' or 'warn'")
    pandas = _pandas()
    text, is_text, label = _source(scenario, base_dir)
    fixed = _overrides(set)
    seed = _seed(seed)
    max_memory = _memory(max_memory)
    parsed = _axes(axes, seeds)
    columns = [c for c, _ in parsed]
    points = list(itertools.product(*[values for _, values in parsed])) if parsed else [()]
    wanted = None if metrics is None else list(metrics)

    jobs_list = []
    for index, point in enumerate(points):
        overrides = fixed + [a for _, assignments in point for a in assignments]
        status, payload = _core.validate(text, is_text, label, overrides, seed, max_memory)
        if status != 0:
            error = _error(status, payload)
            where = ", ".join(f"{c}={v!r}" for c, (v, _) in zip(columns, point))
            if isinstance(error, InputError):
                raise InputError(f"point {index} ({where}): {error}", error.file, error.pointer, error.expected,
                                 error.got)
            raise RunError(f"point {index} ({where}): {error}")
        jobs_list.append((text, is_text, label, overrides, seed))

    def report_progress(done, total):
        if progress:
            print(f"[sweep] {done}/{total}", file=sys.stderr, flush=True)

    outcomes = _core.run_many(jobs_list, jobs or os.cpu_count() or 1, max_memory, report_progress)
    table = {"point": [], **{c: [] for c in columns}, "metric": [], "entity": [], "value": []}
    failures = []
    for index, (point, (status, payload)) in enumerate(zip(points, outcomes)):
        values = [v for v, _ in point]
        if status != 0:
            failures.append({"point": index, **dict(zip(columns, values)), "error": _error(status, payload)})
            continue
        rows = _core.long_columns(payload.decode())
        names, entities, figures = rows
        keep = range(len(names)) if wanted is None else [i for i in range(len(names)) if names[i] in wanted]
        kept = [(names[i], entities[i], figures[i]) for i in keep]
        pointers = [] if wanted is None else [name for name in wanted if name.startswith("/")]
        if pointers:
            report = json.loads(payload)
            for name in pointers:
                found = _pointer(report, name)
                if isinstance(found, (int, float)):  # bool is an int: 0 or 1, as in long()
                    kept.append((name, "", float(found)))
        for name, entity, value in kept:
            table["point"].append(index)
            for c, v in zip(columns, values):
                table[c].append(v)
            table["metric"].append(name)
            table["entity"].append(entity)
            table["value"].append(value)
    frame = pandas.DataFrame(table)
    if wanted is not None:
        found = frozenset(frame["metric"].tolist())
        missing = [m for m in wanted if m not in found]
        if missing and len(failures) < len(points):
            raise InputError(f"metrics: {missing} name no figure of any point's report", "metrics", "",
                             "names of figures (ibnetsim.long(report).metric) or /json/pointers", str(missing))
    if failures:
        lines = "; ".join(f"point {f['point']}: {f['error']}" for f in failures)
        message = f"{len(failures)} of {len(points)} points failed: {lines}"
        if errors == "raise":
            raise SweepError(message, failures, frame)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    return frame


def _pointer(document, pointer):
    """The value at an RFC 6901 pointer, or None."""
    value = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value
