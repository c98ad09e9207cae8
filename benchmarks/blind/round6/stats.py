"""The corpus's composition, read from the label file and the build record beside it (``--stats``),
and the form catalogue as a Markdown table (``--forms``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .forms import ALL_FORMS
from .plan import episode_plans


def composition(labels: Path, seed: int, size: int) -> str:
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    record = json.loads(Path(f"{labels}.expect.json").read_text())
    plans = {p.task_id: p for p in episode_plans(seed, size)}
    faulted = [r for r in rows if r["category"] == "faulted_failure"]
    llm_calls = {t: v["llm_calls"] for t, v in record.items()}
    long_early = [
        r for r in faulted if 15 <= llm_calls[r["task_id"]] <= 30 and r["step"] < len(record[r["task_id"]]["steps"]) / 3
    ]
    two = [r for r in faulted if sum(not f.absorbed for f in plans[r["task_id"]].faults) == 2]
    absorbed_first = [r for r in faulted if any(f.absorbed for f in plans[r["task_id"]].faults)]
    unfaulted_absorbed = [r for r in rows if r["category"] == "unfaulted_failure" and plans[r["task_id"]].faults]
    out = [
        f"episodes: {len(rows)}",
        "categories: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r["category"] for r in rows).items())),
        f"faulted failures: {len(faulted)}; distinct root forms {len({r['form'] for r in faulted})}; "
        f"families {len({r['family'] for r in faulted})}",
        "root sides: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r["target"] for r in faulted).items())),
        "root labels: " + ", ".join(f"{k} {v}" for k, v in Counter(r["fault_type"] for r in faulted).most_common()),
        f"long traces (15-30 LLM calls, root in the first third of the steps): {len(long_early)}",
        f"two-fault episodes (first is the root): {len(two)}",
        f"faulted failures with an earlier absorbed fault: {len(absorbed_first)}",
        f"unfaulted failures after an absorbed fault: {len(unfaulted_absorbed)}",
        "model slips (unfaulted failures): "
        + ", ".join(
            f"{k} {v}"
            for k, v in sorted(Counter(r["form"] for r in rows if r["category"] == "unfaulted_failure").items())
        ),
        f"LLM calls per episode: min {min(llm_calls.values())}, max {max(llm_calls.values())}",
        "stream modes: "
        + ", ".join(f"{k} {v}" for k, v in sorted(Counter(p.stream_mode for p in plans.values()).items())),
        "SDK max_retries: "
        + ", ".join(f"{k} {v}" for k, v in sorted(Counter(p.max_retries for p in plans.values()).items())),
        "providers: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(p.provider for p in plans.values()).items())),
    ]
    return "\n".join(out) + "\n"


def forms_table() -> str:
    lines = ["| form | family | side | label | source |", "|---|---|---|---|---|"]
    for f in sorted(ALL_FORMS.values(), key=lambda f: (f.side, f.family, f.name)):
        lines.append(f"| `{f.name}` | {f.family} | {f.side} | {f.label} | {f.source} |")
    return "\n".join(lines) + "\n"
