"""The party-variant flags shared by ``inspect``, ``compose`` and ``run``."""

from __future__ import annotations

import argparse

from ..core.prompt import PARTY_PHASES

_HELP = {
    "kickoff": "Party Kickoff: Winston, Amelia and Murat discuss the story before dev",
    "review": "Party Review: Winston, Murat and Amelia review in character and agree",
    "failure": "Party Failure Analysis: Winston, Amelia and Bob assess a failure",
    "retro": "Party Retrospective: the agents discuss the epic",
}


def add_variant_options(parser: argparse.ArgumentParser, *, auto: bool = False) -> None:
    """``--party-kickoff``, ``--party-review``, ``--party-failure``, ``--party-retro`` and
    ``--standard``; with ``auto``, the help says the flags also opt a phase into ``--auto``."""
    group = parser.add_argument_group("variants (seed 002's party mode)")
    for phase in PARTY_PHASES:
        extra = " (with --auto: also run it)" if auto and phase != "review" else ""
        group.add_argument(
            f"--party-{phase}",
            action="store_true",
            help=_HELP[phase] + extra,
        )
    group.add_argument(
        "--standard",
        action="store_true",
        help="compose the standard variant even where [party] in the config makes party the "
        "default",
    )


def party_phases(args: argparse.Namespace) -> frozenset[str]:
    """The phases given a ``--party-<phase>`` flag."""
    return frozenset(p for p in PARTY_PHASES if getattr(args, f"party_{p}", False))


def ignored_variant_flags(args: argparse.Namespace, phase: str) -> str | None:
    """A warning when ``--party-<phase>`` flags name phases other than the one composed
    (they change nothing then), or None."""
    ignored = sorted(party_phases(args) - {phase})
    if not ignored:
        return None
    flags = ", ".join(f"--party-{p}" for p in ignored)
    return f"{flags} changes nothing when composing the {phase} phase (--phase {ignored[0]})"


def variant_from(args: argparse.Namespace, phase: str) -> str | None:
    """The variant the flags ask for ``phase``: ``party``, ``standard``, or None (the
    workspace's default)."""
    if phase in party_phases(args):
        return "party"
    if getattr(args, "standard", False):
        return "standard"
    return None
