"""The parse and imports stages as pure rules: which block of a reply is taken,
what is kept of it, the exact messages of each failure, and which imports a
task's import lines allow."""

from __future__ import annotations

import pytest

from fembench_agents.scoring.extraction import (
    ParsedCode,
    allowed_modules,
    check_imports,
    code_blocks,
    parse_code,
)

F = "def f(x):\n    return x\n"
G = "def g(x):\n    return 2 * x\n"


def test_code_blocks_are_python_or_unlabelled_in_order() -> None:
    text = (
        "```python\nA = 1\n```\n```bash\nls\n```\n```\nB = 2\n```\n```py title\nC = 3\n```\n"
        "```Python3\nD = 4\n```\n```json\n{}\n```\n```python\nE = 5"
    )
    assert code_blocks(text) == ["A = 1\n", "B = 2\n", "C = 3\n", "D = 4\n", "E = 5"]
    # an empty block is a block: the next one starts at its own fence
    assert code_blocks(f"```python\n```\nthen\n```python\n{F}```") == ["", F]


def test_the_block_defining_the_wanted_function_is_taken() -> None:
    text = f"```python\n{G}```\nand then\n```python\n{F}```\n```python\nX = 1\n```"
    parsed = parse_code(text, ("f",))
    assert (parsed.functions, parsed.error) == (("f",), None)
    assert parsed.code == "def f(x):\n    return x"


def test_of_two_blocks_defining_the_function_the_later_one_wins() -> None:
    text = f"```python\n{F}```\nfixed:\n```python\ndef f(x):\n    return -x\n```"
    assert parse_code(text, ("f",)).code == "def f(x):\n    return -x"


def test_the_block_defining_more_wanted_functions_wins_over_a_later_one() -> None:
    text = f"```python\n{F}{G}```\n```python\n{G}```"
    assert parse_code(text, ("f", "g")).functions == ("f", "g")


def test_without_a_defining_block_all_blocks_are_joined() -> None:
    text = "```python\nimport numpy as np\n```\n```python\nK = 3\n```"
    assert parse_code(text, ()).code == "import numpy as np\nK = 3"
    missing = parse_code(text, ("f",))
    assert missing == ParsedCode(
        "import numpy as np\nK = 3", (), "no function named 'f' is defined", "missing_function"
    )


def test_only_definitions_imports_and_constants_are_kept() -> None:
    text = (
        "import numpy as np\nfrom math import pi\nK: int = 3\nL = 4\nprint('demo')\nf(1)\n"
        "if __name__ == '__main__':\n    f(2)\nclass C:\n    pass\nasync def h():\n    pass\n"
        + F
        + "for i in range(3):\n    pass\n"
    )
    parsed = parse_code(text, ("f",))
    assert parsed.code == (
        "import numpy as np\nfrom math import pi\nK: int = 3\nL = 4\n\nclass C:\n    pass\n\n"
        "async def h():\n    pass\n\ndef f(x):\n    return x"
    )
    assert parsed.functions == ("h", "f")


@pytest.mark.parametrize(
    ("text", "error", "reason", "line"),
    [
        ("", "the reply contains no code", "empty_reply", None),
        ("  \n\t", "the reply contains no code", "empty_reply", None),
        ("def f(x)\n    return x\n", "SyntaxError: expected ':' (line 1)", "syntax_error", 1),
        (
            "X = 1\ndef f(x):\nreturn x\n",
            "SyntaxError: expected an indented block after function definition on line 2 (line 3)",
            "syntax_error",
            3,
        ),
        (G, "no function named 'f' is defined", "missing_function", None),
    ],
)
def test_parse_failures_name_the_problem(text: str, error: str, reason: str, line: int | None) -> None:
    parsed = parse_code(text, ("f",))
    assert (parsed.error, parsed.reason, parsed.line) == (error, reason, line)


def test_a_test_suite_needs_a_test_function() -> None:
    none = parse_code("def helper():\n    pass\n", (), prefix="test_")
    assert (none.error, none.reason, none.functions) == (
        "no function whose name starts with 'test_'",
        "missing_function",
        ("helper",),
    )
    assert none.code == "def helper():\n    pass"
    some = parse_code("def helper():\n    pass\ndef test_a(fcn):\n    pass\n", (), prefix="test_")
    assert (some.error, some.functions) == (None, ("helper", "test_a"))


def test_allowed_modules_come_from_the_task_import_lines() -> None:
    lines = [
        "import numpy as np",
        "import scipy.linalg",
        "from math import pi, sqrt",
        "import os, sys",
        "from . import local",
        "not python at all (",
        "from pkg.sub import x",
    ]
    assert allowed_modules(lines) == {"__future__", "numpy", "scipy", "math", "os", "sys", "pkg"}
    assert allowed_modules([]) == {"__future__"}


@pytest.mark.parametrize(
    ("code", "disallowed"),
    [
        (
            "import numpy as np\nimport numpy.linalg\nfrom numpy import linalg\nfrom numpy.linalg import inv\n"
            "from __future__ import annotations\n",
            (),
        ),
        ("import os\nimport sys, numpy\n", ("import os", "import sys")),
        ("import os.path\n", ("import os.path",)),
        ("from os import path\nfrom os.path import join\n", ("from os import ...", "from os.path import ...")),
        ("from . import numpy\nfrom ..numpy import x\n", ("from . import ...", "from ..numpy import ...")),
        ("x = __import__('os')\n", ("dynamic import via __import__",)),
        ("x = importlib.import_module('os')\n", ("dynamic import via .import_module", "dynamic import via importlib")),
        ("x = builtins.__import__('os')\n", ("dynamic import via .__import__",)),
        ("def f():\n    import os\n    import os\n", ("import os",)),
    ],
)
def test_imports_are_checked_against_the_allowed_modules(code: str, disallowed: tuple[str, ...]) -> None:
    check = check_imports(code, ["import numpy as np"])
    assert check.disallowed == disallowed
    assert check.ok is (not disallowed)


def test_a_failed_parse_keeps_what_it_read() -> None:
    # what the optimizer's reflection shows as the attempt's code
    assert parse_code("", ("f",)) == ParsedCode("", (), "the reply contains no code", "empty_reply")
    broken = "Here:\n```python\ndef f(x)\n    return x\n```\n"
    assert parse_code(broken, ("f",)) == ParsedCode(
        "def f(x)\n    return x\n", (), "SyntaxError: expected ':' (line 1)", "syntax_error", 1
    )
