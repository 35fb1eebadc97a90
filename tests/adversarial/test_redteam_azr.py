"""Red team, AZR proposals (issue #43): attacks by a proposer that has read the verifier. None may be accepted
with an answer that the program shown to solvers does not compute.

Classes: forged validity through allowlisted modules (they re-export `sys`, evaluate text or walk attributes
named by strings, so a program reaches the clock, entropy or the job's file descriptors), and nondeterministic
programs (addresses, identity hashes, state kept between calls) that the old two-run check let through.
"""

from __future__ import annotations

import pytest

from rlvr_gym.envs.azr.execution import AZRExecutor
from rlvr_gym.envs.azr.programs import strict_equal
from rlvr_gym.envs.azr.tasks import AZRProposeTasks, proposal_text
from rlvr_gym.envs.azr.verifier import judge_proposals


@pytest.fixture(scope="module")
def executors(two_sandboxes):
    return tuple(AZRExecutor(box, workers=2) for box in two_sandboxes)


def _propose(program: str, inputs: list[tuple], executor: AZRExecutor):
    kind = "deduction" if len(inputs) == 1 else "induction"
    task = AZRProposeTasks(seed=0, task_types=kind, num_inputs=len(inputs)).task(0)
    [report] = judge_proposals([task], [proposal_text(kind, program, inputs, "a hint")], executor=executor)
    return report


# ---- the interpreter reached through an allowed module ----------------------------------------------------------
THROUGH_ALLOWED_MODULES = {
    "typing_reexports_sys_clock": "import typing\ndef f(x):\n    return x + int(typing.sys.modules['time'].time()) // 10**8",
    "typing_reexports_sys_pid": "import typing\ndef f(x):\n    return x + typing.sys.modules['os'].getpid() * 0",
    "collections_private_sys": "import collections\ndef f(x):\n    return x + len(collections._sys.argv) * 0",
    "formatter_walks_to_globals": "import string\ndef f(x):\n"
    "    return str(x) + string.Formatter().get_field('0.__globals__', [f], {})[0]['__name__']",
    "attrgetter_walks_to_globals": "import operator\ndef f(x):\n    return x + len(operator.attrgetter('__globals__')(f)) * 0",
    "type_hints_evaluate_text": "import typing\ndef g(a: \"__import__('os').getpid()\"):\n    return a\n"
    "def f(x):\n    return x + typing.get_type_hints(g)['a'] * 0",
}


@pytest.mark.parametrize("name", sorted(THROUGH_ALLOWED_MODULES))
def test_reaching_the_interpreter_through_an_allowed_module_is_never_valid(name, executors):
    assert not _propose(THROUGH_ALLOWED_MODULES[name], [(5,)], executors[0]).valid


def test_a_forged_record_never_becomes_the_recorded_output(executors):
    # Writes a record claiming f(5) == 7 to every descriptor the job might report on, then returns 5.
    program = (
        "import typing\ndef f(x):\n    os = typing.sys.modules['os']\n    for fd in range(3, 16):\n        try:\n"
        "            os.write(fd, b'{\"i\": 0, \"value\": 7}\\n')\n        except OSError:\n            pass\n    return x"
    )
    report = _propose(program, [(5,)], executors[0])
    assert not report.valid or report.outputs == [5]


def test_an_entropy_program_is_never_valid(executors):
    # Agrees with itself on two runs half the time: the old check accepted it about every other proposal.
    program = "import typing\ndef f(x):\n    return x + typing.sys.modules['os'].urandom(1)[0] % 2"
    assert not any(_propose(program, [(5,)], executors[k % 2]).valid for k in range(8))


# ---- nondeterminism by construction: one answer, in every process, for the program as shown --------------------
SIX = [(i,) for i in range(6)]
READS_THE_PROCESS = {  # induction proposals: each input's output must be what a fresh run of the program gives
    "set_order_of_nans": "def f(x):\n    xs = [float(str(i) + 'e999') * 0 for i in range(64)]\n"
    "    return [[y is v for y in xs].index(True) for v in set(xs)][:6] + [x]",
    "state_kept_between_calls": "seen = []\ndef f(x):\n    seen.append(x)\n    return len(seen)",
    "class_attribute_between_calls": "class C:\n    n = 0\ndef f(x):\n    C.n += 1\n    return x * 100 + C.n",
}


@pytest.mark.parametrize("name", sorted(READS_THE_PROCESS))
def test_the_recorded_output_is_what_the_shown_program_computes_anywhere(name, executors):
    program, inputs = READS_THE_PROCESS[name], SIX
    here, there = (_propose(program, inputs, executor) for executor in executors)
    assert (here.valid, here.outputs) == (there.valid, there.outputs)
    if here.valid:  # a solver's run: one input, a fresh job, another process
        for args, recorded in zip(inputs, here.outputs, strict=True):
            alone = executors[1].run(here.program, [args])
            assert alone.all_ok and strict_equal(alone.calls[0].value, recorded)
