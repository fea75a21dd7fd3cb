"""The orchestrator loop (spec section 4): decompose, plan, then review → run a tool → prune,
until the reviewer has enough, asks the user to clarify, or a budget runs out.

Budgets: at most `max_tool_calls` tool calls (the plan's, capped by RAG_AGENT_MAX_TOOL_CALLS) and
`time_budget` seconds (checked before every step, so a run overshoots by one tool call at most);
the evidence is pruned after every call to the passages worth keeping (spec step 2C): one per
chunk, none far below the best one, at most `evidence_limit`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .planner import AgentState, Planner
from .schema import Clarification, Decomposition, Plan
from .tools import AgentTools, Evidence

# Evidence scoring under this share of the best passage's rank score is irrelevant to the plan.
RELATIVE_EVIDENCE_SCORE = 0.5
RRF_K = 60  # reciprocal rank fusion's usual constant


@dataclass
class AgentRun:
    """What the loop did and found: the trace the API returns and the audit keeps."""

    planner: str
    decomposition: Decomposition
    plan: Plan
    steps: list[dict] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    clarification: Clarification | None = None
    stopped: str = ""  # "enough", "clarify", "max_tool_calls", "time_budget", "no_next_call"
    tool_calls: int = 0
    pruned: int = 0
    elapsed_ms: float = 0.0

    def as_dict(self) -> dict:
        return {
            "planner": self.planner,
            "decomposition": self.decomposition.as_dict(),
            "plan": self.plan.as_dict(),
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "evidence": [item.as_dict() for item in self.evidence],
            "pruned": self.pruned,
            "stopped": self.stopped,
            "clarification": self.clarification.as_dict() if self.clarification else None,
            "elapsed_ms": self.elapsed_ms,
        }


def run_agent(
    *,
    question: str,
    tools: AgentTools,
    planner: Planner,
    max_tool_calls: int,
    time_budget: float,
    evidence_limit: int,
    clock: Callable[[], float] = time.monotonic,
) -> AgentRun:
    """Gather evidence for `question` with `planner` driving `tools` (see the module docstring)."""
    started = clock()
    decomposition = planner.decompose(question)
    plan = planner.plan(question, decomposition)
    limit = max(0, min(plan.max_tool_calls, max_tool_calls))
    run = AgentRun(planner=planner.name, decomposition=decomposition, plan=plan)
    state = AgentState()
    while True:
        if clock() - started > time_budget:
            run.stopped = "time_budget"
            break
        review = planner.review(question, plan, state)
        step = {"review": review.as_dict()}
        run.steps.append(step)
        if review.status == "enough":
            run.stopped = "enough"
            break
        if review.status == "clarify":
            run.stopped = "clarify"
            run.clarification = review.clarification_details
            break
        if run.tool_calls >= limit:
            run.stopped = "max_tool_calls"
            break
        call = review.next_tool_call
        if call is None:
            run.stopped = "no_next_call"
            break
        result = tools.run(call.tool, call.args, step=len(run.steps))
        run.tool_calls += 1
        step["result"] = result.as_dict()
        state.calls.append(result)
        kept = prune([*state.evidence, *result.evidence], limit=evidence_limit)
        run.pruned += len(state.evidence) + len(result.evidence) - len(kept)
        state.evidence = kept
    run.evidence = state.evidence
    run.elapsed_ms = round((clock() - started) * 1000, 2)
    return run


def prune(evidence: list[Evidence], *, limit: int) -> list[Evidence]:
    """The evidence worth keeping, best first, at most `limit` passages.

    Each tool call's results are scored on that tool's own scale (keyword coverage, cosine), so
    they are merged by reciprocal rank fusion: a passage scores 1/(RRF_K + its rank) in every call
    that returned it. Within a call, results under RELATIVE_EVIDENCE_SCORE of that call's best are
    irrelevant to the plan and dropped; a chunk returned twice is kept once."""
    by_step: dict[int, list[Evidence]] = {}
    for item in evidence:
        by_step.setdefault(item.step, []).append(item)
    fused: dict[int, float] = {}
    kept: dict[int, Evidence] = {}
    for items in by_step.values():
        items = sorted(items, key=lambda item: -item.passage.rank_score)
        floor = RELATIVE_EVIDENCE_SCORE * items[0].passage.rank_score
        for rank, item in enumerate(items, start=1):
            if item.passage.rank_score < floor:
                break
            chunk = item.passage.chunk_id
            fused[chunk] = fused.get(chunk, 0.0) + 1.0 / (RRF_K + rank)
            kept.setdefault(chunk, item)
    ordered = sorted(kept, key=lambda chunk: -fused[chunk])
    return [kept[chunk] for chunk in ordered[:limit]]
