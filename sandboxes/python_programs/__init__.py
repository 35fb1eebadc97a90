"""Model-written Python programs: the pieces the code, AZR and robot families all need to judge one.

Shared here, beside the sandbox that runs the programs, so that no env family imports another (issue 39; the
import graph is enforced by tests/core/test_import_graph.py). Nothing in it knows a family's tasks or rewards.

- `plain_values`: the only form in which values cross the sandbox boundary (stdlib only; its text is sent into
  the sandbox as the first part of a job script, `plain_values.source()`).
- `job_lines`: reading a call job's output lines back on the trusted side.
- `fences`: locating fenced code blocks in a response.
- `findings`, `style`, `security`: static findings on a program (ruff and bandit-style rules; never executed).
- `token_credit`: penalty spans on the response text and their mapping to tokens.
"""
