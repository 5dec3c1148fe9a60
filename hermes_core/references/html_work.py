"""One work budget for reading one HTML page, so no page can cost unbounded CPU.

Why: ``@url:`` reads markup written by whoever controls the page, after the fetch deadline
has ended. Markup can be built to make a reader slow: thousands of style rules tested
against every element, an end tag that walks a deep stack of open elements again and again,
an unfinished construct the standard parser scans again on every feed. Each of those steps
is counted here in work units (a character fed, a rule tested, a stack step); past the
budget the reader stops and the page is withheld with a warning, rather than read in part
or read for minutes. Counting work, not seconds, keeps the verdict the same on any machine.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BASE_UNITS", "RULE_TEST", "UNITS_PER_CHAR", "TooMuchWork", "WorkBudget"]

#: Work any page may take, however short.
BASE_UNITS: Final = 2_000_000
#: Further work allowed per character of the page: a benign page takes two or three.
UNITS_PER_CHAR: Final = 16
#: Units one stylesheet rule tested against one element costs (a character fed, a stack
#: step cost one: a rule test takes several times as long).
RULE_TEST: Final = 16


class TooMuchWork(Exception):
    """Reading the page would take more work than its budget allows."""


class WorkBudget:
    """Counts work units; :meth:`spend` raises :class:`TooMuchWork` past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent = 0

    @classmethod
    def for_page(cls, page: str) -> WorkBudget:
        """The budget for reading ``page``: a base plus a share for each character."""
        return cls(BASE_UNITS + UNITS_PER_CHAR * len(page))

    def spend(self, units: int) -> None:
        self.spent += units
        if self.spent > self.limit:
            raise TooMuchWork(
                f"reading the page took more than {self.limit:,} work units (its markup is "
                "built to be slow to read)"
            )
