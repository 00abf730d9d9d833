"""The typer application every command module attaches to, and its progress display."""

import time
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

app = typer.Typer(help="sttgym: spatio-temporal tool-use environments for LLM agents.", no_args_is_help=True,
                  add_completion=False, context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        from sttgym import __version__

        typer.echo(f"sttgym {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                      help="Print the version and exit.")) -> None:
    """sttgym: spatio-temporal tool-use environments for LLM agents."""
    from sttgym.registry import load_plugins

    _, failed = load_plugins()  # domains of installed packages, so every command sees them
    for name, why in failed.items():
        typer.echo(f"warning: the sttgym.domains plugin {name!r} failed to load ({why})", err=True)


class _LogProgress:
    """Progress for a log (CI, a pipe, nohup): a line at every tenth of the work or every 30 seconds."""

    EVERY = 30.0

    def __init__(self, console: Console):
        self.console, self.tasks, self.started = console, {}, time.monotonic()

    def __enter__(self) -> "_LogProgress":
        return self

    def __exit__(self, *exc: Any) -> None:
        for task in self.tasks.values():
            if task["completed"] != task["said"]:
                self._say(task)

    def add_task(self, description: str, total: float | None = None) -> int:
        self.tasks[len(self.tasks)] = {"description": description, "total": total, "completed": 0, "said": 0,
                                       "at": time.monotonic()}
        return len(self.tasks) - 1

    def update(self, task_id: int, advance: float = 0, completed: float | None = None, total: float | None = None,
               description: str | None = None) -> None:
        task = self.tasks[task_id]
        task["completed"] = completed if completed is not None else task["completed"] + advance
        task.update({k: v for k, v in (("total", total), ("description", description)) if v is not None})
        step = (task["total"] or 0) / 10
        if (step and task["completed"] - task["said"] >= step) or time.monotonic() - task["at"] >= self.EVERY:
            self._say(task)

    def _say(self, task: dict) -> None:
        total = f"/{task['total']:g}" if task["total"] else ""
        elapsed = time.strftime("%H:%M:%S", time.gmtime(time.monotonic() - self.started))
        self.console.print(f"{task['description']}: {task['completed']:g}{total} ({elapsed})", soft_wrap=True)
        task["said"], task["at"] = task["completed"], time.monotonic()


def make_console() -> Console:
    """Rich's console: on a terminal, its width; piped to a file or a log, wide enough that tables stay whole
    instead of being cut to 80 columns."""
    console = Console()
    return console if console.is_terminal else Console(width=240)  # a pipe has no width: tables stay whole


def progress(console: Console) -> Any:
    """A progress bar on a terminal, log lines anywhere else (so long work never looks stuck)."""
    if console.is_terminal:
        return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=True)
    return _LogProgress(console)
