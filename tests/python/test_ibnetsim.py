"""The Python module (tools/python, docs/python.md) against the CLI: the same reports, the same metric names and
values, the same sweep figures; errors as exceptions with the CLI's details; nothing lost when points fail.

Run by ctest (python_module) as: python3 -m unittest test_ibnetsim, with PYTHONPATH holding the built package and
IBNETSIM_EXECUTABLE and IBNETSIM_SOURCE_DIR set. Writes only under a temporary directory."""

import io
import json
import os
import signal
import subprocess
import tempfile
import threading
import unittest
import warnings

import pandas

import ibnetsim

EXE = os.environ["IBNETSIM_EXECUTABLE"]
SOURCE = os.environ["IBNETSIM_SOURCE_DIR"]


def source(*parts):
    return os.path.join(SOURCE, *parts)


def cli(*args):
    result = subprocess.run([EXE, *args], capture_output=True, text=True, check=False)
    return result.returncode, result.stdout, result.stderr


WRITE_LAT = source("scenarios", "experiments", "write_lat.json")


def tiny_phold(**workload):
    """A PHOLD scenario of a few LPs over a microsecond: runs in milliseconds."""
    with open(source("scenarios", "phold.json")) as f:
        scenario = json.load(f)
    scenario.pop("$schema", None)
    scenario["duration_us"] = 1
    scenario["workload"]["lp_count"] = 8
    scenario["workload"].update(workload)
    return scenario


