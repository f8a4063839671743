"""Generic dependency graphs: ``Graph`` (dag.py) and its text/DOT renderings (render.py).

Imports: kiln.core and the stdlib only.
"""

from kiln.graph.dag import Graph, cycle_error
from kiln.graph.render import dot_quote, render_dot, render_text

__all__ = ["Graph", "cycle_error", "dot_quote", "render_dot", "render_text"]
