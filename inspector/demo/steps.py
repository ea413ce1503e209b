"""The demo agent's steps: each mutates the state and task state like a real agent would."""

from __future__ import annotations

from inspector.demo.plan import SOURCES, TASKS, Step, Tools, rng, say, sentence


def initial_state(topic: str, seed: int, approve_first: bool) -> dict:
    """The state a fresh run starts from."""
    return {"goal": f"Write and publish a short report on {topic}", "topic": topic, "seed": seed,
            "approve_first": approve_first, "step": 0, "messages": [], "sources": [],
            "files": {}, "draft": "", "budget": None, "reviews": 0, "log": []}


def initial_tasks(topic: str) -> dict:
    """The task state a fresh run starts from."""
    return {"goal": f"Write and publish a short report on {topic}",
            "tasks": [{"id": tid, "title": title, "status": "pending", "progress": 0.0,
                       "review": {"status": "none"}, "checks": []} for tid, title in TASKS]}


def _task(tasks: dict, tid: str) -> dict:
    return next(t for t in tasks["tasks"] if t["id"] == tid)


def _check(task: dict, name: str, passed: bool | None, detail: str = "") -> None:
    for check in task["checks"]:
        if check["name"] == name:
            check["passed"], check["detail"] = passed, detail
            return
    task["checks"].append({"name": name, "passed": passed, "detail": detail})


def _progress(tasks: dict, tid: str, value: float, status: str = "in_progress") -> dict:
    task = _task(tasks, tid)
    task["progress"], task["status"] = value, status
    return task


def plan_research(s: dict, t: dict, tools: Tools) -> None:
    _progress(t, "research", 0.2)
    say(s, "user", s["goal"])
    say(s, "assistant", f"I will gather sources on {s['topic']}, outline, draft, review and publish.")


def search_sources(s: dict, t: dict, tools: Tools) -> None:
    r = rng(s, "sources")
    s["sources"] = sorted(r.sample(SOURCES, 4))
    say(s, "tool", f"search returned {len(s['sources'])} sources", tool="search_sources")
    _progress(t, "research", 0.5)


def write_notes(s: dict, t: dict, tools: Tools) -> None:
    r = rng(s, "notes")
    text = "\n".join(f"- {src}: {sentence(r, s['topic'])}" for src in s["sources"])
    s["files"]["notes.md"] = tools.write_file("notes.md", text)
    task = _progress(t, "research", 0.8)
    _check(task, "at least 3 sources", len(s["sources"]) >= 3, f"{len(s['sources'])} sources")


def summarize_notes(s: dict, t: dict, tools: Tools) -> None:
    r = rng(s, "summary")
    say(s, "assistant", " ".join(sentence(r, s["topic"]) for _ in range(3)))
    task = _progress(t, "research", 1.0, "done")
    _check(task, "summary written", True)


def outline(s: dict, t: dict, tools: Tools) -> None:
    _progress(t, "outline", 0.5)
    s["outline"] = ["Context", "Evidence", "Costs", "Risks", "Recommendation"]
    say(s, "assistant", "Outline: " + ", ".join(s["outline"]))


def write_outline(s: dict, t: dict, tools: Tools) -> None:
    s["files"]["outline.md"] = tools.write_file("outline.md", "\n".join(f"## {h}" for h in s["outline"]))
    task = _progress(t, "outline", 1.0, "done")
    _check(task, "five sections", len(s["outline"]) == 5, f"{len(s['outline'])} sections")


def draft_part(part: str):
    def run(s: dict, t: dict, tools: Tools) -> None:
        r = rng(s, part)
        text = " ".join(sentence(r, s["topic"]) for _ in range(6))
        if part == "conclusion" and not s["approve_first"]:
            text += " TODO: cite the pilot report."
        s["draft"] = (s["draft"] + f"\n\n## {part.capitalize()}\n" + text).strip()
        say(s, "assistant", f"Drafted the {part} ({len(text.split())} words).")
        _progress(t, "draft", {"intro": 0.3, "body": 0.6, "conclusion": 0.8}[part])
    return run


def write_draft(s: dict, t: dict, tools: Tools) -> None:
    s["files"]["draft.md"] = tools.write_file("draft.md", s["draft"])
    _progress(t, "draft", 0.9)


def count_words(s: dict, t: dict, tools: Tools) -> None:
    words = tools.word_count(tools.read_file("draft.md"))
    say(s, "tool", f"word_count: {words}", tool="word_count")
    task = _progress(t, "draft", 1.0, "done")
    _check(task, "at least 120 words", words >= 120, f"{words} words")
    _task(t, "review")["status"] = "pending"


