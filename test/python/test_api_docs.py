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


def test_the_readmes_cpp_example_is_the_one_a_test_compiles():
    # scripts/check-embed compiles and runs Kernel.h's example; the README
    # shows the same code.
    header = (README.parent / "include/picokernel/Kernel/Kernel.h").read_text()
    example = []
    for line in header.splitlines()[1:]:
        if not line.startswith("//"):
            break
        if line.startswith("//   "):
            example.append(line[5:])
        elif example:
            break
    (block,) = re.findall(r"```cpp\n(.*?)```", README.read_text(), re.S)
    code = [line for line in block.splitlines()
            if line and not line.startswith("#include")]
    assert code == example
