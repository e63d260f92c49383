"""What the recorders' tests share: a module of prices whose every kind of line (a loop,
a guard, a generator, a decorator) a recorder must see run."""

from __future__ import annotations

PRICES = '''\
def total(items):
    sum_ = 0
    for item in items:
        sum_ += item
    return sum_


def guard(amount):
    if amount < 0:
        return "refuse"
    return "ok"


def evens(n):
    for i in range(n):
        if i % 2 == 0:
            yield i


def register(f):
    return f


@register
def registered():
    return total([1])


LIMIT = total([4, 5])
'''
