"""``--summary``: the composition of a built corpus, from its label file and its store."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb


def summary(db: Path, labels: Path) -> str:
    rows = [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    con = duckdb.connect(str(db), read_only=True)
    n_llm = dict(con.execute("SELECT task_id, n_llm_calls FROM episodes").fetchall())
    con.close()
    faulted = [r for r in rows if r["category"] == "faulted_failure"]
    long = [r for r in faulted if n_llm.get(r["task_id"], 0) >= 15]
    lines = [
        f"episodes: {len(rows)}",
        f"categories: {dict(Counter(r['category'] for r in rows))}",
        f"faulted by label: {dict(Counter(r['fault_type'] for r in faulted).most_common())}",
        f"faulted by side: {dict(Counter(r['target'] for r in faulted))}",
        f"faulted by taxonomy target: {dict(Counter(r.get('target_detail') for r in faulted))}",
        f"two-fault episodes: {sum(1 for r in faulted if r.get('note', '').startswith('second fault'))}",
        f"non-idempotent repeats: {sum(1 for r in faulted if r.get('note', '').startswith('non-idempotent'))}",
        f"long traces (>=15 model calls): {len(long)}, model calls max {max(n_llm.values(), default=0)}",
        f"distinct root forms: {len({r['form'] for r in faulted})} in {len({r['family'] for r in faulted})} families",
    ]
    return "\n".join(lines) + "\n"
