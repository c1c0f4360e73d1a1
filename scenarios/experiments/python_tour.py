#!/usr/bin/env python3
"""The README's five-minute tour, redone through the Python module (docs/python.md), cell by cell as in a notebook.

    PYTHONPATH=build/release/python python3 scenarios/experiments/python_tour.py [OUT_DIR]

(or with the package installed, just python3). Prints each step's figures and writes two plots and a tidy CSV to
OUT_DIR (default: ./python_tour). Every figure is the CLI's: the same runs, the same names."""

import os
import sys

import ibnetsim

out_dir = sys.argv[1] if len(sys.argv) > 1 else "python_tour"
os.makedirs(out_dir, exist_ok=True)
experiments = ibnetsim.data_path("scenarios", "experiments")

# %% Run a scenario: `ibnetsim run scenarios/default.json`. The report is the JSON `--format json` prints.
report = ibnetsim.run(ibnetsim.data_path("scenarios", "default.json"))
figures = ibnetsim.metrics(report)
print(f"ib_write_lat 2 B, h0 -> h15: typical {figures['ib_write_lat.t_typical_us']:.2f} us")
print(f"all_to_all 64 KiB: {figures['all_to_all.per_host_injection_gbps']:.2f} Gb/s per host, "
      f"message latency 99% {figures['all_to_all.message_latency.t_99_percent_us']:.2f} us")

# Tidy rows (`run --format long-csv`): the ports that waited longest for credits.
rows = ibnetsim.long(report)
waits = rows[rows.metric == "ports.PortXmitWait_ns"].nlargest(3, "value")
print("longest PortXmitWait:", ", ".join(f"{r.entity} {r.value / 1000:.1f} us" for r in waits.itertuples()))

# %% A scenario written in Python (as `ibnetsim perftest ib_write_bw` builds one): two ConnectX-4 hosts back to back.
pair = {
    "name": "write_bw_pair",
    "seed": 1,
    "topology": {
        "name": "pair",
        "nodes": [{"name": "h0", "kind": "hca", "profile": "connectx4-edr"},
                  {"name": "h1", "kind": "hca", "profile": "connectx4-edr"}],
        "links": [{"a": "h0/1", "b": "h1/1", "width": "4x", "speed": "EDR", "length_m": 2, "cable": "copper-dac"}],
    },
    "workloads": [{"type": "ib_write_bw", "client": "h0", "server": "h1", "size_bytes": 65536, "iterations": 400}],
}
bw = ibnetsim.metrics(ibnetsim.run(pair))
print(f"ib_write_bw 64 KiB back to back: {bw['ib_write_bw.bw_average_gbps']:.2f} Gb/s")

# %% Compare verbs features: `ibnetsim compare scenarios/experiments/write_lat.json`, as a sweep of named variants.
write_lat = os.path.join(experiments, "write_lat.json")
features = {"baseline": {"/workloads/0/inline_size_bytes": 0, "/workloads/0/blueflame": False},
            "inline": {"/workloads/0/inline_size_bytes": 220, "/workloads/0/blueflame": False},
            "blueflame": {"/workloads/0/inline_size_bytes": 0, "/workloads/0/blueflame": True},
            "inline+blueflame": {"/workloads/0/inline_size_bytes": 220, "/workloads/0/blueflame": True}}
compared = ibnetsim.sweep(write_lat, {"features": features},
                          metrics=["ib_write_lat.t_typical_us", "pcie.doorbells", "pcie.wqe_reads",
                                   "pcie.payload_reads", "pcie.blueflame_writes", "pcie.mmio_bytes"])
table = compared.pivot(index="metric", columns="features", values="value")[list(features)]
print(table.to_string(float_format=lambda v: f"{v:.4g}"))

# %% Sweep a parameter: latency against message size, two seeds, baseline and inline+BlueFlame.
sizes = [2, 8, 32, 128, 512, 2048, 8192]
swept = ibnetsim.sweep(write_lat, {"features": {k: features[k] for k in ("baseline", "inline+blueflame")},
                                   "/workloads/0/size_bytes": sizes},
                       seeds=[1, 2], metrics=["ib_write_lat.t_typical_us"])
swept.to_csv(os.path.join(out_dir, "latency_vs_size.csv"), index=False)
latency = swept.groupby(["features", "size_bytes"]).value.agg(["mean", "min", "max"]).reset_index()
print(latency.to_string(index=False, float_format=lambda v: f"{v:.3f}"))

# %% Faults: a spine link fails under light traffic; the SM reroutes and RC recovers.
faulted = ibnetsim.run(os.path.join(experiments, "spine_link_failure.json"))
f = ibnetsim.metrics(faulted)
sm = ibnetsim.long(faulted)
reroute = sm[sm.metric == "faults.events.subnet_manager.fault_to_rerouted_us"].value.iloc[0]
print(f"spine link failure: rerouted {reroute:.0f} us after the fault, {f['faults.packets_lost.total']} packets "
      f"lost, {f['faults.retransmitted_packets']} retransmitted, {f['faults.error_completions']} error completions")

# %% Plots (matplotlib from Debian's python3-matplotlib): the mean of the seeds with their range as a band.
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("no matplotlib: plots skipped (apt-get install python3-matplotlib)")
    sys.exit(0)
fig, ax = plt.subplots(figsize=(8, 5))
for name, rows in latency.groupby("features"):
    ax.plot(rows.size_bytes, rows["mean"], marker="o", label=f"{name} (mean of 2 seeds)")
    ax.fill_between(rows.size_bytes, rows["min"], rows["max"], alpha=0.2)
ax.set(xscale="log", xlabel="message size [bytes]", ylabel="ib_write_lat typical latency [us]",
       title="ib_write_lat across two leaves of a 16-host fat tree (4x EDR)")
ax.legend()
fig.savefig(os.path.join(out_dir, "latency_vs_size.png"), dpi=100)

fig, ax = plt.subplots(figsize=(8, 5))
ports = ibnetsim.long(report)
xmit = ports[ports.metric == "ports.PortXmitWait_ns"].sort_values("value", ascending=False).head(16)
ax.barh(xmit.entity, xmit.value / 1000)
ax.invert_yaxis()
ax.set(xlabel="PortXmitWait [us]", title="default scenario: the 16 ports that waited longest for credits")
fig.tight_layout()
fig.savefig(os.path.join(out_dir, "port_waits.png"), dpi=100)
print(f"plots and latency_vs_size.csv written to {out_dir}")
