"""The Python example of the top-level README ("## Python binding") runs as a doctest."""

import doctest
import os
import re

from conftest import REPO


def readme_examples() -> str:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n## Python binding\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "no ```python block in the README's Python section"
    return "\n".join(blocks)


def test_readme_python_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(readme_examples(), {}, "README.md", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 5, runner.summarize()


def test_package_docstring_example():
    import shapepoly
    failures, tries = doctest.testmod(shapepoly, optionflags=doctest.ELLIPSIS)
    assert failures == 0 and tries > 0
