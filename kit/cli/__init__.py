"""``ckit``: the command line. The one place where ``KitError`` becomes a message and exit code.

Each ``kit/cli/cmd_<name>.py`` module registers the command ``name`` through
``register(subparsers)``; the parser it adds sets ``handler`` to a function taking the parsed
args and returning an exit code. A command line imports only its own command's module.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

import kit
from kit.errors import ExitCode, KitError
from kit.paths import VENDORS_DIR_VARIABLE
from kit.printable import printable
from kit.standard.catalogue import carried_versions


def _command_modules() -> list[str]:
    package = importlib.import_module("kit.cli")
    names = [m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("cmd_")]
    return [f"kit.cli.{name}" for name in sorted(names)]


#: Options that act before any command is parsed: with one of them first, every command is
#: registered (the help lists them all).
_WHOLE_PARSER_OPTIONS = frozenset({"-h", "--help", "--version"})


def command_module(command: str) -> str:
    """The module registering ``command``: each ``cmd_<name>`` registers the command ``name``."""
    return f"kit.cli.cmd_{command.replace('-', '_')}"


def _named_command_module(argv: Sequence[str]) -> str | None:
    """The module of the command ``argv`` names, found without importing any other (a command
    imports what it needs: about a second of CPU for them all); None where ``argv`` names none
    that exists (the help, a typo: the whole parser then lists every command)."""
    tokens = iter(argv)
    for token in tokens:
        if token in _WHOLE_PARSER_OPTIONS:
            return None
        if token == "--vendors-dir":
            next(tokens, None)
        elif not token.startswith("-"):
            module = command_module(token)
            return module if module in _command_modules() else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or with ``only`` that one module's."""
    parser = argparse.ArgumentParser(
        prog="ckit",
        description=(
            f"Accelerator Conformance Kit {kit.__version__} "
            f"(standards {', '.join(carried_versions()) or 'none'}; `ckit version` names the one "
            "a run uses and its PyTorch release)"
        ),
        epilog="Example: ckit run --vendor cpu --out results/cpu",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ckit {kit.__version__}")
    parser.add_argument(
        "--vendors-dir", type=Path, metavar="DIR",
        help="where vendor profiles live (<DIR>/<id>/vendor.yaml), e.g. a directory of your own "
        "repository (default: $CKIT_VENDORS_DIR, else the kit's vendors/)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in _command_modules() if only is None else [only]:
        importlib.import_module(module_name).register(subparsers)
    return parser


def example_epilog(*examples: str) -> str:
    """The ``--help`` footer every command carries."""
    lines = "\n".join(f"  {example}" for example in examples)
    return f"example{'s' if len(examples) > 1 else ''}:\n{lines}"


def add_command(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    help_text: str,
    examples: Sequence[str],
) -> argparse.ArgumentParser:
    return subparsers.add_parser(  # type: ignore[no-any-return]
        name,
        help=help_text,
        description=help_text,
        epilog=example_epilog(*examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def help_when_no_action(parser: argparse.ArgumentParser) -> None:
    """A command given none of its actions prints its help on stderr and exits as misused."""

    def usage(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return int(ExitCode.USAGE_ERROR)

    parser.set_defaults(handler=usage)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_named_command_module(arguments))
    args = parser.parse_args(arguments)
    if args.vendors_dir is not None:
        # Through the environment, so the run's workers and judge see the same profiles.
        os.environ[VENDORS_DIR_VARIABLE] = str(args.vendors_dir.resolve())
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return ExitCode.USAGE_ERROR
    try:
        return int(handler(args))
    except KitError as error:
        # Messages quote paths and report fields: no control character reaches the terminal.
        print(f"ckit: error: {printable(str(error))}", file=sys.stderr)
        return int(error.exit_code)
    except BrokenPipeError:
        # The reader went away (`ckit show ... | head`): what it wanted was printed.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the exit-time flush quiet
        return int(ExitCode.OK)
    except KeyboardInterrupt:
        print("ckit: interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as error:  # noqa: BLE001 - the kit's own bug: still one line, own code
        if os.environ.get("CKIT_DEBUG"):
            raise
        first_line = (str(error).strip().splitlines() or [""])[0]
        print(
            f"ckit: internal error (a bug in the kit; CKIT_DEBUG=1 shows the traceback): "
            f"{type(error).__name__}: {first_line}",
            file=sys.stderr,
        )
        return int(ExitCode.KIT_CRASHED)
