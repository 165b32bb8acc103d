"""Rows grouped by the values of a few columns, as integers: each row's group number and
each group's key once. The views group a window's thousands of jobs or rows by a few text
and time columns (framework, hardware, suite, night) to look a few hundred keys up;
numbering the columns' values and the combinations costs a fraction of a pandas grouping
or of a tuple per row."""
from __future__ import annotations

import numpy as np
import pandas as pd


def key_codes(*columns) -> np.ndarray:
    """One integer per distinct combination of the columns' values (Series or arrays of one
    length), numbered by first appearance, a missing value being a value of its own: a key
    to group on without grouping text."""
    out = np.zeros(len(columns[0]), np.int64)
    for column in columns:
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
        out = pd.factorize(out * max(len(uniques), 1) + codes)[0]  # stays small
    return out


def first_rows(values) -> tuple[np.ndarray, np.ndarray]:
    """Each value's number (in order of first appearance, as `key_codes` numbers them) and
    each number's first row, for values with none missing (ids): a missing value would be
    numbered -1 here, not as a value of its own as in `key_codes`."""
    number = pd.factorize(values)[0]
    # numbered by first appearance: a row is its value's first where its number is new
    new = np.r_[True, number[1:] > np.maximum.accumulate(number)[:-1]] if len(number) else []
    return number, np.flatnonzero(new)


def groups(*columns: pd.Series) -> tuple[np.ndarray, list[tuple]]:
    """Each row's group number over these columns (of one length; a missing value is a value
    of its own) and each group's key as a tuple of the columns' values, the groups in order
    of their keys' codes (each column's values numbered in order of first appearance)."""
    codes, uniques = zip(*(pd.factorize(c, use_na_sentinel=False) for c in columns))
    flat = np.zeros(len(columns[0]), np.int64)
    for c, u in zip(codes, uniques):
        flat = flat * max(len(u), 1) + c
    _, first, group = np.unique(flat, return_index=True, return_inverse=True)
    # each column's values taken once for all the groups (a value boxed at a time cost more)
    keys = list(zip(*(u.take(c[first]).tolist() for c, u in zip(codes, uniques))))
    return group.ravel(), keys


def members(number: np.ndarray) -> list[np.ndarray]:
    """Each group's row positions, ascending, the groups in order of their numbers (each
    row's group number, as `key_codes` and `groups` give them): a group's rows read by
    position, without a pandas grouping."""
    if not len(number):
        return []
    order = np.argsort(number, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(number[order])) + 1)


def distinct(*columns: pd.Series) -> list[tuple]:
    """The distinct rows of these columns, as tuples of their values (`groups`' keys)."""
    return groups(*columns)[1] if len(columns[0]) else []
