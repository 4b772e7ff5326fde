"""Upstream Triton 3.6's printed TTIR/TTGIR parses, verifies and round-trips."""

from __future__ import annotations

import pathlib

import pytest

from tritium.ir.parser import parse_module
from tritium.ir.printer import print_ir

REF = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "upstream"
FILES = sorted(REF.glob("*.ttir")) + sorted(REF.glob("*.ttgir"))


def test_reference_files_present():
    assert len(FILES) >= 6


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("locations", [False, True])
def test_parse_and_round_trip(path, locations):
    module = parse_module(path.read_text(), str(path))
    text = print_ir(module, locations=locations)
    again = print_ir(parse_module(text), locations=locations)
    assert text == again
