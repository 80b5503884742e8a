"""The placing methods: one strategy module each, registered here one line per method.

A results file names a window's method by its `Method` value (results/model.py); the registry maps
that value to the method's strategy, which every caller asks instead of naming a member.
"""

from __future__ import annotations

from pywebbench.results.methods.auto import AUTO
from pywebbench.results.methods.duet import DUET
from pywebbench.results.methods.interleaved import INTERLEAVED
from pywebbench.results.methods.restart import RESTART
from pywebbench.results.methods.strategy import MethodStrategy as MethodStrategy
from pywebbench.results.methods.strategy import register, registered as registered, strategy_of as strategy_of

register(INTERLEAVED)
register(DUET)
register(RESTART)
register(AUTO)
