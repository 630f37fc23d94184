"""The command-line help the examples share: the script's whole docstring as the description
(its lines kept as written), and each option's default after its help, except where the default
is None: that option's help says what happens without it."""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown (but not a None one), the description's lines as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def parser_for(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser whose --help shows `doc` whole and every default."""
    return argparse.ArgumentParser(description=doc, formatter_class=HelpFormatter)