def estimate_budget(s: dict, t: dict, tools: Tools) -> None:
    r = rng(s, "budget")
    expression = f"({r.randint(20, 60)} * 450 + {r.randint(1, 9)} * 1200) * 1.15"
    s["budget"] = {"expression": expression, "total": round(tools.calculator(expression), 2)}
    say(s, "tool", f"calculator: {expression} = {s['budget']['total']}", tool="calculator")
    task = _progress(t, "budget", 0.6)
    _check(task, "budget under 40k", s["budget"]["total"] < 40_000, f"{s['budget']['total']:.0f}")


def explain_budget(s: dict, t: dict, tools: Tools) -> None:
    say(s, "assistant", f"The estimated budget is {s['budget']['total']:.0f} EUR.")
    task = _progress(t, "budget", 1.0, "done")
    _check(task, "budget explained", True)


def request_review(s: dict, t: dict, tools: Tools) -> None:
    task = _progress(t, "review", 0.2)
    task["review"] = {"status": "requested", "reviewer": "editor-bot", "note": None}
    _task(t, "draft")["review"] = {"status": "requested", "reviewer": "editor-bot", "note": None}
    say(s, "assistant", "Requesting an editorial review of the draft.")


def review(s: dict, t: dict, tools: Tools) -> None:
    s["reviews"] += 1
    clean = "TODO" not in s["draft"]
    verdict = "approved" if clean else "changes_requested"
    note = "Looks good." if clean else "Remove the TODO marker and cite the pilot report."
    draft = _task(t, "draft")
    draft["review"] = {"status": verdict, "reviewer": "editor-bot", "note": note}
    _check(draft, "no TODO markers", clean, "clean" if clean else "TODO found in conclusion")
    task = _progress(t, "review", 1.0 if clean else 0.5, "done" if clean else "in_progress")
    task["review"] = {"status": verdict, "reviewer": "editor-bot", "note": note}
    _check(task, "review passed", clean)
    say(s, "user", f"[editor-bot] {note}", reviewer="editor-bot")
    if not clean:
        _progress(t, "revise", 0.0, "pending")


def revise(s: dict, t: dict, tools: Tools) -> None:
    if "TODO" in s["draft"]:
        s["draft"] = s["draft"].replace(" TODO: cite the pilot report.", " (Source: municipal pilot report.)")
        say(s, "assistant", "Revised the conclusion and added the citation.")
        _progress(t, "revise", 0.6)
    else:
        say(s, "assistant", "No revision needed.")
        _progress(t, "revise", 0.6)


def write_revision(s: dict, t: dict, tools: Tools) -> None:
    s["files"]["draft.md"] = tools.write_file("draft.md", s["draft"])
    task = _progress(t, "revise", 1.0, "done")
    _check(task, "revision saved", True)


def publish(s: dict, t: dict, tools: Tools) -> None:
    s["files"]["published/report.md"] = tools.write_file("published/report.md", s["draft"])
    _progress(t, "publish", 0.7)


def verify(s: dict, t: dict, tools: Tools) -> None:
    ok = tools.read_file("published/report.md") == s["draft"]
    task = _progress(t, "publish", 1.0, "done" if ok else "failed")
    _check(task, "published copy matches", ok)
    say(s, "assistant", "Published." if ok else "Publication check failed.")


PLAN = [
    Step("llm", "plan_research", "research", plan_research),
    Step("tool", "search_sources", "research", search_sources),
    Step("tool", "write_file notes.md", "research", write_notes),
    Step("llm", "summarize_notes", "research", summarize_notes),
    Step("llm", "outline", "outline", outline),
    Step("tool", "write_file outline.md", "outline", write_outline),
    Step("llm", "draft_intro", "draft", draft_part("intro")),
    Step("llm", "draft_body", "draft", draft_part("body")),
    Step("llm", "draft_conclusion", "draft", draft_part("conclusion")),
    Step("tool", "write_file draft.md", "draft", write_draft),
    Step("tool", "word_count", "draft", count_words),
    Step("tool", "calculator", "budget", estimate_budget),
    Step("llm", "explain_budget", "budget", explain_budget),
    Step("llm", "request_review", "review", request_review),
    Step("llm", "review_draft", "review", review),
    Step("llm", "revise_draft", "revise", revise),
    Step("tool", "write_file draft.md", "revise", write_revision),
    Step("llm", "review_draft", "review", review),
    Step("tool", "publish report.md", "publish", publish),
    Step("tool", "verify_publication", "publish", verify),
]
