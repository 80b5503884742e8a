"""What every command that runs a benchmark reads first: its flags, its options from every
source (config file, environment, flags, preset), its knobs, and stack globs."""

from __future__ import annotations

import argparse
import fnmatch
import os

from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import Catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.declared import Command, declared, flags_of
from pywebbench.plan.knobs import knob_args
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sources import from_sources
from pywebbench.plan.presets import Preset, get_preset, preset_options


def stack_glob(catalog: Catalog, pattern: str) -> list[Stack]:
    found = [s for s in catalog.stacks if fnmatch.fnmatchcase(s.id, pattern)]
    if not found:
        found = [catalog.resolve(pattern)]
    return found


def command_flags(args: argparse.Namespace) -> dict[str, object]:
    command = Command(args.command)
    flags = flags_of(args, command)
    for option in declared(command):
        # argparse reads `--warmup=--` as "no value" and hands over an empty list
        if isinstance(flags.get(option.field), list):
            raise UserError(f"{option.flag} needs a value")
    return flags


def command_options(args: argparse.Namespace,
                    extra_flags: dict[str, object] | None = None) -> tuple[RunOptions, str | None]:
    refused: list[str] = getattr(args, "refused", [])  # the flags cli.main found bad, named first
    try:
        preset = get_preset(args.preset) if getattr(args, "preset", None) else None
        flags = {**command_flags(args), **(extra_flags or {})}
        options = from_sources(config_file=args.config, environ=os.environ, flags=flags,
                               preset=preset_options(preset) if preset else None)
    except UserError as exc:  # with the flags' problems: every problem of the command line at once
        raise UserError("\n".join(dict.fromkeys(refused + exc.problems))) from None
    if refused:
        raise UserError("\n".join(refused))
    return options, preset.name if preset else None


def preset_knobs(preset: Preset) -> tuple[str, ...]:
    return knob_args(preset.grid)


def options_and_knobs(args: argparse.Namespace) -> tuple[RunOptions, str | None, tuple[str, ...]]:
    """run's and sweep's options and knobs: one --rate is every window's, a list of them a rate
    axis of the sweep (a latency-versus-offered-load curve); a preset's grid comes first."""
    rates: tuple[float, ...] = args.rate or ()
    options, preset = command_options(args, {"rate": rates[0]} if len(rates) == 1 else {})
    knobs: tuple[str, ...] = tuple(getattr(args, "knobs", None) or ())
    if preset is not None:
        knobs = preset_knobs(get_preset(preset)) + knobs
    if len(rates) > 1:
        knobs += ("rate=" + ",".join(f"{r:g}" for r in rates),)
        if not options.generator.open_loop:
            raise UserError(f"an open-loop --rate needs --generator {options.generator.open_loop_names()} "
                            f"({options.generator} is closed-loop)")
    return options, preset, knobs
