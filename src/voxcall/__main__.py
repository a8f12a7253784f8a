"""``python -m voxcall``: the same command line as ``voxcall``."""

from voxcall.cli import app

if __name__ == "__main__":
    app(prog_name="voxcall")
