"""The money line, written once: what a grid (or the Studio's one request) will cost before
anything is sent.

``{count} {unit}s ({invalid} invalid): {earlier parts}, {n} to send: {price}``, where
``{price}`` is ``N credits estimated`` (with how many have no published price), or
``no published price, so no estimate`` when none has one ("0 credits estimated" would read as
free). ``to send`` is said only when it is not every cell.

Example:
    >>> money_line(2, unit="run", sending=[240, 240])
    '2 runs: 480 credits estimated'
    >>> money_line(8, unit="cell", earlier=["3 still running"], sending=[400] * 5)
    '8 cells: 3 still running, 5 to send: 2,000 credits estimated'
    >>> money_line(1, unit="run", invalid=1, sending=[])
    '1 run (1 invalid): nothing to send'
"""

from __future__ import annotations

from collections.abc import Sequence


def count(n: int, unit: str) -> str:
    """``1 run``, ``1,200 runs``.

    Example:
        >>> count(1, "cell"), count(1200, "cell")
        ('1 cell', '1,200 cells')
    """
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def price_text(credits: Sequence[int | None], unit: str = "run") -> str:
    """What ``credits`` (one price per request; None where none is published) cost together.

    Example:
        >>> price_text([400]), price_text([None]), price_text([400, None], "cell")
        ('400 credits estimated', 'no published price, so no estimate', '400 credits estimated; 1 cell has no published price')
    """  # noqa: E501
    unpriced = sum(c is None for c in credits)
    if credits and unpriced == len(credits):
        return "no published price, so no estimate"
    text = f"{sum(c or 0 for c in credits):,} credits estimated"
    if unpriced:
        text += f"; {count(unpriced, unit)} {'has' if unpriced == 1 else 'have'} no published price"
    return text


def money_line(
    total: int,
    *,
    unit: str,
    sending: Sequence[int | None],
    invalid: int = 0,
    earlier: Sequence[str] = (),
) -> str:
    """The line for a grid of ``total`` cells, ``invalid`` of them refused by the catalog,
    ``earlier`` what an earlier run already settled (e.g. ``"6 done earlier"``), and
    ``sending`` the price of each cell to send now.

    Example:
        >>> money_line(6, unit="run", invalid=3, sending=[200, 200, None])
        '6 runs (3 invalid): 3 to send: 400 credits estimated; 1 run has no published price'
        >>> money_line(8, unit="cell", earlier=["8 done earlier"], sending=[])
        '8 cells: 8 done earlier, nothing to send'
    """
    head = count(total, unit) + (f" ({invalid:,} invalid)" if invalid else "")
    parts = list(earlier)
    if not sending:
        parts.append("nothing to send")
    elif len(sending) == total:
        parts.append(price_text(sending, unit))
    else:
        price = price_text(sending, unit)
        joint = ", with " if price.startswith("no published") else ": "
        parts.append(f"{len(sending):,} to send{joint}{price}")
    return f"{head}: {', '.join(parts)}"
