"""The typer application every command module attaches to."""

import typer

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
