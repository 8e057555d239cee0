"""Issue 20, item 10: the README's examples run: its API section's
doctests, and its other Python blocks as scripts. (The seed post's kernel
and listing: test_api_listing.py.)"""

import doctest
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_the_api_sections_doctests():
    failures, attempted = doctest.testfile(
        str(README), module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert attempted > 20
    assert failures == 0


BLOCKS = [block for block in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
          if not block.lstrip().startswith(">>>")]


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_the_readmes_python_blocks_run(block, capsys):
    exec(compile(block, str(README), "exec"), {})
    assert capsys.readouterr().out
