"""``sttgym play``: the benchmark played by a person at a prompt, or by an agent one shell command at a time."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from sttgym.cli.app import app

play_app = typer.Typer(help="Play an arena episode by hand: at a prompt (start -i), or one command at a time "
                       "(start, then step ...), as an agent driving a shell would.", no_args_is_help=True)
app.add_typer(play_app, name="play")

SESSION = typer.Option(Path("play-session.json"), "--session", help="The session file (one per player).")


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


@play_app.command("start")
def start(env_id: str = typer.Argument(..., help="An arena id, e.g. STTArena/ColdChain-T2-medium (sttgym list)."),
          seed: int = typer.Option(0, help="The instance: one seed fixes the episode."),
          session: Path = SESSION,
          out: Path = typer.Option(Path("runs/play"), help="Run directory the finished episode's record is added to."),
          player: str = typer.Option("player", help="Who plays: the name the record carries."),
          blind: bool = typer.Option(False, "--blind", help="Never print the score or the checklist, even at the end."),
          interactive: bool = typer.Option(False, "--interactive", "-i", help="Play here, at a prompt.")) -> None:
    """Start an episode: print the rules, the tools and the request, and save the session."""
    from sttgym.play import ActionError, start as begin

    try:
        typer.echo(begin(session, env_id, seed, str(out), player, blind))
    except ActionError as exc:
        _fail(exc)
    if interactive:
        _prompt(session)


@play_app.command("step")
def step(action: str = typer.Argument(..., help="A tool call as JSON or `name key=value ...`, or `Task Completed`; "
                                      "- reads it from standard input."),
         session: Path = SESSION) -> None:
    """Take one action and print what comes back (only what an agent would read)."""
    from sttgym.play import ActionError, step as take

    try:
        typer.echo(take(session, sys.stdin.read() if action == "-" else action))
    except ActionError as exc:
        _fail(exc)


@play_app.command("show")
def show(session: Path = SESSION) -> None:
    """Print the briefing again, then every action so far with what it brought back."""
    from sttgym.play import ActionError, Session, briefing, replay

    try:
        saved = Session.load(session)
        played = replay(saved.env_id, saved.seed, saved.actions)
    except ActionError as exc:
        _fail(exc)
    typer.echo(briefing(played))
    for s in played.trajectory.steps:
        typer.echo(f"\n> {json.dumps(s['action'], ensure_ascii=False)}\n{s['observation']}")


@play_app.command("review")
def review(source: Path = typer.Argument(..., help="A run directory sttgym play (or eval) wrote, or a session file."),
           episode: Optional[str] = typer.Option(None, help="Only the episode with this key (as in the records).")) -> None:
    """Print each episode as a reviewer reads it: the transcript, what changed in the world, the final state and
    whether a valid completion existed. Never the score."""
    from sttgym.evaluation.runner import TRAJECTORIES, load_records
    from sttgym.play import ActionError, Session, review as text

    try:
        if source.is_dir():
            saved_records = load_records(source / TRAJECTORIES)
            records = [r for r in saved_records.values() if episode in (None, r["key"])]
            if not records:
                raise ActionError(f"no episode{f' {episode}' if episode else ''} in {source / TRAJECTORIES}"
                                  + _known(saved_records))
            episodes = [(r["env_id"], r["seed"], [s["action"] for s in r["steps"]], r["key"]) for r in records]
        else:
            saved = Session.load(source)
            episodes = [(saved.env_id, saved.seed, saved.actions)]
        typer.echo("\n\n".join(text(*e) for e in episodes))
    except ActionError as exc:
        _fail(exc)


def _known(records: dict) -> str:
    """The keys a run holds, for an error naming one it does not."""
    keys = list(records)
    return f"; its episodes: {', '.join(keys[:20])}{' ...' if len(keys) > 20 else ''}" if keys else "; it holds none"


@play_app.command("label")
def label(run_dir: Path = typer.Argument(..., help="The run directory the episode was recorded in."),
          episode: str = typer.Option(..., help="The episode's key (as in the records, and in sttgym play review)."),
          verdict: str = typer.Option(..., help="met, not_met, correct_refusal or wrong_refusal."),
          reason: str = typer.Option(..., help="One line: why."),
          reviewer: str = typer.Option(..., help="Who reviewed it (never the player)."),
          category: str = typer.Option(None, help="For not_met and wrong_refusal, the agent's mistake: stale_state, "
                                                  "missed_cascade, suboptimal_choice, constraint_overlooked, "
                                                  "too_slow or gave_up."),
          corpus: Path = typer.Option(Path("tests/data/playtests.jsonl"), help="The corpus to add the row to.")) -> None:
    """Add a reviewed episode to a playtest corpus (docs/benchmark.md, Playtests)."""
    from sttgym.evaluation.runner import TRAJECTORIES, load_records
    from sttgym.play import ActionError, agrees, reviewed

    record = load_records(run_dir / TRAJECTORIES).get(episode)
    try:
        if record is None:
            raise ActionError(f"no episode {episode} in {run_dir / TRAJECTORIES}"
                              + _known(load_records(run_dir / TRAJECTORIES)))
        if record.get("agent") == reviewer:
            raise ActionError("the reviewer must not be the player")
        row = reviewed(record, verdict, reason, reviewer, category)
    except ActionError as exc:
        _fail(exc)
    with corpus.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    agree, reward = agrees(row)
    typer.echo(f"added to {corpus}: scored {reward:.3f}, " + ("agrees with the review" if agree else
               "DISAGREES with the review: a benchmark defect to fix (never the label)"))


@play_app.command("stats")
def stats(corpus: Path = typer.Argument(Path("tests/data/playtests.jsonl"), help="A reviewed corpus (JSON lines)."),
          manifest: Optional[str] = typer.Option(None, help="Only the rows whose instance is this manifest's (the same "
                                                            "id, seed and task digest)."),
          json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the figures as JSON here.")) -> None:
    """Reviewed Pass@1 of a corpus per level (beside the paper's strongest model), per conflict type and per
    domain, with 95% intervals, and its failures by category."""
    from sttgym.play import ActionError, corpus_stats, stats_markdown

    try:
        lines = corpus.read_text(encoding="utf-8").splitlines() if corpus.is_file() else None
        if lines is None:
            raise ActionError(f"no corpus at {corpus}")
        rows = []
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ActionError(f"{corpus} line {number} is not JSON: {exc.msg}") from None
        figures = corpus_stats(rows, manifest)
        if not figures["episodes"]:
            raise ActionError(f"no rows of {corpus} are instances of {manifest}" if manifest else f"{corpus} is empty")
    except (ActionError, ValueError) as exc:
        _fail(exc)
    typer.echo(stats_markdown(figures))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(figures, indent=1), encoding="utf-8")


def _prompt(session: Path) -> None:
    """The interactive loop: actions as for step, and :tools and :quit."""
    from sttgym.play import ActionError, Session, replay, step as take, tool_cards

    typer.echo("\nAt the prompt: a tool call (`name key=value ...` or JSON), `Task Completed` to finish, "
               ":tools to list the tools again, :quit to stop (the session stays; sttgym play step goes on).")
    while True:
        try:
            line = input("> ").strip()
        except EOFError:
            return
        if line in (":quit", ":q"):
            return
        if line == ":tools":
            saved = Session.load(session)
            typer.echo(tool_cards(replay(saved.env_id, saved.seed, []).tools))
            continue
        if not line:
            continue
        try:
            said = take(session, line)
        except ActionError as exc:
            typer.echo(f"error: {exc}")
            continue
        first, _, rest = said.partition("\n")
        try:
            first = json.dumps(json.loads(first), indent=2, ensure_ascii=False)  # the same result, easier to read
        except json.JSONDecodeError:
            pass
        typer.echo(first + ("\n" + rest if rest else ""))
        if Session.load(session).recorded:
            return
