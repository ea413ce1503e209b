"""The read commands' plain command lines are parsed without argparse (``cli.fast_args``):
the namespace must be the one argparse makes, and whatever it does not parse exactly (help,
options with values, abbreviations, misspellings, wrong counts) is left to argparse."""

from __future__ import annotations

import itertools

import pytest

from inspector import cli

PLAIN = [
    ["runs", "s.db"], ["runs", "s.db", "--json"], ["runs", "--json", "s.db"], ["-v", "runs", "s.db"],
    ["--verbose", "-v", "runs", "s.db", "--json", "--json"],
    ["checkpoints", "s.db", "run-1"], ["checkpoints", "--json", "s.db", "run-1"],
    ["show", "s.db", "run:5"], ["show", "s.db", "run:5", "--json"], ["show", "", "x"],
    ["show", "postgresql://u@h/db", "abc"], ["show", "s.db", "run:-1"], ["info", "s.db"], ["info", "s.db", "--json"],
    ["diff", "s.db", "r:1", "r:2"], ["diff", "s.db", "r:1", "r:2", "--json", "--exit-code"],
    ["diff", "--exit-code", "s.db", "r:1", "r:2"], ["-v", "diff", "s.db", "a", "b", "--json"],
]

# left to argparse: it parses these (values, abbreviations, "--") or refuses them
FOR_ARGPARSE = [
    ["runs"], ["runs", "a", "b"], ["runs", "s.db", "--js"], ["runs", "s.db", "--filter", "x"],
    ["runs", "s.db", "--status=done"], ["runs", "--", "s.db"], ["runs", "s.db", "-h"], ["runs", "--help"],
    ["show", "s.db", "-1"], ["show", "s.db"], ["show", "s.db", "x", "--max-nodes", "5"],
    ["checkpoints", "s.db", "r", "--jsn"], ["diff", "s.db", "a"], ["diff", "s.db", "a", "b", "--limit", "3"],
    ["diff", "s.db", "a", "b", "-"], ["-vv", "runs", "s.db"], ["--version"], [], ["runs", "s.db", "-v"],
    ["open", "s.db"], ["stuck", "s.db"], ["rusn", "s.db"], ["s.db"],
]


def _argparse(argv: list[str]) -> dict:
    parser = cli.build_parser(cli._wanted(argv))
    return vars(parser.parse_args(argv))


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_a_plain_read_command_line_gives_argparses_namespace(argv: list[str]) -> None:
    fast = cli.fast_args(argv)
    assert fast is not None
    assert vars(fast) == _argparse(argv)
    assert list(vars(fast)) and fast.func.__module__ == f"inspector.commands.{fast.command}"


@pytest.mark.parametrize("argv", FOR_ARGPARSE, ids=lambda a: " ".join(a) or "(empty)")
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert cli.fast_args(argv) is None


def test_every_combination_of_a_commands_flags_matches() -> None:
    for command, (positionals, flags, _defaults) in cli._FAST.items():
        names = [f"p{i}" for i in range(len(positionals))]
        for count in range(len(flags) + 1):
            for chosen in itertools.combinations(flags, count):
                for argv in ([command, *names, *chosen], [command, *chosen, *names]):
                    fast = cli.fast_args(argv)
                    assert fast is not None and vars(fast) == _argparse(argv), argv


def test_main_on_a_plain_line_runs_the_command_and_its_errors_say_one_sentence(tmp_path, capsys) -> None:
    missing = str(tmp_path / "missing.db")
    assert cli.main(["show", missing, "r:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("checkpoint-inspector: ") and err.count("\n") == 1
