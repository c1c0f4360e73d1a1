#!/usr/bin/env python3
"""Calibrates the fabric-level host model's latencies (the HCA profiles' endpoint_* keys) against the full host
model: for each HCA profile, one 4096 B RC RDMA WRITE between two hosts cabled back to back, traced, and split into
  send:        ibv_post_send to the first bit of the packet on the wire,
  ack:         the message's last bit in at the responder to its ACK's first bit out,
  completion:  the ACK's last bit in at the requester to ibv_poll_cq returning the completion.
Prints them, and with --write puts them into topologies/hardware/<profile>.json.
usage: tools/calibrate_endpoint.py BINARY [--write] [PROFILE ...]"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARDWARE = os.path.join(ROOT, "topologies", "hardware")
SPEED = {"connect-ib-fdr": "FDR", "connectx3-fdr": "FDR", "connectx4-edr": "EDR", "connectx5-edr": "EDR",
         "connectx6-hdr": "HDR", "connectx7-ndr": "NDR"}
CABLE, LENGTH_M = "copper-dac", 2


def value(profile, key):
    with open(os.path.join(HARDWARE, profile + ".json")) as f:
        return json.load(f)["parameters"][key]["value"]


def propagation_ns(speed):
    fec = {"HDR": value(CABLE, "fec_latency_hdr_ns"), "NDR": value(CABLE, "fec_latency_ndr_ns")}.get(speed, 0)
    return value(CABLE, "propagation_delay_ns_per_m") * LENGTH_M + fec


def measure(binary, profile):
    speed = SPEED[profile]
    scenario = {
        "name": "calibrate-" + profile, "seed": 1,
        "topology": {"name": "pair", "link_defaults": {"width": "4x", "speed": speed, "length_m": LENGTH_M,
                                                       "cable": CABLE},
                     "nodes": [{"name": "a", "kind": "hca", "profile": profile},
                               {"name": "b", "kind": "hca", "profile": profile}],
                     "links": [{"a": "a/1", "b": "b/1"}]},
        "workloads": [{"type": "incast", "hosts": ["a", "b"], "receiver": "b", "verb": "write", "size_bytes": 4096,
                       "messages": 1, "tx_depth": 1}]}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        trace = os.path.join(tmp, "t.json")
        subprocess.run([binary, "run", path, "--quiet", "--trace", trace], check=True, stdout=subprocess.DEVNULL)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    by = {}
    for e in events:
        if e.get("ph") in ("X", "i"):
            by.setdefault((names.get(e["pid"]), e.get("name")), []).append(e)
    us = 1e3  # trace times are in microseconds; figures in ns
    post = by[("a", "post_send")][0]["ts"] * us
    data = by[("a", "RDMA_WRITE_ONLY")][0]
    ack = by[("b", "ACKNOWLEDGE")][0]
    poll = [e for e in by[("a", "poll_cq")] if e["args"].get("opcode") == "RDMA_WRITE"][0]["ts"] * us
    prop = propagation_ns(speed)
    data_in = (data["ts"] + data["dur"]) * us + prop
    ack_in = (ack["ts"] + ack["dur"]) * us + prop
    return round(data["ts"] * us - post), round(ack["ts"] * us - data_in), round(poll - ack_in)


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    if not args:
        sys.exit(__doc__)
    binary, profiles = args[0], args[1:] or sorted(SPEED)
    for profile in profiles:
        send, ack, completion = measure(binary, profile)
        print(f"{profile}: endpoint_send_latency_ns {send}, endpoint_ack_latency_ns {ack}, "
              f"endpoint_completion_latency_ns {completion}")
        if "--write" in sys.argv:
            path = os.path.join(HARDWARE, profile + ".json")
            with open(path) as f:
                document = json.load(f)
            for key, figure in (("endpoint_send_latency_ns", send), ("endpoint_ack_latency_ns", ack),
                                ("endpoint_completion_latency_ns", completion)):
                document["parameters"][key]["value"] = figure
            with open(path, "w") as f:
                f.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
