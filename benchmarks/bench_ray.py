"""Ray campaign speed-up: the same campaign on 1 and on 2 Ray workers, in one local Ray instance.

Run: ``python -m benchmarks.bench_ray [--quick]``

The reference agent runs tasks x conditions against the bundled SIMULATED model, served by this
process on loopback (the shared model endpoint); episodes run on Ray actors
(``agentchaos_otel.campaign.ray_executor``), one thread each, and this process writes the trace
file. Each configuration gets a fresh trace file. The speed-up is of the episode phase, from all
actors constructed to the last batch stored (a campaign that needs Ray runs for hours; actor
start-up is paid once); the whole call, actor start-up included, is reported beside it. Ray's own
start-up is excluded (one local instance for both). Baseline: 1 worker.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_SPEEDUP = 1.5


def _campaign(db: Path, tasks: int, conditions: list[str], workers: int) -> tuple[dict[str, float], dict[str, int]]:
    from agentchaos_otel.campaign.agents import AgentOptions, load_agent
    from agentchaos_otel.campaign.ray_executor import WorkerSpec, run_campaign_ray
    from agentchaos_otel.campaign.runner import CampaignConfig
    from agentchaos_otel.cli.campaign import model_endpoint

    options = AgentOptions()
    setup = load_agent("reference")(str(tasks), 0, conditions, options)
    with model_endpoint(setup.policy, None, None, "OPENAI_API_KEY", 0) as (url, model, _key, sim):
        config = CampaignConfig(agent=setup.name, tasks=setup.task_ids, conditions=conditions, seeds=[0],
                                workers=1, db=db, simulated=sim)
        spec = WorkerSpec(agent="reference", tasks=str(tasks), seed=0, conditions=tuple(conditions),
                          options=options, base_url=url, model=model, simulated=sim, api_key_env="OPENAI_API_KEY")
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        result = run_campaign_ray(config, spec, ray_workers=workers, progress=False, timings=timings)
        timings["total_s"] = time.perf_counter() - t0
        return timings, result.counts


def run(quick: bool = False) -> list[dict[str, Any]]:
    import ray

    tasks, conditions = (6, ["none", "bursty"]) if quick else (10, ["none", "independent", "bursty", "persistent"])
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory(prefix="agentchaos-bench-ray-") as tmp:
            times, counts = {}, {}
            for workers in (1, 2):
                times[workers], counts[workers] = _campaign(Path(tmp) / f"w{workers}.duckdb", tasks, conditions,
                                                            workers)
    finally:
        if started_here:
            ray.shutdown()
    episodes = counts[1]["ran"]
    if counts[2]["ran"] != episodes:
        raise RuntimeError(f"the two campaigns ran different episode counts: {counts}")
    speedup = times[1]["episodes_s"] / times[2]["episodes_s"]
    return [
        {"figure": f"Ray campaign, {episodes} episodes, 2 workers: whole call incl. actor start-up",
         "value": round(times[2]["total_s"], 2), "unit": "s", "baseline": "same campaign on 1 Ray worker",
         "baseline_value": round(times[1]["total_s"], 2), "ratio": round(times[2]["total_s"] / times[1]["total_s"], 3),
         "target": "report only", "holds": None, "simulated": True},
        {"figure": f"Ray campaign speed-up, 2 workers vs 1 ({episodes} episodes, episode phase)",
         "value": round(speedup, 2), "unit": "x", "baseline": "1 Ray worker, same run", "baseline_value": 1.0,
         "ratio": round(speedup, 2), "target": f">= {TARGET_SPEEDUP}x", "holds": speedup >= TARGET_SPEEDUP,
         "simulated": True, "episodes_s_1": round(times[1]["episodes_s"], 2),
         "episodes_s_2": round(times[2]["episodes_s"], 2)},
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    print("SIMULATED model; Ray campaign speed-up")
    for r in run(args.quick):
        print(f"{r['figure']}: {r['value']} {r['unit']} (baseline {r['baseline_value']}: {r['baseline']})")


if __name__ == "__main__":
    main()
