"""The typer application every command module attaches to."""

import typer

app = typer.Typer(help="sttgym: spatio-temporal tool-use environments for LLM agents.", no_args_is_help=True,
                  add_completion=False)