class RunTest(unittest.TestCase):
    def test_report_equals_the_cli_report(self):
        code, out, err = cli("run", WRITE_LAT, "--set", "/workloads/0/iterations=200", "--format", "json")
        self.assertEqual(code, 0, err)
        report = ibnetsim.run(WRITE_LAT, set={"/workloads/0/iterations": 200})
        self.assertEqual(report, json.loads(out))
        self.assertEqual(report, ibnetsim.run(WRITE_LAT, set=["/workloads/0/iterations=200"]))

    def test_seed_and_a_scenario_given_as_a_dict(self):
        with open(WRITE_LAT) as f:
            scenario = json.load(f)
        # The file names its topology relative to itself: a dict takes base_dir for that.
        from_dict = ibnetsim.run(scenario, {"/workloads/0/iterations": 100}, seed=5,
                                 base_dir=os.path.dirname(WRITE_LAT))
        from_file = ibnetsim.run(WRITE_LAT, {"/workloads/0/iterations": 100}, seed=5)
        self.assertEqual(from_dict["results"], from_file["results"])
        self.assertEqual(from_dict["config_digest"], from_file["config_digest"])
        self.assertEqual(from_dict["scenario"]["seed"], 5)
        self.assertEqual(ibnetsim.validate(WRITE_LAT, {"/workloads/0/iterations": 100}, seed=5),
                         from_file["config_digest"])

    def test_bad_input_is_an_input_error_naming_file_and_pointer(self):
        with self.assertRaises(ibnetsim.InputError) as caught:
            ibnetsim.run(WRITE_LAT, set={"/workloads/0/server": "h99"})
        e = caught.exception
        self.assertEqual(e.file, WRITE_LAT)
        self.assertEqual(e.pointer, "/workloads/0/server")
        self.assertIn("got \"h99\"", str(e))
        with self.assertRaises(ibnetsim.InputError) as caught:
            ibnetsim.run(tiny_phold(lp_count=0))
        self.assertEqual((caught.exception.file, caught.exception.pointer), ("<dict>", "/workload/lp_count"))
        with self.assertRaises(ibnetsim.InputError):
            ibnetsim.run(WRITE_LAT, seed=-1)
        with self.assertRaises(ibnetsim.InputError):
            ibnetsim.run(WRITE_LAT, set={"workloads/0/server": "h1"})  # not a pointer
        with self.assertRaises(ibnetsim.InputError) as caught:
            ibnetsim.run(os.path.join(tempfile.gettempdir(), "no-such-scenario.json"))
        with self.assertRaises(ibnetsim.InputError) as caught:
            ibnetsim.run(WRITE_LAT, max_memory=1024)
        self.assertIn("max_memory", str(caught.exception))
        with self.assertRaises(TypeError):
            ibnetsim.run(42)

    def test_a_broken_invariant_is_an_invariant_violation(self):
        with self.assertRaises(ibnetsim.InvariantViolation) as caught:
            ibnetsim.run(tiny_phold(self_test={"drop_event_number": 50}))
        self.assertEqual(caught.exception.id, "event-conservation")
        # The interpreter goes on: the next run works.
        self.assertIn("events_handled", ibnetsim.run(tiny_phold())["results"])

    def test_ctrl_c_interrupts_a_run(self):
        long_run = tiny_phold(lp_count=4096)
        long_run["duration_us"] = 100000
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                ibnetsim.run(long_run)
        finally:
            timer.cancel()

    def test_trace(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            ibnetsim.run(WRITE_LAT, {"/workloads/0/iterations": 10}, trace=path)
            with open(path) as f:
                self.assertTrue(json.load(f)["traceEvents"])


class MetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.args = ["--set", "/workloads/1/messages=2"]
        cls.report = ibnetsim.run(source("scenarios", "default.json"), set={"/workloads/1/messages": 2})

    def test_wide_metrics_are_the_cli_csv_columns(self):
        code, out, err = cli("run", source("scenarios", "default.json"), *self.args, "--format", "csv")
        self.assertEqual(code, 0, err)
        row = pandas.read_csv(io.StringIO(out), float_precision="round_trip").iloc[0]
        metrics = ibnetsim.metrics(self.report)
        self.assertEqual(list(row.index), ["scenario", "seed", "config_digest", *metrics.keys()])
        for name, value in metrics.items():
            self.assertAlmostEqual(float(row[name]), float(value), places=12, msg=name)
        self.assertIn("ib_write_lat.t_typical_us", metrics)
        self.assertIn("pcie.doorbells", metrics)

    def test_long_is_the_cli_long_csv_three_columns_whatever_the_fabric(self):
        code, out, err = cli("run", source("scenarios", "default.json"), *self.args, "--format", "long-csv")
        self.assertEqual(code, 0, err)
        expected = pandas.read_csv(io.StringIO(out), keep_default_na=False, dtype={"entity": str},
                                   float_precision="round_trip")
        frame = ibnetsim.long(self.report)
        self.assertEqual(list(frame.columns), ["metric", "entity", "value"])
        self.assertEqual(frame["metric"].tolist(), expected["metric"].tolist())
        self.assertEqual(frame["entity"].tolist(), expected["entity"].tolist())
        self.assertEqual(frame["value"].tolist(), expected["value"].astype(float).tolist())
        ports = frame[frame.metric == "ports.PortXmitData"]
        self.assertEqual(len(ports), len(self.report["results"]["ports"]))
        self.assertIn("h0/1", ports.entity.tolist())
        flows = frame[frame.metric == "all_to_all.flows.gbps"]
        self.assertEqual(len(flows), 16 * 15)
        self.assertIn("h0->h1", flows.entity.tolist())
        # Every wide metric is a long one under the same name (a perftest's with its message size as entity).
        names = set(frame.metric)
        for name in ibnetsim.metrics(self.report):
            self.assertIn(name, names | {"ib_write_lat.size_bytes"})


class SweepTest(unittest.TestCase):
    def test_figures_equal_the_cli_sweep(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, out, err = cli("sweep", WRITE_LAT, "--sweep", "/workloads/0/size_bytes=2,64,4096", "--metric",
                                 "ib_write_lat.t_typical_us", "--out", os.path.join(tmp, "s"), "-q")
            self.assertEqual(code, 0, err)
            expected = pandas.read_csv(os.path.join(tmp, "s", "results.csv"))
        frame = ibnetsim.sweep(WRITE_LAT, {"/workloads/0/size_bytes": [2, 64, 4096]},
                               metrics=["ib_write_lat.t_typical_us"], jobs=2)
        self.assertEqual(list(frame.columns), ["point", "size_bytes", "metric", "entity", "value"])
        self.assertEqual(frame["size_bytes"].tolist(), expected["size_bytes"].tolist())
        self.assertEqual(frame["value"].tolist(), expected["ib_write_lat.t_typical_us"].tolist())

    def test_grid_variants_seeds_and_determinism(self):
        axes = {"features": {"baseline": {"/workloads/0/blueflame": False},
                             "blueflame": {"/workloads/0/blueflame": True}},
                "/workloads/0/size_bytes": [8, 512]}
        kept = ["ib_write_lat.t_typical_us", "pcie.doorbells", "/results/pcie/per_message/blueflame_writes"]
        one = ibnetsim.sweep(WRITE_LAT, axes, set={"/workloads/0/iterations": 100}, seeds=[1, 2], metrics=kept,
                             jobs=1)
        two = ibnetsim.sweep(WRITE_LAT, axes, set={"/workloads/0/iterations": 100}, seeds=[1, 2], metrics=kept,
                             jobs=2)
        pandas.testing.assert_frame_equal(one, two)
        self.assertEqual(list(one.columns), ["point", "features", "size_bytes", "seed", "metric", "entity", "value"])
        self.assertEqual(one.point.nunique(), 8)
        self.assertEqual(one[one.point == 0][["features", "size_bytes", "seed"]].iloc[0].tolist(),
                         ["baseline", 8, 1])
        self.assertEqual(one[one.point == 1]["seed"].iloc[0], 2)  # the last axis varies fastest
        lat = one[one.metric == "ib_write_lat.t_typical_us"].set_index(["features", "size_bytes", "seed"]).value
        self.assertLess(lat["blueflame", 8, 1], lat["baseline", 8, 1])
        doorbells = one[one.metric == "pcie.doorbells"].set_index(["features", "size_bytes", "seed"]).value
        self.assertEqual(doorbells["baseline", 8, 1], 1.0)
        self.assertEqual(doorbells["blueflame", 8, 1], 0.0)
        self.assertEqual(set(one.metric), set(kept))
        # A point of the sweep is the run of its overrides.
        single = ibnetsim.run(WRITE_LAT, {"/workloads/0/iterations": 100, "/workloads/0/blueflame": True,
                                          "/workloads/0/size_bytes": 512}, seed=2)
        self.assertEqual(lat["blueflame", 512, 2], ibnetsim.metrics(single)["ib_write_lat.t_typical_us"])

    def test_a_bad_point_fails_before_anything_runs(self):
        with self.assertRaises(ibnetsim.InputError) as caught:
            ibnetsim.sweep(WRITE_LAT, {"/workloads/0/size_bytes": [2, -8]})
        self.assertIn("point 1 (size_bytes=-8)", str(caught.exception))
        self.assertEqual(caught.exception.pointer, "/workloads/0/size_bytes")
        with self.assertRaises(ibnetsim.InputError):
            ibnetsim.sweep(WRITE_LAT, {"/workloads/0/size_bytes": [2]}, metrics=["no_such.metric"])

    def test_failed_points_keep_the_others_results(self):
        axes = {"case": {"fine": {}, "broken": {"/workload/self_test": {"drop_event_number": 50}}}}
        with self.assertRaises(ibnetsim.SweepError) as caught:
            ibnetsim.sweep(tiny_phold(), axes)
        e = caught.exception
        self.assertEqual([f["point"] for f in e.failures], [1])
        self.assertIsInstance(e.failures[0]["error"], ibnetsim.InvariantViolation)
        self.assertEqual(set(e.results.case), {"fine"})
        self.assertIn("events_handled", set(e.results.metric))
        with warnings.catch_warnings(record=True) as caught_warnings:
            warnings.simplefilter("always")
            frame = ibnetsim.sweep(tiny_phold(), axes, errors="warn")
        self.assertEqual(set(frame.case), {"fine"})
        self.assertTrue(any("1 of 2 points failed" in str(w.message) for w in caught_warnings))


class DataTest(unittest.TestCase):
    def test_data_directory(self):
        self.assertTrue(os.path.isfile(ibnetsim.data_path("scenarios", "default.json")))
        self.assertTrue(os.path.isdir(ibnetsim.data_path("topologies", "hardware")))
        # IBNETSIM_DATA_DIR wins, as for the CLI; a directory without profiles is an InputError.
        with tempfile.TemporaryDirectory() as tmp:
            code = ("import ibnetsim\n"
                    "try:\n    ibnetsim.data_dir()\nexcept ibnetsim.InputError as e:\n    print('InputError', e)\n")
            env = dict(os.environ, IBNETSIM_DATA_DIR=tmp)
            result = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                    check=True)
            self.assertIn("InputError", result.stdout)
            self.assertIn("IBNETSIM_DATA_DIR", result.stdout)


if __name__ == "__main__":
    unittest.main()
